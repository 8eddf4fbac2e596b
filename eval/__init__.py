"""eval layer of Tonk RL (see README)."""
