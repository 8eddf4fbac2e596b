"""Stable-Baselines3: sb3-contrib's MaskablePPO on ``gymnasium.make("tonk_env/TonkSingle-v0")``.

The single-agent env seats the learner against opponents that play inside
``step()`` (here a spec string, ``heuristic:greedy``). The observation is one
flat ``Box``, so the policy is ``"MlpPolicy"`` (not ``"MultiInputPolicy"``);
MaskablePPO reads the legal mask from ``action_masks()`` through ``make``'s
wrappers, and outside ``learn()`` the mask is passed to ``predict`` by hand
(``env.get_wrapper_attr("action_masks")()``).

    python examples/sb3_maskable_ppo.py            # about 2 minutes on 2 cores
    python examples/sb3_maskable_ppo.py --tiny     # seconds: the test suite's run
"""

from __future__ import annotations

import argparse

import gymnasium
import numpy as np
from sb3_contrib import MaskablePPO

import tonk_env


def evaluate(model: MaskablePPO, opponents: str, hands: int, seed: int) -> float:
    """The model's mean reward (stakes per hand) over ``hands`` hands, masked argmax."""
    env = gymnasium.make(tonk_env.ENV_ID, opponents=opponents)
    total = 0.0
    for h in range(hands):
        obs, _ = env.reset(seed=seed + h)
        done = False
        while not done:
            mask = env.get_wrapper_attr("action_masks")()
            action, _ = model.predict(obs, action_masks=mask, deterministic=True)
            obs, reward, done, _, _ = env.step(int(action))
            total += float(reward)
    return total / hands


def main(argv: list[str] | None = None) -> float:
    """Train MaskablePPO, then print and return its mean reward against the opponents."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tiny", action="store_true", help="a tiny budget (the test suite's run)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--opponents", default="heuristic:greedy", help="an agent spec (tonk agents)")
    args = ap.parse_args(argv)
    steps, hands = (512, 20) if args.tiny else (100_000, 1000)

    env = gymnasium.make(tonk_env.ENV_ID, opponents=args.opponents)
    model = MaskablePPO("MlpPolicy", env, n_steps=256, batch_size=128, seed=args.seed, verbose=0)
    model.learn(total_timesteps=steps)
    mean = evaluate(model, args.opponents, hands, seed=10_000 + args.seed)
    print(f"sb3 MaskablePPO vs {args.opponents}: mean reward {mean:+.3f} stakes/hand over {hands} hands")
    return float(np.float64(mean))


if __name__ == "__main__":
    main()
