"""``backend: rllib``: RLlib's PPO or APPO on a local Ray instance or a Ray cluster (an optional extra).

Nothing here imports stable_baselines3 or sb3_contrib (tests/test_architecture.py checks it);
:mod:`train.rllib.setup_ray` imports without Ray, the other modules need it.
"""
