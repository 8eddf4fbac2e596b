"""The Gymnasium spaces of the Tonk envs: the observation ``Box`` and the action-mask ``Box``.

Both envs (:mod:`tonk_env.aec`, :mod:`tonk_env.single`) build their spaces
here; the observation's bounds come from its layout (:mod:`tonk_env.obs`).
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from .engine import TonkRules, action_table
from .obs import observation_bounds


class ObservationBox(spaces.Box):
    """The observation tensor's ``Box``: a plain ``Box`` whose missing ``spaces`` says to use ``MlpPolicy``.

    SB3's ``MultiInputPolicy`` reads ``observation_space.spaces`` (a ``Dict``'s);
    on a plain ``Box`` that is a bare ``AttributeError: 'Box' object has no
    attribute 'spaces'``. This one names the fix instead (it is still an
    ``AttributeError``, so ``hasattr(box, "spaces")`` stays False).
    """

    @property
    def spaces(self) -> None:
        """Not a ``Dict``: raises ``AttributeError`` naming ``MlpPolicy``."""
        raise AttributeError(
            "the Tonk observation is one flat Box (the mask is apart, in action_masks()), not a Dict: "
            "use SB3's 'MlpPolicy', not 'MultiInputPolicy'"
        )


def observation_box(rules: TonkRules, num_players: int) -> spaces.Box:
    """The ``Box`` of the observation tensor for these rules and players (an :class:`ObservationBox`)."""
    low, high = observation_bounds(rules, num_players)
    return ObservationBox(low, high, dtype=np.float32)


def mask_box(rules: TonkRules) -> spaces.Box:
    """The ``Box`` of an int8 0/1 action mask over the rules' action table."""
    n = action_table(rules.ace_high).size
    return spaces.Box(0, 1, shape=(n,), dtype=np.int8)


def action_space(rules: TonkRules) -> spaces.Discrete:
    """``Discrete`` over the rules' action table (540 ids, 580 with ``ace_high``)."""
    return spaces.Discrete(action_table(rules.ace_high).size)
