"""Fixtures of the RL tests: a warehouse with one world, its corpus, index and tasks built."""

from __future__ import annotations

import pytest

from tests.conftest_worlds import built_world
from worldforge.tasks.store import build_tasks
from worldforge.warehouse import Warehouse

WORLD = "smartphones_2029"


@pytest.fixture(scope="session")
def rl_wh(specs, tmp_path_factory):
    """A warehouse holding smartphones_2029 with its corpus and tasks (shared: do not write its world)."""
    wh = Warehouse(tmp_path_factory.mktemp("rl-wh"))
    build_tasks(built_world(specs[WORLD], wh))
    return wh


@pytest.fixture(scope="session")
def rl_tasks(rl_wh):
    """The world's tasks by instance_id."""
    from worldforge.rl import world_tasks

    return world_tasks(WORLD, rl_wh)
