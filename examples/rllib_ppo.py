"""RLlib: its own ``PettingZooEnv`` wrapper on the AEC env, PPO (new API stack) with action masking.

RLlib's ``PettingZooEnv`` turns the AEC env into a turn-based ``MultiAgentEnv``;
one shared policy plays both seats (self-play). RLlib's example masking module,
``ActionMaskingTorchRLModule``, reads an observation ``{"observations",
"action_mask"}`` with a float mask, so a small PettingZoo wrapper renames the
env's ``"observation"`` key and casts its int8 mask. ``early_end="redeal"`` deals
again the hands that end at the deal (no agent would act in them), and
``illegal_action="penalize"`` lets RLlib's env check step unmasked random
actions (an illegal one ends the hand with -1 for its player; the masked
policy never plays one).

    python examples/rllib_ppo.py            # a few minutes on 2 cores
    python examples/rllib_ppo.py --tiny     # under a minute: the test suite's run
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
import ray
from gymnasium import spaces
from pettingzoo.utils import BaseWrapper
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
from ray.tune.registry import register_env

import tonk_env


class MaskKeys(BaseWrapper):
    """The observation as RLlib's masking module reads it: ``observations`` and a float32 ``action_mask``."""

    def observation_space(self, agent: str) -> spaces.Dict:
        """The renamed space (the tensor's ``Box``, a float 0/1 mask)."""
        inner = self.env.observation_space(agent)
        n = inner["action_mask"].shape[0]
        return spaces.Dict(
            {"observations": inner["observation"], "action_mask": spaces.Box(0.0, 1.0, (n,), np.float32)}
        )

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The env's observation under the renamed keys."""
        obs = self.env.observe(agent)
        return {"observations": obs["observation"], "action_mask": obs["action_mask"].astype(np.float32)}


def make_env(_config: Any = None) -> PettingZooEnv:
    """The 2-player AEC env as RLlib wraps it."""
    return PettingZooEnv(MaskKeys(tonk_env.env(2, early_end="redeal", illegal_action="penalize")))


def main(argv: list[str] | None = None) -> float:
    """Train a shared masked PPO policy; print and return player_0's mean episode return (self-play)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tiny", action="store_true", help="a tiny budget (the test suite's run)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    iterations, batch = (1, 256) if args.tiny else (30, 4000)

    register_env("tonk_2p", make_env)
    config = (
        PPOConfig()
        .environment("tonk_2p")
        .env_runners(num_env_runners=0)
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, *a, **k: "shared")
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={
                    "shared": RLModuleSpec(
                        module_class=ActionMaskingTorchRLModule,
                        model_config={"head_fcnet_hiddens": (128, 128)},
                    )
                }
            )
        )
        .training(train_batch_size=batch, minibatch_size=min(batch, 128), num_epochs=2)
        .debugging(seed=args.seed)
    )
    ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False)  # a new instance
    try:
        algo = config.build_algo()
        result: dict[str, Any] = {}
        for _ in range(iterations):
            result = algo.train()
        runners = result["env_runners"]
        returns = runners.get("agent_episode_returns_mean", {})
        mean = float(returns.get("player_0", 0.0))
        steps = int(
            result.get("num_env_steps_sampled_lifetime", runners.get("num_env_steps_sampled_lifetime", 0))
        )
        print(
            f"rllib PPO self-play via PettingZooEnv: {iterations} iterations, {steps} env steps, "
            f"player_0 mean return {mean:+.3f} stakes/hand over {runners.get('num_episodes', 0)} hands"
        )
        algo.stop()
    finally:
        ray.shutdown()
    return mean


if __name__ == "__main__":
    main()
