"""Luck correction for duplicate evaluation (AIVAT): a fixed full-state value function and its terms.

- :mod:`.features`: the full-state rows the value function reads (all hands, the
  table, the pile, the *set* of stock cards, whose turn), and the rows of every
  outcome of a stock draw in one batch;
- :mod:`.value`: the value network (numpy inference), its ``.npz`` file and card,
  the shipped value files (package data beside this module, loadable by name);
- :mod:`.terms`: the luck term of a draw, and a hand's terms replayed from its
  deck and actions.

The value files are fitted by :mod:`train.luck_fit` (``tonk luck fit``) on deals
that no evaluation uses; ``tonk eval --luck NAME`` applies them.
"""

from __future__ import annotations

from .features import FEATURE_VERSION, draw_outcomes, feature_size, state_features
from .terms import corrected_payoffs, draw_term, hand_luck
from .value import DEFAULT_VALUE, ValueNet, load_value, save_value

__all__ = [
    "DEFAULT_VALUE", "FEATURE_VERSION", "ValueNet", "corrected_payoffs", "draw_outcomes", "draw_term",
    "feature_size", "hand_luck", "load_value", "save_value", "state_features",
]  # fmt: skip
