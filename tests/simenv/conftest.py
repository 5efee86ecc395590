"""Fixtures of the search-environment tests."""

import pytest

from tests.conftest_worlds import built_world
from tests.servers import SearchServer
from worldforge.tasks.store import build_tasks
from worldforge.warehouse import Warehouse


@pytest.fixture(scope="module")
def warehouse(specs, tmp_path_factory):
    """A warehouse holding esports_2031 with its corpus and tasks, one per test module (the servers a module
    starts record their episodes in it, so modules must not share it)."""
    wh = Warehouse(tmp_path_factory.mktemp("wh"))
    build_tasks(built_world(specs["esports_2031"], wh))
    return wh


@pytest.fixture(scope="module")
def server(warehouse):
    """A real ``worldforge serve search`` over the module's warehouse (recording), stopped by PID afterwards."""
    s = SearchServer(warehouse)
    yield s
    s.stop()
    assert s.proc.poll() is not None
