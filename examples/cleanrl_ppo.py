"""A CleanRL-style single-file PPO on ``TonkVectorEnv``, the batched single-agent env, with action masks.

CleanRL's ``ppo.py`` shape: one file, a rollout of ``num_steps`` over
``num_envs`` games, GAE, clipped surrogate, value loss, entropy bonus. The one
Tonk-specific part is the mask: illegal logits are set to a large negative
number before the ``Categorical``, both when acting and in the update (the mask
is stored with the rollout). Autoreset is Gymnasium's same-step mode, so a
terminated step's next observation is already the next hand's.

    python examples/cleanrl_ppo.py            # a few minutes on 2 cores
    python examples/cleanrl_ppo.py --tiny     # seconds: the test suite's run
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical

from tonk_env.vector import TonkVectorEnv


class Agent(nn.Module):
    """Actor and critic MLPs on the observation tensor."""

    def __init__(self, obs_size: int, num_actions: int) -> None:
        super().__init__()
        self.critic = nn.Sequential(nn.Linear(obs_size, 128), nn.Tanh(), nn.Linear(128, 1))
        self.actor = nn.Sequential(nn.Linear(obs_size, 128), nn.Tanh(), nn.Linear(128, num_actions))

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        """The critic's estimate, shape ``(B,)``."""
        return self.critic(obs).squeeze(-1)

    def act(
        self, obs: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Sample (or score) a legal action: action, log-probability, entropy, value."""
        logits = self.actor(obs).masked_fill(~mask, -1e8)
        dist = Categorical(logits=logits)
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.value(obs)


def main(argv: list[str] | None = None) -> float:
    """Train, then print and return the mean reward per finished hand of the last quarter of training."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tiny", action="store_true", help="a tiny budget (the test suite's run)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--opponents", default="random", help="an agent spec (tonk agents)")
    args = ap.parse_args(argv)
    num_envs, num_steps, iterations = (4, 32, 2) if args.tiny else (16, 128, 150)
    gamma, lam, clip, epochs, minibatches, lr = 0.99, 0.95, 0.2, 4, 4, 2.5e-4

    torch.manual_seed(args.seed)
    envs = TonkVectorEnv(num_envs, opponents=args.opponents)
    obs_size = envs.single_observation_space.shape[0]
    num_actions = int(envs.single_action_space.n)
    agent = Agent(obs_size, num_actions)
    optimizer = torch.optim.Adam(agent.parameters(), lr=lr, eps=1e-5)

    obs_buf = torch.zeros((num_steps, num_envs, obs_size))
    mask_buf = torch.zeros((num_steps, num_envs, num_actions), dtype=torch.bool)
    act_buf = torch.zeros((num_steps, num_envs), dtype=torch.long)
    logp_buf, rew_buf, done_buf, val_buf = (torch.zeros((num_steps, num_envs)) for _ in range(4))

    o, _ = envs.reset(seed=args.seed)
    next_obs, next_done = torch.as_tensor(o), torch.zeros(num_envs)
    hand_rewards: list[float] = []
    for it in range(iterations):
        for t in range(num_steps):
            obs_buf[t], done_buf[t] = next_obs, next_done
            mask_buf[t] = torch.as_tensor(envs.action_masks(), dtype=torch.bool)
            with torch.no_grad():
                action, logp, _, value = agent.act(next_obs, mask_buf[t])
            act_buf[t], logp_buf[t], val_buf[t] = action, logp, value
            o, reward, term, trunc, _ = envs.step(action.numpy())
            rew_buf[t] = torch.as_tensor(reward, dtype=torch.float32)
            next_obs, next_done = torch.as_tensor(o), torch.as_tensor(term | trunc, dtype=torch.float32)
            if it >= iterations * 3 // 4:
                hand_rewards += [float(r) for r, d in zip(reward, term | trunc, strict=True) if d]

        with torch.no_grad():  # GAE; a hand's last step bootstraps nothing
            next_value = agent.value(next_obs)
            adv = torch.zeros_like(rew_buf)
            last = torch.zeros(num_envs)
            for t in reversed(range(num_steps)):
                nonterminal = 1.0 - (next_done if t == num_steps - 1 else done_buf[t + 1])
                nv = next_value if t == num_steps - 1 else val_buf[t + 1]
                delta = rew_buf[t] + gamma * nv * nonterminal - val_buf[t]
                adv[t] = last = delta + gamma * lam * nonterminal * last
            ret = adv + val_buf

        b_obs, b_mask = obs_buf.reshape(-1, obs_size), mask_buf.reshape(-1, num_actions)
        b_act, b_logp = act_buf.reshape(-1), logp_buf.reshape(-1)
        b_adv, b_ret = adv.reshape(-1), ret.reshape(-1)
        size = num_steps * num_envs
        for _ in range(epochs):
            for idx in torch.randperm(size).split(size // minibatches):
                _, logp, entropy, value = agent.act(b_obs[idx], b_mask[idx], b_act[idx])
                ratio = (logp - b_logp[idx]).exp()
                a = b_adv[idx]
                a = (a - a.mean()) / (a.std() + 1e-8)
                pg_loss = torch.max(-a * ratio, -a * ratio.clamp(1 - clip, 1 + clip)).mean()
                v_loss = 0.5 * (value - b_ret[idx]).pow(2).mean()
                loss = pg_loss + 0.5 * v_loss - 0.01 * entropy.mean()
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                optimizer.step()

    mean = float(np.mean(hand_rewards)) if hand_rewards else 0.0
    steps = iterations * num_steps * num_envs
    print(
        f"cleanrl PPO vs {args.opponents}: {steps} steps, mean reward {mean:+.3f} stakes/hand "
        f"over the last quarter's {len(hand_rewards)} hands"
    )
    return mean


if __name__ == "__main__":
    main()
