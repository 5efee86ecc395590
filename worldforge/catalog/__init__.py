"""A catalog of distinct fictional worlds: archetypes -> specs -> worlds, end to end.

The method (Qwen-AgentWorld, arXiv 2606.24597) trains search agents in about 1,000 distinct fictional
worlds of 300–500 rows each. This package produces such a catalog:

- :mod:`worldforge.catalog.archetypes` — the archetype library (package data files, one per domain:
  tables, relations, columns with units, ranges and distributions, real anchors and invented names);
- :mod:`worldforge.catalog.generate` — seeded world specs sampled from the archetypes (deterministic,
  no LLM), each with a distinct schema signature;
- :mod:`worldforge.catalog.author` — a spec authored by an OpenAI-compatible world model with
  structured output and a bounded validation-repair loop;
- :mod:`worldforge.catalog.build` — every spec of a folder built end to end (world, scenarios, corpus,
  index, tasks, oracle) into ``WAREHOUSE/catalog.duckdb``, failures isolated, unchanged specs skipped;
- :mod:`worldforge.catalog.report` — the catalog's diversity report.
"""
