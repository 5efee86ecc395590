"""Agents that act in the search environment (:mod:`worldforge.simenv`) through its tools alone.

* :mod:`~worldforge.agents.oracle` — the oracle: executes a task's plan through the tools, proving every
  task solvable (item-F1 1.0), and answers deep questions; its episodes are recorded to the episode store;
* :mod:`~worldforge.agents.baselines` — two shallow strategies that measure how hard the tasks are.
"""
