"""TorchRL: ``PettingZooWrapper(use_mask=True)`` on the AEC env, with a PPO loop (``ClipPPOLoss``).

Self-play: one masked policy (a ``ProbabilisticActor`` over ``MaskedCategorical``)
plays both seats. TorchRL's wrapper gives each agent its own group
(``player_0``, ``player_1``) with a ``mask`` (is it this agent's turn) and an
``action_mask`` (its legal actions); every step, the acting group's
observation goes through the actor. Each seat's decisions of a hand are
scored with the hand's final reward (Monte Carlo returns, the critic as
baseline), and ``ClipPPOLoss`` updates actor and critic. The env keeps its
default ``infos="end"``: TorchRL makes tensor specs of the infos after
``reset()``. ``early_end="redeal"`` skips hands that end at the deal (nobody
decides anything in them).

    python examples/torchrl_ppo.py            # a few minutes on 2 cores
    python examples/torchrl_ppo.py --tiny     # seconds: the test suite's run
"""

from __future__ import annotations

import argparse

import torch
from tensordict import TensorDict
from tensordict.nn import TensorDictModule
from torch import nn
from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.modules import MaskedCategorical, ProbabilisticActor, ValueOperator
from torchrl.objectives import ClipPPOLoss

import tonk_env


def make_env(seed: int) -> PettingZooWrapper:
    """The 2-player AEC env as TorchRL wraps it (one group per agent, categorical actions)."""
    return PettingZooWrapper(
        env=tonk_env.env(2, early_end="redeal"), use_mask=True, categorical_actions=True, seed=seed
    )


def make_modules(obs_size: int, num_actions: int) -> tuple[ProbabilisticActor, ValueOperator]:
    """The masked actor and the critic, both MLPs on the observation tensor."""
    net = nn.Sequential(nn.Linear(obs_size, 128), nn.Tanh(), nn.Linear(128, num_actions))
    actor = ProbabilisticActor(
        TensorDictModule(net, in_keys=["observation"], out_keys=["logits"]),
        in_keys={"logits": "logits", "mask": "action_mask"},
        distribution_class=MaskedCategorical,
        return_log_prob=True,
    )
    critic = ValueOperator(
        nn.Sequential(nn.Linear(obs_size, 128), nn.Tanh(), nn.Linear(128, 1)), in_keys=["observation"]
    )
    return actor, critic


def play_hands(env: PettingZooWrapper, actor: ProbabilisticActor, hands: int) -> tuple[TensorDict, list]:
    """Play ``hands`` self-play hands; every decision with its seat's final reward, and player_0's rewards."""
    groups = list(env.group_map)
    rows: list[TensorDict] = []
    finals: list[float] = []
    td = env.reset()
    for _ in range(hands):
        pending: dict[str, list[TensorDict]] = {g: [] for g in groups}
        while True:
            g = next(g for g in groups if td[g, "mask"].item())  # the agent to act
            state = TensorDict(
                {
                    "observation": td[g, "observation", "observation"][0],
                    "action_mask": td[g, "action_mask"][0],
                }
            )
            with torch.no_grad():
                state = actor(state)
            pending[g].append(state)
            for h in groups:
                td[h, "action"] = state["action"].reshape(1) if h == g else torch.zeros(1, dtype=torch.long)
            td = env.step(td)
            nxt = td["next"]
            if nxt["done"].item():
                for h in groups:
                    reward = float(nxt[h, "reward"].sum())
                    for row in pending[h]:
                        row["return"] = torch.tensor([reward])
                    rows += pending[h]
                finals.append(float(nxt[groups[0], "reward"].sum()))
                td = env.reset()
                break
            td = nxt
    return torch.stack(rows), finals


def main(argv: list[str] | None = None) -> float:
    """Self-play PPO; print and return player_0's mean reward per hand in the last batch of hands."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tiny", action="store_true", help="a tiny budget (the test suite's run)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    iterations, hands = (2, 8) if args.tiny else (100, 64)

    torch.manual_seed(args.seed)
    env = make_env(args.seed)
    spec = env.observation_spec["player_0", "observation", "observation"]
    actor, critic = make_modules(spec.shape[-1], int(env.full_action_spec["player_0", "action"].space.n))
    loss_fn = ClipPPOLoss(actor, critic, clip_epsilon=0.2, entropy_coeff=0.01)
    optimizer = torch.optim.Adam(loss_fn.parameters(), lr=3e-4)
    finals: list[float] = []
    decisions = 0
    for _ in range(iterations):
        batch, finals = play_hands(env, actor, hands)
        decisions += batch.shape[0]
        with torch.no_grad():
            batch["state_value"] = critic(batch.clone())["state_value"]
        batch["advantage"] = batch["return"] - batch["state_value"]
        batch["value_target"] = batch["return"]
        for _ in range(4):
            losses = loss_fn(batch)
            loss = losses["loss_objective"] + losses["loss_critic"] + losses["loss_entropy"]
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(loss_fn.parameters(), 0.5)
            optimizer.step()
    mean = sum(finals) / len(finals)
    print(
        f"torchrl PPO self-play: {iterations * hands} hands, {decisions} decisions, "
        f"player_0 mean reward {mean:+.3f} stakes/hand in the last {len(finals)} hands"
    )
    return mean


if __name__ == "__main__":
    main()
