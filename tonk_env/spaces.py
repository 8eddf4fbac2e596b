"""The Gymnasium spaces of the Tonk envs: the observation ``Box`` and the action-mask ``Box``.

Both envs (:mod:`tonk_env.aec`, :mod:`tonk_env.single`) build their spaces
here; the observation's bounds come from its layout (:mod:`tonk_env.obs`).
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from .engine import TonkRules, action_table
from .obs import observation_bounds


def observation_box(rules: TonkRules, num_players: int) -> spaces.Box:
    """The ``Box`` of the observation tensor for these rules and players."""
    low, high = observation_bounds(rules, num_players)
    return spaces.Box(low, high, dtype=np.float32)


def mask_box(rules: TonkRules) -> spaces.Box:
    """The ``Box`` of an int8 0/1 action mask over the rules' action table."""
    n = action_table(rules.ace_high).size
    return spaces.Box(0, 1, shape=(n,), dtype=np.int8)


def action_space(rules: TonkRules) -> spaces.Discrete:
    """``Discrete`` over the rules' action table (540 ids, 580 with ``ace_high``)."""
    return spaces.Discrete(action_table(rules.ace_high).size)
