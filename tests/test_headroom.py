"""The headroom diagnostics (issue 27, item 3): peek agents (cheats) and the one-step improvement gap."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from agents.peek import PeekSearchAgent, is_peek_spec
from agents.registry import make_agent
from eval.duplicate import evaluate
from eval.headroom import DECISION_TYPES, decision_type, improvement_gap
from eval.tournament import TournamentConfig, run_tournament
from tonk_cli.main import main
from tonk_env.agent import PeekNotAllowed
from tonk_env.engine import is_over, make_rules, new_game, seat_info, to_record
from tonk_env.engine.actions import DISCARD, DRAW, DROP, HIT_BOOK, SPREAD, TAKE
from tonk_env.engine.cards import hand_value
from tonk_env.play import play, start_hand

#: A small, fast peek search (the defaults search 300 worlds a decision).
PEEK = "peek:ismcts?budget=16&drop_samples=16"


def _peek(stock: bool = False) -> PeekSearchAgent:
    agent = make_agent(PEEK + ("&stock=true" if stock else ""), seed=1)
    assert isinstance(agent, PeekSearchAgent)
    return agent


def test_peek_worlds_are_the_true_deal() -> None:
    rules = make_rules()
    s = new_game(rules, 2, seed=5)
    s.play(DRAW)  # seat 0 has drawn: stock and hands are no longer the deal's
    info = seat_info(s, s.cur)
    agent = _peek()
    agent.true_state = s
    worlds, weights = agent.worlds(info, 6)
    assert len(worlds) == 6 and weights == [1.0] * 6
    for hands, stock in worlds:
        assert hands == s.hands  # the opponents' true hands, every time
        assert sorted(stock) == sorted(s.stock)
    assert any(stock != s.stock for _, stock in worlds)  # the stock order is not read
    cheat = _peek(stock=True)
    cheat.true_state = s
    worlds, _ = cheat.worlds(info, 6)
    assert all(hands == s.hands and stock == s.stock for hands, stock in worlds)


def test_a_peek_agent_needs_the_true_state() -> None:
    s = new_game(make_rules(), 2, seed=5)
    agent = _peek()
    with pytest.raises(PeekNotAllowed, match="without the true state"):
        agent.worlds(seat_info(s, 0), 4)
    with pytest.raises(PeekNotAllowed) as e:  # the hand loop refuses it without allow_peek
        play(s, [agent, make_agent("random", seed=0)])
    assert "peek agent" in str(e.value) and "cheat" in str(e.value) and "\n" not in str(e.value)


def test_peek_agents_play_legal_hands_and_use_what_they_see() -> None:
    rules = make_rules()
    peek, search = _peek(), make_agent("search:ismcts?budget=16&drop_samples=16", seed=2)
    for seed in range(6):
        s = new_game(rules, 2, seed=seed)
        seats = [peek, search] if seed % 2 else [search, peek]
        start_hand(seats, 2, rules, [seed, seed + 100])
        play(s, seats, allow_peek=True)  # the loop checks every move is legal
        assert is_over(s) and peek.true_state is None  # the true state is lent per decision only
    # at a start of turn where dropping loses in the true deal, the peek agent does not drop
    lost = 0
    for seed in range(40):
        s = new_game(rules, 2, seed=seed)
        if is_over(s):
            continue
        s.play(DRAW)
        s.play(next(a for a in s.legal_actions() if DISCARD <= a < HIT_BOOK))  # seat 1 to start its turn
        if DROP not in s.legal_actions():
            continue
        counts = [hand_value(h) for h in s.hands]
        if counts[1] > counts[0]:  # dropping would be caught in the true deal
            peek.true_state = s
            assert peek.act({}, seat_info(s, 1)) != DROP
            peek.true_state = None
            lost += 1
    assert lost > 0


def test_consumers_refuse_peek_agents_unless_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert is_peek_spec(PEEK) and not is_peek_spec("search:ismcts") and not is_peek_spec("?")
    with pytest.raises(PeekNotAllowed, match="--allow-peek"):
        evaluate([PEEK, "random"], hands=2)
    res = evaluate([PEEK, "random"], hands=2, allow_peek=True)
    assert res.hands == 2
    for argv in (
        ["eval", PEEK, "random", "--hands", "2", "--quiet"],
        ["tournament", PEEK, "random", "--hands", "2", "--quiet", "--out", str(tmp_path / "t")],
        ["zoo", "add", str(tmp_path), "--name", "x", "--baselines", PEEK, "--no-progress"],
        ["exploit", PEEK, "--steps", "1"],
        ["play", "--opponents", PEEK],
    ):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip()
        assert "peek agent" in err and "cheat" in err and "\n" not in err, argv
    cfg = TournamentConfig(entrants=[PEEK, "random"], hands=2)
    with pytest.raises(PeekNotAllowed, match="allow_peek"):
        run_tournament(cfg, out=tmp_path / "t2", plots=False)
    cfg.allow_peek = True
    result = run_tournament(cfg, out=tmp_path / "t3", plots=False)
    assert result.matches_played == 1
    assert main(["eval", PEEK, "random", "--hands", "2", "--quiet", "--allow-peek"]) == 0


def test_the_server_refuses_peek_agents() -> None:
    pytest.importorskip("fastapi")
    pytest.importorskip("httpx")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Using `httpx`")
        from fastapi.testclient import TestClient
    from frontends.server import create_app

    with pytest.raises(PeekNotAllowed, match="the server refuses it"):
        create_app(agents=[PEEK], max_games=2, idle_timeout=60)
    client = TestClient(create_app(agents=[], max_games=2, idle_timeout=60))
    s = new_game(make_rules(), 2, seed=3)
    r = client.post("/api/agent-action", json={"agent": PEEK, "record": to_record(s)})
    assert r.status_code == 400 and "peek agent" in r.json()["detail"]
    r = client.post("/api/games", json={"agents": [PEEK]})
    assert r.status_code == 400 and "peek agent" in r.json()["detail"]


def test_decision_types() -> None:
    assert [decision_type(a) for a in (DROP, DRAW, TAKE, DISCARD, HIT_BOOK, SPREAD)] == [
        "drop", "draw/take", "draw/take", "discard", "hit", "spread",
    ]  # fmt: skip


def test_the_gap_is_non_negative_per_type_and_deterministic() -> None:
    kw = {"agent": "zoo:2p", "opponent": "heuristic:greedy", "positions": 12, "worlds": 4, "seed": 3}
    a = improvement_gap(**kw)  # type: ignore[arg-type]
    b = improvement_gap(**kw)  # type: ignore[arg-type]
    assert a.to_dict() | {"seconds": 0} == b.to_dict() | {"seconds": 0} and a.gaps == b.gaps
    assert a.positions >= 12 and sum(st.positions for st in a.by_type.values()) == a.positions
    assert set(a.by_type) == set(DECISION_TYPES)
    assert all(g >= 0 for g in a.gaps)
    for st in a.by_type.values():
        assert st.per_hand >= 0 and (st.positions == 0 or st.mean_gap >= 0)
    assert a.total.per_hand == pytest.approx(sum(st.per_hand for st in a.by_type.values()))
    c = improvement_gap(**{**kw, "seed": 4})  # type: ignore[arg-type]
    assert c.gaps != a.gaps
    with pytest.raises(ValueError, match="not a policy network"):
        improvement_gap(agent="heuristic:greedy", positions=1)
    with pytest.raises(ValueError, match="worlds must be"):
        improvement_gap(worlds=0)
