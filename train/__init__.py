"""train layer of Tonk RL (see docs/ARCHITECTURE.md)."""
