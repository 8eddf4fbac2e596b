"""agents layer of Tonk RL (see README)."""
