"""``search:ismcts`` with a network: ``rollout=`` plays the playouts, batched; ``prior=`` adds a candidate."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agents.mlp import MLPPolicy
from agents.registry import make_agent
from agents.search import NetworkPlayouts, SearchAgent
from tonk_env.engine import is_over, legal_actions, make_rules, new_game, payoffs, seat_info
from tonk_env.obs import obs_layout, observation
from tonk_env.play import play, start_hand


def _net(path: Path, players: int = 2, seed: int = 0) -> Path:
    """A random (untrained) two-layer policy network saved as ``.npz``: any network will do here."""
    rng = np.random.default_rng(seed)
    size = obs_layout(players).size
    layers = [
        (rng.standard_normal((16, size)).astype(np.float32) * 0.3, np.zeros(16, np.float32)),
        (rng.standard_normal((540, 16)).astype(np.float32) * 0.3, np.zeros(540, np.float32)),
    ]
    MLPPolicy(layers, meta={"num_players": players, "rules_hash": make_rules().hash}).save_npz(path)
    return path


def _moves(spec: str, deal_seed: int, agent_seed: int = 3) -> list[tuple[int, int]]:
    """Every (seat, action) of one hand: the searcher in seat 0 against the expert."""
    rules = make_rules()
    seats = [make_agent(spec, seed=agent_seed), make_agent("heuristic:expert", seed=1)]
    s = new_game(rules, 2, seed=deal_seed)
    start_hand(seats, 2, rules, seeds=[agent_seed, 1])
    moves: list[tuple[int, int]] = []
    play(s, seats, on_move=lambda st, a: moves.append((st.cur, a)))  # the loop refuses illegal moves
    assert is_over(s)
    return moves


@pytest.mark.parametrize("param", ["rollout", "prior"])
def test_plays_legal_moves_and_is_deterministic_for_a_seed(tmp_path: Path, param: str) -> None:
    net = _net(tmp_path / "net.npz")
    spec = f"search:ismcts?budget=12&drop_samples=16&{param}=npz:{net}"
    for deal in (1, 2, 3):
        first = _moves(spec, deal)
        assert first == _moves(spec, deal)  # same seed, same hand: the same moves
        assert len(first) >= 1


def test_rollout_network_plays_every_playout_in_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    net = _net(tmp_path / "net.npz")
    batches: list[int] = []
    real = MLPPolicy.act_batch

    def counting(self: MLPPolicy, obs: dict[str, np.ndarray], infos: object = ()) -> list[int]:
        batches.append(len(obs["observation"]))
        return real(self, obs, infos)

    monkeypatch.setattr(MLPPolicy, "act_batch", counting)
    _moves(f"search:ismcts?budget=12&drop_samples=16&rollout=npz:{net}", 2)
    assert batches, "the network played no playout"
    assert max(batches) > 1, "playouts were not batched"


def test_network_playouts_finish_every_hand(tmp_path: Path) -> None:
    policy = MLPPolicy.load_npz(_net(tmp_path / "net.npz"))
    states = [new_game(make_rules(), 2, seed=k) for k in range(7)]
    on_core = NetworkPlayouts(policy).finish(states, seat=0)  # the core leaves the states alone
    assert not any(is_over(s) for s in states)
    values = NetworkPlayouts(policy, core=False).finish(states, seat=0)  # the engine plays them out
    assert all(is_over(s) for s in states)
    assert values == [s.result.payoffs[0] for s in states] == on_core


def test_the_rollout_changes_the_searched_values(tmp_path: Path) -> None:
    """With the same worlds, a network's playouts value the candidates otherwise than the fast policy."""
    net = _net(tmp_path / "net.npz")
    plain = SearchAgent(seed=5, budget=40)
    netted = SearchAgent(seed=5, budget=40, rollout=f"npz:{net}")
    s = new_game(make_rules(), 2, seed=11)
    info = seat_info(s, s.cur)
    cands = sorted(set(info.legal))[:3]
    values = []
    for agent in (plain, netted):
        agent.reseed(5)
        worlds, weights = agent.worlds(info, 40)
        values.append(agent.evaluate(info, cands, worlds, weights))
    assert values[0] != values[1]


@pytest.mark.parametrize(
    ("param", "value", "message"),
    [
        ("rollout", "heuristic:expert", "is not a policy network; allowed: zoo:NAME, npz:FILE, ppo:RUN"),
        ("prior", "random", "is not a policy network"),
        ("rollout", "zoo:no_such_agent", "unknown agent 'zoo:no_such_agent'"),
        ("rollout", "npz:/no/such/file.npz", "no such file"),
    ],
)
def test_a_bad_network_spec_is_named(param: str, value: str, message: str) -> None:
    with pytest.raises(ValueError, match="parameter " + param) as e:
        make_agent(f"search:ismcts?{param}={value}")
    assert message in str(e.value)


def test_a_network_for_another_table_is_refused(tmp_path: Path) -> None:
    net = _net(tmp_path / "net3.npz", players=3)
    agent = make_agent(f"search:ismcts?rollout=npz:{net}")
    with pytest.raises(ValueError, match="trained for 3 players"):
        start_hand([agent, make_agent("random")], 2, make_rules())


@pytest.mark.parametrize("players", [2, 3])
def test_core_playouts_pay_what_engine_playouts_pay(tmp_path: Path, players: int) -> None:
    """The network's playouts on the compiled core and on the engine: the same moves, the same payoffs."""
    net = make_agent(f"npz:{_net(tmp_path / 'net.npz', players)}", seed=0)
    rng = np.random.default_rng(players)
    states = []
    for k in range(40):
        s = new_game(make_rules(), players, seed=k)
        for _ in range(int(rng.integers(0, 9))):  # some positions mid-hand, some finished
            if is_over(s):
                break
            legal = legal_actions(s)
            s.play(legal[int(rng.integers(len(legal)))])
        states.append(s)
    for seat in range(players):
        engine = NetworkPlayouts(net, core=False).finish([s.copy() for s in states], seat)
        core = NetworkPlayouts(net, core=True).finish([s.copy() for s in states], seat)
        assert core == [float(x) for x in engine]
    assert any(v != 0 for v in engine) and not all(is_over(s) for s in states)


def _reference(state: object, seat: int, net: MLPPolicy, other: MLPPolicy) -> float:
    """One hand finished move by move on the engine: ``net`` plays ``seat``, ``other`` the rest."""
    s = state.copy()  # type: ignore[attr-defined]
    size = obs_layout(s.n).size
    while not is_over(s):
        obs = np.zeros((1, size), dtype=np.float32)
        observation(s, s.cur, obs[0])
        mask = np.zeros((1, s.table.size), dtype=np.int8)
        mask[0, legal_actions(s)] = 1
        s.play(int((net if s.cur == seat else other).act_batch({"observation": obs, "action_mask": mask})[0]))
    return float(payoffs(s)[seat])


@pytest.mark.parametrize("core", [True, False])
def test_an_opponent_network_plays_only_the_other_seats_of_its_playouts(tmp_path: Path, core: bool) -> None:
    """``against`` hands the other seats of chosen playouts to another network, never the valued seat."""
    net = make_agent(f"npz:{_net(tmp_path / 'a.npz')}", seed=0)
    other = make_agent(f"npz:{_net(tmp_path / 'b.npz', seed=5)}", seed=0)
    states = [new_game(make_rules(), 2, seed=k) for k in range(60)]
    plain = NetworkPlayouts(net, core=core).finish([s.copy() for s in states], 0)
    same = NetworkPlayouts(net, core=core, opponents=[net]).finish(
        [s.copy() for s in states], 0, against=[1] * 60
    )
    assert same == plain  # the same network as the opponent: the same playouts
    half = [k % 2 for k in range(60)]
    for seat in (0, 1):
        mixed = NetworkPlayouts(net, core=core, opponents=[other]).finish(
            [s.copy() for s in states], seat, against=half
        )
        want = [_reference(s, seat, net, net if k % 2 == 0 else other) for k, s in enumerate(states)]
        assert mixed == want
    assert [mixed[k] for k in range(1, 60, 2)] != [plain[k] for k in range(1, 60, 2)]
    with pytest.raises(ValueError, match="against: one of 0..1 per state"):
        NetworkPlayouts(net, core=core, opponents=[other]).finish(states[:2], 0, against=[2, 0])
