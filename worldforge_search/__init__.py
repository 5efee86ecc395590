"""``worldforge-search``: the worlds' tasks as a ``verifiers`` taskset plugin, found by id.

``vf-eval worldforge-search`` (and ``prime-rl``) import this module and take the ``vf.Taskset`` and
``vf.Env`` subclasses its ``__all__`` exports; they live in :mod:`worldforge.rl.verifiers`.
"""

from worldforge.rl.verifiers import WorldforgeEnv, WorldforgeTaskset, load_environment

__all__ = ["WorldforgeEnv", "WorldforgeTaskset", "load_environment"]
