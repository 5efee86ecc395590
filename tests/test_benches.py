"""Every benchmark runs, in its small mode (seconds): a bench that no longer runs (a renamed field, a changed report)
fails the suite; the figures themselves come from ``make bench``. A bench whose target is missed at this size (exit 1
with a MISS line) still ran: only a traceback or another exit status fails."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT

BENCHES = {
    "datasets": ["--small"],
    "prose": ["--small", "--no-fail"],
    "corpus": ["--small"],
    "difficulty": [],
    "turns": ["--small"],
    "worlds": ["--small"],
    "ingest": ["--small"],
    "backfill": ["--small"],
    "catalog": ["--small", "--no-fail"],
    "fuzz": ["--small"],
    "load": ["--small", "--no-fail"],
    "simenv": ["--small"],
    "rl": ["--small"],
    "retrieval": ["--small"],
    "soak": ["--short"],
    "memory": ["--small", "--kinds", "mcp,http"],
    "step_path": ["--small"],
    "specs_fuzz": ["--small"],
    "editor": ["--small"],
}
STRICT = {"soak"}  # its short mode's checks are the test: a MISS (exit 1) fails it
NEEDS_A_WORLD = {"simenv", "rl", "step_path"}  # given the warehouse of the fixture below (load builds its own)


@pytest.fixture(scope="module")
def world_warehouse(specs, tmp_path_factory):
    """A warehouse holding esports_2031 with its corpus and tasks."""
    from tests.conftest_worlds import built_world
    from worldforge.tasks.store import build_tasks

    wh = tmp_path_factory.mktemp("bench_wh")
    build_tasks(built_world(specs["esports_2031"], wh))
    return wh


@pytest.mark.parametrize("name", sorted(BENCHES))
def test_the_bench_runs_in_its_small_mode(name, tmp_path, request):
    args = list(BENCHES[name]) + (["--warehouse", str(tmp_path / "wh")] if name == "datasets" else [])
    if name in NEEDS_A_WORLD:
        args += ["--warehouse", str(request.getfixturevalue("world_warehouse"))]
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / f"{name}.py"), *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=600)
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr[-3000:]
    assert proc.returncode in ((0,) if name in STRICT else (0, 1)), (proc.returncode, proc.stdout[-3000:], proc.stderr[-2000:])
    assert proc.stdout.strip(), "the bench printed no figure"


def test_every_bench_is_run_here_or_named_as_needing_a_server():
    """A new bench must join the list above (or the list of those that need the demo's warehouse or vLLM)."""
    needs_more = {"record", "world_model",  # a vllm serve of the tiny model (minutes on this CPU)
                  "widesearch_rules"}  # a checkout of WideSearch with pandas 2 (WORLDFORGE_WIDESEARCH)
    on_disk = {p.stem for p in (ROOT / "bench").glob("*.py")}
    assert on_disk == set(BENCHES) | needs_more, on_disk ^ (set(BENCHES) | needs_more)
