"""The catalog build (worldforge.catalog.build) and its diversity report, on copies of a bundled spec.

One session-scoped catalog of four specs is built once (two workers): the bundled esports world, a copy
with another world name, seed and archetype, a spec that fails validation and a spec that reuses a world
name. Every world takes seconds (end to end, oracle included), so the tests share it and build at most
two more worlds each.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess

import pytest
import yaml
from typer.testing import CliRunner

from tests.conftest import SPECS_DIR
from worldforge.catalog.build import build_catalog, read_catalog
from worldforge.catalog.report import catalog_report
from worldforge.cli import app
from worldforge.tasks.store import task_count
from worldforge.warehouse import Warehouse

TIMING = ("build_s", "built_at")


def _specs(folder):
    folder.mkdir(parents=True, exist_ok=True)
    text = (SPECS_DIR / "esports_2031.yaml").read_text()
    (folder / "esports_2031.yaml").write_text(text)
    doc = yaml.safe_load(text)
    doc.update(world="esports_copy", seed=77, archetype="esports")
    (folder / "esports_copy.yml").write_text(yaml.safe_dump(doc, sort_keys=False))
    (folder / "broken.yaml").write_text(text.replace("world: esports_2031", "world: broken\nbogus: 1"))
    (folder / "z_clash.yaml").write_text(text)  # the same world name as esports_2031.yaml
    return folder


@pytest.fixture(scope="session")
def catalog(tmp_path_factory):
    root = tmp_path_factory.mktemp("catalog")
    specs, wh = _specs(root / "specs"), root / "wh"
    seen = []
    result = build_catalog(specs, Warehouse(wh), workers=2, progress=lambda row, outcome: seen.append((row.world, outcome)))
    return specs, wh, result, seen


def _stable(rows):
    return sorted((dataclasses.replace(r, build_s=0.0, built_at=None) for r in rows), key=lambda r: r.spec_path)


def test_failures_are_rows_and_the_others_are_built(catalog):
    specs, wh, result, seen = catalog
    rows = {r.spec_path.rsplit("/", 1)[1]: r for r in read_catalog(Warehouse(wh))}
    assert set(rows) == {"esports_2031.yaml", "esports_copy.yml", "broken.yaml", "z_clash.yaml"}
    for name in ("esports_2031.yaml", "esports_copy.yml"):
        r = rows[name]
        assert r.status == "built" and r.error is None and r.oracle_f1_min == 1.0 and r.contradictions == 0
        assert r.tables == 4 and 300 <= r.rows <= 500 and r.scenarios == 1 and r.pages > 1000 and r.facts > 10000 and r.tasks > 20
        assert (wh / f"{r.world}.duckdb").is_file() and r.build_s > 0
        assert not (wh / "tasks" / r.world).exists()  # the tasks stay in the world file: no second copy per world
        assert task_count(wh / f"{r.world}.duckdb") == r.tasks
        assert len(r.spec_hash) == 64 and len(r.schema_signature) == 16
    assert rows["esports_copy.yml"].archetype == "esports" and rows["esports_2031.yaml"].archetype is None
    world = rows["esports_2031.yaml"].world  # the WideSearch files of a catalog world, on demand
    out = CliRunner().invoke(app, ["tasks", "export", "--world", world, "--warehouse", str(wh), str(wh.parent / "export")])
    assert out.exit_code == 0, out.output
    lines = (wh.parent / "export" / "tasks.jsonl").read_text().splitlines()
    assert len(lines) == rows["esports_2031.yaml"].tasks == len(list((wh.parent / "export" / "tables").glob("*.csv")))
    assert rows["broken.yaml"].status == "failed" and "bogus: unknown field" in rows["broken.yaml"].error
    assert rows["broken.yaml"].world == "broken" and rows["broken.yaml"].rows is None
    assert rows["z_clash.yaml"].status == "failed" and "also the world of" in rows["z_clash.yaml"].error
    assert result.built == 2 and len(result.failed) == 2 and not result.skipped and result.workers == 2
    assert sorted(o for _, o in seen) == ["built", "built", "failed", "failed"]


def test_an_unchanged_spec_is_skipped_and_a_changed_one_rebuilt(catalog, tmp_path):
    specs, wh, first, _ = catalog
    shutil.copytree(wh, tmp_path / "wh")
    again = build_catalog(specs, Warehouse(tmp_path / "wh"), workers=1)
    assert {r.world for r in again.skipped} == {"esports_2031", "esports_copy"}
    assert sorted(r.world for r in again.rows) == ["broken", "z_clash"]  # failed ones are tried again
    assert all(r.status == "failed" for r in again.rows)
    kept = {r.world: r for r in read_catalog(Warehouse(tmp_path / "wh")) if r.status == "built"}
    assert kept == {r.world: r for r in read_catalog(Warehouse(wh)) if r.status == "built"}  # the kept rows are untouched


def test_a_world_of_an_older_generator_is_reported_stale_and_rebuilt(catalog, tmp_path):
    """The spec's bytes are unchanged, but its world file was built by another generator version (here: before the
    version was recorded): summary and the report name it, the next build rebuilds it and says so; the current one is
    skipped."""
    from tests.conftest_worlds import age_world
    from worldforge import GENERATOR_VERSION
    from worldforge.summary import summarise
    from worldforge.warehouse import generator_version

    specs, wh, _, _ = catalog
    shutil.copytree(wh, tmp_path / "wh")
    copy = Warehouse(tmp_path / "wh")
    age_world(copy.world("esports_copy"))
    assert summarise(copy).stale == ["esports_copy"] and catalog_report(copy).stale == ["esports_copy"]
    before = {r.world: r for r in read_catalog(copy)}
    r = CliRunner().invoke(app, ["catalog", "build", str(specs), "--warehouse", str(copy.root), "--workers", "1"], env={"COLUMNS": "200"})
    assert r.exit_code == 1, r.output  # the two broken specs fail again
    assert "skipped 1 (unchanged)" in r.output and "rebuilt 1 stale world(s)" in r.output and "esports_copy" in r.output
    after = {r.world: r for r in read_catalog(copy)}
    assert after["esports_2031"] == before["esports_2031"]  # current: skipped, its row kept
    assert after["esports_copy"].status == "built" and after["esports_copy"].built_at >= before["esports_copy"].built_at
    assert after["esports_copy"].rows == before["esports_copy"].rows and after["esports_copy"].tasks == before["esports_copy"].tasks
    assert generator_version(copy.world("esports_copy")) == GENERATOR_VERSION
    assert summarise(copy).stale == [] and catalog_report(copy).stale == []
    again = build_catalog(specs, copy, workers=1)  # now current: skipped, nothing stale
    assert {x.world for x in again.skipped} == {"esports_2031", "esports_copy"} and again.stale == []



def test_a_changed_spec_is_rebuilt(tmp_path, spec_docs):
    specs, wh = tmp_path / "specs", Warehouse(tmp_path / "wh")
    specs.mkdir()
    doc = dict(spec_docs["esports_2031"], world="esports_changed")
    (specs / "w.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    first = build_catalog(specs, wh, workers=1)
    assert [r.status for r in first.rows] == ["built"]
    assert not build_catalog(specs, wh, workers=1).rows  # unchanged: nothing rebuilt
    (specs / "w.yaml").write_text(yaml.safe_dump(dict(doc, seed=5), sort_keys=False))
    third = build_catalog(specs, wh, workers=1)
    assert [r.status for r in third.rows] == ["built"] and third.rows[0].spec_hash != first.rows[0].spec_hash
    assert third.rows[0].rows != first.rows[0].rows or third.rows[0].facts != first.rows[0].facts  # another seed, another world
    assert [r.spec_hash for r in read_catalog(wh)] == [third.rows[0].spec_hash]


def test_rows_are_deterministic_and_the_same_on_one_worker(catalog, tmp_path):
    specs, wh, first, _ = catalog
    one = build_catalog(specs, Warehouse(tmp_path / "wh"), workers=1)
    assert one.workers == 1
    assert _stable(read_catalog(Warehouse(tmp_path / "wh"))) == _stable(read_catalog(Warehouse(wh)))


def test_the_cli_builds_skips_and_exits_1_on_a_failed_world(catalog, tmp_path):
    specs, wh, _, _ = catalog
    shutil.copytree(wh, tmp_path / "wh")
    r = CliRunner().invoke(app, ["catalog", "build", str(specs), "--warehouse", str(tmp_path / "wh"), "--workers", "2"])
    assert r.exit_code == 1, r.output
    assert "built 0, failed 2, skipped 2 (unchanged)" in r.output and "bogus: unknown field" in r.output
    r = CliRunner().invoke(app, ["catalog", "build", str(tmp_path / "missing"), "--warehouse", str(tmp_path / "wh")])
    assert r.exit_code == 2 and "no such spec folder" in r.output
    (tmp_path / "empty").mkdir()
    r = CliRunner().invoke(app, ["catalog", "build", str(tmp_path / "empty"), "--warehouse", str(tmp_path / "wh")])
    assert r.exit_code == 2 and "no world specs" in r.output
    r = CliRunner().invoke(app, ["catalog", "report", "--warehouse", str(tmp_path / "wh")])
    assert r.exit_code == 0 and "distinct schema signatures" in r.output and "esports" in r.output
    assert "median gold rows" in r.output and "base-world tasks" in r.output


def test_the_report(catalog):
    _, wh, _, _ = catalog
    rep = catalog_report(Warehouse(wh))
    assert (rep.worlds, rep.built, rep.failed) == (4, 2, 2)
    assert rep.archetypes == {"(none)": 1, "esports": 1}
    assert rep.signatures == 1 and rep.table_sets == 1 and rep.table_names == 4 and rep.column_names > 20
    assert 0 < rep.shared_entity_names < rep.entity_names and 0 < rep.entity_overlap < 1
    rows = sorted(r.rows for r in read_catalog(Warehouse(wh)) if r.status == "built")
    assert rep.rows == (rows[0], sum(rows) / 2, rows[1]) and rep.years == [2031]
    assert {w for w, _ in rep.failures} == {"broken", "z_clash"}
    figures = rep.figures()
    assert figures["worlds"] == "4" and figures["distinct schema signatures"] == "1" and "%" in figures["entity names in more than one world"]
    built = {r.world: r.tasks for r in read_catalog(Warehouse(wh)) if r.status == "built"}
    assert {w: t.tasks for w, t in rep.world_tasks.items()} == built  # every built world's tasks, counted from its file
    # median gold 14-15 rows: the tasks read the stored spec, in the author's column order since it keeps it (15.0 from the
    # alphabetical order it was stored in before)
    assert all(t.base >= 30 and t.median_gold >= 14 and t.max_gold <= 60 for t in rep.world_tasks.values()), rep.world_tasks
    assert figures["median gold rows per world (min / median / max)"] != "-"
    assert catalog_report(Warehouse(wh.parent / "nothing")).worlds == 0


@pytest.mark.timeout(600)
def test_generated_specs_build_end_to_end_with_workers_recycled_after_every_world(tmp_path):
    """A sample of a generated catalog: every world built, 0 contradictions, oracle F1 = 1.0 on every task. With
    ``recycle=1`` each world gets a fresh worker (on Python 3.11, ``max_tasks_per_child`` could hang here)."""
    from worldforge.catalog.generate import generate_catalog

    made = generate_catalog(3, 11, tmp_path / "specs")
    result = build_catalog(tmp_path / "specs", Warehouse(tmp_path / "wh"), workers=2, recycle=1)
    rows = read_catalog(Warehouse(tmp_path / "wh"))
    assert len(rows) == 3 and len(result.rows) == 3
    for row in rows:
        assert row.status == "built", row.error
        assert row.contradictions == 0 and row.oracle_f1_min == 1.0 and row.tasks >= 20
        assert 300 <= row.rows <= 500 and row.archetype in made.archetypes
    assert len({r.schema_signature for r in rows}) == 3
    # the catalog's oracle episodes are in the episode store every world shares, which the datasets read
    from worldforge.trajectories.episodes import iter_episode_trajectories, read_episodes

    eps = read_episodes(Warehouse(tmp_path / "wh"))
    assert sorted(set(eps["world"])) == sorted(r.world for r in rows)
    assert {t.extra["world"] for t in iter_episode_trajectories(Warehouse(tmp_path / "wh"))} == {r.world for r in rows}
    assert not (tmp_path / "wh" / "catalog_episodes").exists()


def _processes() -> list[tuple[int, int, str]]:
    """``(pid, parent pid, command line)`` of every process (``ps``, as ``tests/ray_cluster.py`` reads sessions).
    ``-ww``: whole command lines, whatever ``COLUMNS`` says (at 80 columns a forkserver's name is cut off)."""
    out = subprocess.run(["ps", "-ww", "-eo", "pid=,ppid=,args="], capture_output=True, text=True, check=True).stdout
    return [(int(f[0]), int(f[1]), f[2] if len(f) > 2 else "") for f in (line.split(None, 2) for line in out.splitlines() if line.strip())]


def _children(pid: int) -> list[int]:
    return [child for child, parent, _ in _processes() if parent == pid]


def _pool_workers() -> list[int]:
    """The catalog pool's worker processes: the children of this process's multiprocessing forkserver (never
    another server a test started, such as a session's `vllm serve` and its engine)."""
    procs = _processes()
    servers = {pid for pid, parent, args in procs if parent == os.getpid() and "multiprocessing.forkserver" in args}
    return [pid for pid, parent, _ in procs if parent in servers]


@pytest.mark.timeout(600)
def test_a_killed_worker_costs_no_world(tmp_path, monkeypatch):
    """Workers killed mid-build (here: SIGKILL to every pool worker once the first world is recorded, as the
    out-of-memory killer would) break their pool; the build goes on with fresh pools, retries the worlds that
    were on the broken one, alone, and every world is built: nothing raises, nothing is lost or recorded twice.
    Only the pool's workers are killed: another grandchild of the test process lives on."""
    import signal

    import worldforge.catalog.build as build
    from worldforge.catalog.generate import generate_catalog

    generate_catalog(4, 5, tmp_path / "specs")
    killed: list[int] = []
    pools: list[tuple[int, int]] = []  # (specs given, specs whose worker died) per _run_pool call
    run_pool = build._run_pool

    def spy(specs, *args):
        lost = run_pool(specs, *args)
        pools.append((len(specs), len(lost)))
        return lost

    monkeypatch.setattr(build, "_run_pool", spy)
    for spec in (tmp_path / "specs").glob("*.yaml"):  # task files an earlier build exported: stale once rebuilt
        stale = tmp_path / "wh" / "tasks" / yaml.safe_load(spec.read_text())["world"]
        stale.mkdir(parents=True)
        (stale / "tasks.jsonl").write_text("{}\n")

    def kill_workers(row, outcome):
        if not killed:
            victims = _pool_workers()
            assert victims, "no worker process found"
            for pid in victims:  # every pool worker alive: the pools with worlds in flight break
                os.kill(pid, signal.SIGKILL)
            killed.extend(victims)

    bystander = subprocess.Popen(["sh", "-c", "sleep 300 & wait"])  # a grandchild that is no pool worker (as vllm's engine is)
    try:
        result = build_catalog(tmp_path / "specs", Warehouse(tmp_path / "wh"), workers=2, recycle=1, progress=kill_workers)
        assert bystander.poll() is None and not any(pid in killed for pid in _children(bystander.pid))
    finally:
        subprocess.run(["pkill", "-P", str(bystander.pid)], check=False)
        bystander.wait(10)
    assert killed
    rows = read_catalog(Warehouse(tmp_path / "wh"))
    assert len(rows) == 4 and len(result.rows) == 4 and len({r.spec_path for r in result.rows}) == 4
    assert all(r.status == "built" for r in rows), [(r.world, r.error) for r in rows]
    first, *retries = pools  # the worlds in flight on a broken pool come back and are retried alone (one was in
    assert first[0] == 4 and len(retries) == first[1]  # flight unless both finished at once: then the next submit breaks)
    assert all(given == 1 and lost == 0 for given, lost in retries)
    assert not any((tmp_path / "wh" / "tasks").iterdir())  # the stale exports went with the rebuild
