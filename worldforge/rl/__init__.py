"""Reinforcement learning in the fictional worlds: one environment core and its adapters.

* :class:`~worldforge.rl.env.SearchWorldEnv` — the core: ``reset(world, task)``, the three
  search tools, ``submit(answer) -> reward`` (a wide task's item-F1, a deep question's correctness).
* :mod:`worldforge.rl.trl` — TRL's ``GRPOTrainer(environment_factory=...)`` and the prompt dataset.
* :mod:`worldforge.rl.openenv` — the environment served and used with OpenEnv's conventions.
* :mod:`worldforge.rl.retrieve` — the Search-R1 / verl ``/retrieve`` endpoint.
* :mod:`worldforge.rl.verifiers` — the ``verifiers`` taskset (``vf-eval worldforge-search``) and ``load_environment``.
"""

from worldforge.rl.env import FAMILIES, EpisodeOver, RewardConfig, SearchWorldEnv, parse_perturbations, world_tasks

__all__ = ["FAMILIES", "EpisodeOver", "RewardConfig", "SearchWorldEnv", "parse_perturbations", "world_tasks"]
