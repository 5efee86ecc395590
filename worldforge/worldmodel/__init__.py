"""The world model: its per-domain system prompts (:mod:`~worldforge.worldmodel.prompts`)."""
