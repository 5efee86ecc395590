"""Every server runs its whole life with CPython's cyclic collector relaxed (:mod:`worldforge.runtime`)."""

from __future__ import annotations

import gc

import pytest
import uvicorn

from tests.rl.conftest import WORLD
from worldforge.net import free_port
from worldforge.runtime import GC_GEN0


def _serve(which: str, warehouse) -> None:
    if which == "openenv":
        from worldforge.rl.openenv import serve

        serve(WORLD, warehouse, port=free_port())
    elif which == "search":
        from worldforge.serving.search import serve

        serve(WORLD, warehouse, port=free_port())
    else:
        from worldforge.rl.retrieve import serve_retrieve

        serve_retrieve(WORLD, warehouse, port=free_port())


@pytest.mark.parametrize("which", ["openenv", "search", "retrieve"])
def test_a_server_runs_with_the_collector_relaxed_and_gives_the_thresholds_back(which, rl_wh, monkeypatch):
    seen = []

    def run(server: uvicorn.Server, *args, **kwargs) -> None:  # started and stopped at once, seeing the thresholds
        seen.append(gc.get_threshold())
        server.started = True

    monkeypatch.setattr(uvicorn.Server, "run", run)
    before = gc.get_threshold()
    _serve(which, rl_wh)
    assert seen == [(max(GC_GEN0, before[0]), *before[1:])]  # uvicorn ran (here: returned at once) under the relaxed thresholds
    assert gc.get_threshold() == before and gc.isenabled()
