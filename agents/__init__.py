"""agents layer of Tonk RL (see docs/ARCHITECTURE.md)."""
