"""Fixtures of the export tests: one warehouse of two worlds with their tasks and deep questions, shared read-only."""

from __future__ import annotations

import pytest

from tests.conftest_worlds import built_world
from worldforge.tasks.store import build_tasks
from worldforge.warehouse import Warehouse

EXPORT_WORLDS = ("esports_2031", "mars_colony_2030")


@pytest.fixture(scope="session")
def export_wh(specs, tmp_path_factory):
    """A warehouse holding EXPORT_WORLDS built with their tasks (shared by the BrowseComp-Plus, Hugging Face and Search-R1
    export tests: write exports elsewhere, never into it)."""
    wh = Warehouse(tmp_path_factory.mktemp("export-wh"))
    for name in EXPORT_WORLDS:
        build_tasks(built_world(specs[name], wh))
    return wh
