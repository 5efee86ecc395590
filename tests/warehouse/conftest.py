import pytest

from tests.conftest_worlds import built_world
from worldforge.tasks.store import build_tasks
from worldforge.warehouse import Warehouse


@pytest.fixture(scope="module")
def world(specs, tmp_path_factory):
    """A real world with its tasks, for the documented views: ``(warehouse, world file)``."""
    wh = Warehouse(tmp_path_factory.mktemp("wh"))
    path = built_world(specs["smartphones_2029"], wh)
    build_tasks(path)
    return wh, path
