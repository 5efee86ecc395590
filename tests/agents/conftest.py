"""Fixtures of the agents' tests."""

import pytest

from tests.conftest_worlds import built_world
from worldforge.tasks.store import build_tasks
from worldforge.warehouse import Warehouse


@pytest.fixture(scope="module")
def world(specs, tmp_path_factory):
    """``(warehouse, tasks)``: esports_2031 built with its corpus and tasks, one per test module."""
    wh = Warehouse(tmp_path_factory.mktemp("wh"))
    path = built_world(specs["esports_2031"], wh)
    return wh, build_tasks(path).tasks
