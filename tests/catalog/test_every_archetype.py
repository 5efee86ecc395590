"""One world of every catalog archetype, built end to end: a world that fails is a generator bug.

The catalog of ``catalog generate --n 1000 --seed 0`` once had 36 failed worlds (the chess archetype's games carry
a White and a Black player, both players: the cross-table task kinds walked the wrong one). Each archetype's first
draw goes through every step here, so a regression in any archetype shows in the suite, not in a 45-minute build.
"""

from __future__ import annotations

import pytest

from worldforge.catalog.archetype import load_archetypes
from worldforge.catalog.build import build_catalog
from worldforge.catalog.generate import generate_catalog
from worldforge.warehouse import Warehouse


@pytest.fixture(scope="module")
def every_archetype(tmp_path_factory):
    root = tmp_path_factory.mktemp("every_archetype")
    n = len(load_archetypes())
    generate_catalog(n, 0, root / "specs")  # the first n draws use each of the n archetypes once
    return build_catalog(root / "specs", Warehouse(root / "wh"), workers=2), root


def test_one_world_of_every_archetype_builds_with_the_oracle_at_one(every_archetype):
    build, _ = every_archetype
    archetypes = {r.archetype for r in build.rows}
    assert archetypes == set(load_archetypes())
    failed = {r.world: (r.error or "")[:300] for r in build.rows if r.status != "built"}
    assert failed == {}
    assert all(r.contradictions == 0 for r in build.rows)
    assert {r.world: r.oracle_f1_min for r in build.rows if r.oracle_f1_min != 1.0} == {}

