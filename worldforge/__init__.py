"""worldforge: the data side of language world models for agents.

Seeded fictional worlds in DuckDB, real agent trajectories with turn-level loss-mask
statistics, and (in later modules) search corpora, tasks and CPT/SFT datasets.
"""

__version__ = "0.1.0"

GENERATOR_VERSION = "2"
"""The version of what a spec builds, recorded in each world file (``_world.generator_version``).

Bump it whenever a change alters what a spec builds: its tables (a generator, the seeding, an invariant), its
scenarios, its corpus (pages, facts, genres), its tasks or its deep questions; not for a change that builds the same
files (a refactor, a faster path, a new command). A world file that records another version, or none (written before
the column existed), is *stale*: ``worldforge catalog build`` rebuilds it even when its spec's bytes are unchanged,
``worldforge world run`` on a built world rebuilds it from its stored spec before the selected steps, ``worldforge
summary`` and ``worldforge catalog report`` name it, and the Dagster assets carry the version in their ``code_version``
(so the UI shows them stale after a bump). A file written before the version was recorded reads as version unknown."""
