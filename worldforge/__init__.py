"""worldforge: the data side of language world models for agents.

Seeded fictional worlds in DuckDB, real agent trajectories with turn-level loss-mask
statistics, and (in later modules) search corpora, tasks and CPT/SFT datasets.
"""

__version__ = "0.1.0"
