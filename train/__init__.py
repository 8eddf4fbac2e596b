"""train layer of Tonk RL (see README)."""
