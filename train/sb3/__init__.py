"""``backend: sb3``: sb3-contrib's MaskablePPO, its callback, vectorised envs and ``.zip`` checkpoints."""
