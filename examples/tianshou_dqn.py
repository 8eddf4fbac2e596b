"""Tianshou 2.0: a DQN learner against a random opponent on the AEC env (``tonk_env.env()``).

Tianshou's multi-agent tic-tac-toe recipe, on Tonk: ``PettingZooEnv`` wraps the
AEC env, ``MultiAgentOffPolicyAlgorithm`` seats a DQN in ``player_0`` and a
masked random policy in ``player_1``. ``early_end="redeal"`` deals again a hand
that ends at the deal (Tianshou's collector cannot step a hand in which every
agent is already done), and ``infos="every_step"`` gives every step's info the
same keys (neutral values before the hand ends), so Tianshou's buffer stores them.

    python examples/tianshou_dqn.py            # about a minute on 2 cores
    python examples/tianshou_dqn.py --tiny     # a few seconds: the test suite's run
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.env.pettingzoo_env import PettingZooEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

import tonk_env


def make_env() -> PettingZooEnv:
    """The 2-player AEC env as Tianshou wraps it; hands that end at the deal are dealt again."""
    return PettingZooEnv(tonk_env.env(num_players=2, early_end="redeal", infos="every_step"))


def main(argv: list[str] | None = None) -> float:
    """Train, then print and return the learner's mean reward over the test episodes."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tiny", action="store_true", help="a tiny budget (the test suite's run)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    epochs, steps_per_epoch, envs, test_episodes = (1, 200, 2, 4) if args.tiny else (5, 4000, 4, 50)

    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    env = make_env()
    obs_space = env.observation_space["observation"]
    net = Net(state_shape=obs_space.shape, action_shape=int(env.action_space.n), hidden_sizes=[128, 128])
    learner = DQN(
        policy=DiscreteQLearningPolicy(
            model=net, action_space=env.action_space, eps_training=0.2, eps_inference=0.0
        ),
        optim=AdamOptimizerFactory(lr=1e-3),
        gamma=0.99,
        n_step_return_horizon=1,
        target_update_freq=200,
    )
    opponent = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[learner, opponent], env=env)

    train_envs = DummyVectorEnv([make_env for _ in range(envs)])
    test_envs = DummyVectorEnv([make_env for _ in range(envs)])
    train_envs.seed(args.seed)
    test_envs.seed(args.seed + 1000)
    train_collector = Collector[CollectStats](
        algorithm, train_envs, VectorReplayBuffer(20_000, envs), exploration_noise=True
    )
    test_collector = Collector[CollectStats](algorithm, test_envs, exploration_noise=True)
    train_collector.reset()
    train_collector.collect(n_step=64 * envs)

    algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=train_collector,
            test_collector=test_collector,
            max_epochs=epochs,
            epoch_num_steps=steps_per_epoch,
            collection_step_num_env_steps=10,
            test_step_num_episodes=test_episodes,
            batch_size=64,
            update_step_num_gradient_steps_per_sample=0.1,
            test_in_training=False,
            multi_agent_return_reduction=lambda rews: rews[:, 0],  # the learner is player_0
            show_progress=False,
        )
    )
    stats = test_collector.collect(n_episode=test_episodes, reset_before_collect=True)
    mean = float(np.mean(stats.returns[:, 0]))
    hands = stats.n_collected_episodes
    print(f"tianshou DQN (player_0) vs random: mean reward {mean:+.3f} stakes/hand over {hands} hands")
    return mean


if __name__ == "__main__":
    main()
