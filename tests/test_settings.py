"""Settings whose defaults are computed (``worldforge.settings``)."""

import os

from worldforge import settings as wf_settings


def test_the_open_world_cache_is_sized_to_the_machines_memory(monkeypatch):
    """``WORLDFORGE_OPEN_WORLDS`` defaults to the worlds a quarter of the memory holds (27 MiB each), never under the
    old 32 nor over 1,024; the variable still overrides it."""
    pages = {"SC_PAGE_SIZE": 4096}

    def sysconf(name):
        return pages[name]

    monkeypatch.setattr(os, "sysconf", sysconf)
    for gib, want in ((2, 32), (24, 227), (64, 606), (512, 1024)):
        pages["SC_PHYS_PAGES"] = gib * 2**30 // 4096
        assert wf_settings.default_open_worlds() == want, gib
    monkeypatch.undo()
    monkeypatch.delenv("WORLDFORGE_OPEN_WORLDS", raising=False)
    assert wf_settings.Settings().open_worlds == wf_settings.default_open_worlds() >= 32
    monkeypatch.setenv("WORLDFORGE_OPEN_WORLDS", "5")
    assert wf_settings.Settings().open_worlds == 5
