"""Kill -9 at any point, then run again (issue "hardening round 4", item 1).

Each case runs a real ``python -m worldforge.cli ...`` (or a drain) as a subprocess in its own session, kills it
with SIGKILL at seeded random delays spread over the first part of a clean run's measured duration and right when
a temporary ``.tmp-*`` file or folder appears (the write boundary: the moment a world file, a dataset folder or a
store copy is being written), checks after each kill that the target holds the previous state or the complete new one,
then runs once more to the end and compares with a clean run: the same content (digests, sorted rows), no
record twice, no ``.tmp-*`` left behind.

How many kills land depends on the machine's speed (a delay drawn from a clean run measured under load may come
after a later, faster run finished): no test counts them. Each requires one kill that really interrupted the run,
which the write-boundary kill guarantees: it is tried again (the state reset as after any finished run) until it
catches the temporary, a few runs at most.

Covered: ``datasets build cpt`` (its folder swapped in by ``atomic_dir``), ``trajectories ingest`` on the real
trajectories of ``../shared/data`` (a copy of ``trajectories.duckdb`` replaces it), the episode log's drain
(parts added to the episode store, then the log cut), and ``catalog build --engine ray`` with the Ray worker
that builds a world killed mid-world (marked ``ray``).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from tests.conftest import ROOT, TRAJECTORIES
from worldforge.warehouse import Warehouse

SEED = 20240531
CLI = [sys.executable, "-m", "worldforge.cli"]


def _leftovers(root: Path) -> list[str]:
    """Temporaries under ``root``: any ``*.tmp-*`` name, file or folder (``.wal`` and ``.old`` siblings included)."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if ".tmp-" in p.name or p.name.endswith(".old"))


def _run(argv: list[str], env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return proc


def _kill_at(argv: list[str], when: float | Callable[[], bool], limit_s: float, env: dict | None = None) -> str:
    """Start ``argv`` in its own session and SIGKILL its whole group after ``when`` seconds, or as soon as
    ``when()`` is true (polled every millisecond); returns what happened: ``killed`` or ``finished``."""
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + limit_s
        if callable(when):
            while proc.poll() is None and not when() and time.monotonic() < deadline:
                time.sleep(0.001)
        else:
            end = time.monotonic() + when
            while proc.poll() is None and time.monotonic() < end:
                time.sleep(0.005)
        if proc.poll() is not None:
            return "finished"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
        return "killed"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)


def _timed(argv: list[str], env: dict | None = None) -> float:
    start = time.monotonic()
    _run(argv, env)
    return time.monotonic() - start


def _delays(duration: float, n: int, salt: str) -> list[float]:
    """``n`` seeded delays spread over ``[0.15, 0.6] x duration``: the lower part of the measured time (the first
    part of a run is Python's imports), so that most land before a later, faster run ends."""
    rng = random.Random(f"{SEED}-{salt}")
    return sorted(rng.uniform(0.15 * duration, 0.6 * duration) for _ in range(n))


BOUNDARY_TRIES = 5
"""Runs a write-boundary kill point may take to catch its temporary (each run that finishes is reset and run again)."""


def _kill_points(argv: list[str], points: list, limit_s: float, check: Callable[[str], None]) -> list[str]:
    """Kill ``argv`` at each point (:func:`_kill_at`), calling ``check(outcome)`` after each run (it checks the
    state and resets it after a run that finished). A write-boundary point (a callable) is tried again, up to
    :data:`BOUNDARY_TRIES` runs, until it catches the run mid-write. Returns each point's last outcome."""
    outcomes = []
    for when in points:
        for _ in range(BOUNDARY_TRIES if callable(when) else 1):
            outcome = _kill_at(argv, when, limit_s=limit_s)
            check(outcome)
            if outcome == "killed":
                break
        outcomes.append(outcome)
    return outcomes


def _appeared(folder: Path, pattern: str) -> Callable[[], bool]:
    return lambda: any(True for _ in folder.glob(pattern))


# -- datasets build cpt ---------------------------------------------------------------------------------------


def _dataset_digest(folder: Path) -> dict[str, str] | None:
    """What a dataset folder holds (``None``: no folder): MD5 of every file, the Parquet file's rows sorted."""
    if not folder.exists():
        return None
    import pyarrow.parquet as pq

    out = {}
    for f in sorted(folder.iterdir()):
        if f.suffix == ".parquet":
            rows = sorted(json.dumps(r, sort_keys=True, default=str) for r in pq.read_table(f).to_pylist())
            out[f.name] = hashlib.md5("\n".join(rows).encode()).hexdigest()
        else:
            out[f.name] = hashlib.md5(f.read_bytes()).hexdigest()
    return out


@pytest.mark.timeout(600)
def test_a_killed_datasets_build_leaves_the_previous_dataset_or_the_new_one(tmp_path):
    from worldforge.llm.tiny import build_tiny_tokenizer
    from worldforge.trajectories.store import ingest

    wh, tok = tmp_path / "wh", tmp_path / "tok"
    assert ingest([TRAJECTORIES / "intercode", TRAJECTORIES / "swe-agent"], Warehouse(wh)).tally.balanced
    build_tiny_tokenizer(tok, vocab_size=2048)
    base = [*CLI, "datasets", "build", "cpt", "--warehouse", str(wh), "--tokenizer", str(tok), "--no-pages"]
    clean = tmp_path / "clean"
    duration = _timed([*base, "--output", str(clean), "--max-tokens", "512"])
    new = _dataset_digest(clean)
    target = wh / "datasets" / "cpt"
    _run([*base, "--max-tokens", "1024"])  # the previous dataset: another token budget, other samples
    previous = _dataset_digest(target)
    assert previous != new and set(previous) == set(new) == {"README.md", "cpt.parquet", "report.json", "text.jsonl", "tokenized.jsonl"}

    argv = [*base, "--max-tokens", "512"]
    points = [*_delays(duration, 3, "cpt"), _appeared(target.parent, ".cpt.tmp-*")]

    def check(outcome: str) -> None:
        mid_swap = not target.exists() and any(p.name.endswith(".old") for p in target.parent.iterdir())
        assert _dataset_digest(target) in (previous, new) or mid_swap  # never a half-written dataset (killed between the
        # two renames of the swap, the old folder is aside and the new one complete: the next build puts the new one in)

    outcomes = _kill_points(argv, points, duration * 3, check)
    assert outcomes[-1] == "killed", outcomes  # the write-boundary kill interrupted a build (how many timed ones did: the speed)
    assert any(p.name.startswith(".cpt.tmp-") for p in target.parent.iterdir()), "no kill left a temporary to clean up"
    _run(argv)
    assert _dataset_digest(target) == new
    assert _leftovers(wh / "datasets") == []  # the killed builds' folders went with the next build


# -- trajectories ingest ---------------------------------------------------------------------------------------


def _store_digest(path: Path) -> tuple[dict[str, str], int, int]:
    """The trajectory store's content, one MD5 per table over its rows sorted (as ``content_digests``, timestamps left
    out; ``DOUBLE`` columns rounded to 9 significant digits: the corpus statistics are sums DuckDB adds up in parallel,
    whose last bits differ from one clean run to the next), and its trajectory and distinct-id counts."""
    from worldforge.warehouse.duck import quote_ident

    con = duckdb.connect(str(path), read_only=True)
    try:
        digests = {}
        for (table,) in con.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall():
            cols = [f"round({quote_ident(c)} / 10 ** floor(log10(abs(nullif({quote_ident(c)}, 0)))), 8)" if kind in ("DOUBLE", "FLOAT")
                    else quote_ident(c) for c, kind in con.execute(
                        "SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = ? ORDER BY column_index", [table]).fetchall()
                    if not kind.startswith("TIMESTAMP")]
            row = f"CAST(row({', '.join(cols)}) AS VARCHAR)"
            digests[table] = con.execute(f"SELECT md5(coalesce(string_agg({row}, chr(10) ORDER BY {row}), '')) FROM {quote_ident(table)}").fetchone()[0]
        n, distinct = con.execute("SELECT count(*), count(DISTINCT trajectory_id) FROM trajectories").fetchone()
    finally:
        con.close()
    return digests, n, distinct


@pytest.mark.timeout(600)
def test_a_killed_ingest_leaves_the_previous_store_or_the_new_one(tmp_path):
    first, second = [str(TRAJECTORIES / "intercode")], [str(TRAJECTORIES / s) for s in ("swe-agent", "openhands", "tau-bench")]
    clean = tmp_path / "clean"
    _run([*CLI, "trajectories", "ingest", *first, "--warehouse", str(clean)])
    duration = _timed([*CLI, "trajectories", "ingest", *first, *second, "--warehouse", str(clean)])
    new = _store_digest(clean / "trajectories.duckdb")

    wh = tmp_path / "wh"
    _run([*CLI, "trajectories", "ingest", *first, "--warehouse", str(wh)])
    store = wh / "trajectories.duckdb"
    previous = _store_digest(store)
    assert previous[0] != new[0] and previous[1] == previous[2] and new[1] == new[2]
    kept = store.read_bytes()
    argv = [*CLI, "trajectories", "ingest", *first, *second, "--warehouse", str(wh)]
    points = [_appeared(wh, ".trajectories.duckdb.tmp-*"), *_delays(duration, 5, "ingest")]

    def check(outcome: str) -> None:
        assert _store_digest(store) in (previous, new)
        if outcome == "finished":  # the next kill point starts from the previous store again (else it has nothing to do)
            store.write_bytes(kept)

    outcomes = _kill_points(argv, points, duration * 3, check)
    assert outcomes[0] == "killed", outcomes  # the write-boundary kill interrupted an ingest (how many timed ones did: the speed)
    _run(argv)
    got = _store_digest(store)
    assert got == new and got[1] == got[2]  # the same records, none twice
    assert _leftovers(wh) == []
    again = _run(argv)  # a third run finds every file ingested: nothing read again, nothing added
    assert "unchanged since they were ingested" in again.stdout and _store_digest(store) == new


# -- the episode log's drain ------------------------------------------------------------------------------------

N_EPISODES = 240
DRAIN = """
import sys
import worldforge.trajectories.episodes.log as episode_log
from worldforge.warehouse import Warehouse
episode_log.DRAIN_BATCH_BYTES = 6_000  # small batches: a kill finds some recorded and the log not yet cut
episode_log.drain_episode_log(Warehouse(sys.argv[1]))
"""


def _episodes(n: int):
    from worldforge.trajectories.episodes import Episode, Observation

    for i in range(n):
        steps = [({"name": "web_search", "arguments": {"query": f"q{i}-{j}"}}, Observation(f"result {i} {j} " * 20, "web_search"))
                 for j in range(3)]
        yield Episode(episode_id=f"ep-{i:04d}", world=("esports_2031", "mars_colony_2030")[i % 2], scenario=None, task_id=None,
                      question=f"question {i}", seed=i, perturbations_json="{}", agent="kill9", steps=steps, finished=True)


def _parts_ids(wh: Path) -> list[str]:
    """Episode ids in the store's parts as they are on disk (no drain first: the readers would drain)."""
    files = sorted(str(p) for p in (wh / "episodes").glob("*/p-*/episodes.parquet"))
    if not files:
        return []
    return [r[0] for r in duckdb.sql(f"SELECT DISTINCT episode_id FROM read_parquet({files!r})").fetchall()]


def _log_ids(wh: Path) -> list[str]:
    path = wh / "episodes.log.jsonl"
    if not path.exists():
        return []
    ids = []
    for line in path.read_text().splitlines():
        try:
            ids.append(json.loads(line)["episode_id"])
        except (ValueError, KeyError):
            pass  # a torn line (there is none here: the log is written before the kills)
    return ids


def _episode_rows(wh: Path) -> dict[str, list]:
    from worldforge.trajectories.episodes import read_episode_tables

    tables = read_episode_tables(Warehouse(wh))
    return {t: sorted(map(str, f.drop("recorded_at", strict=False).rows())) for t, f in tables.items()}


@pytest.mark.timeout(600)
def test_a_killed_drain_loses_no_episode_and_records_none_twice(tmp_path):
    from worldforge.trajectories.episodes import log_episodes

    clean, wh = tmp_path / "clean", tmp_path / "wh"
    for w in (clean, wh):
        log_episodes(Warehouse(w), list(_episodes(N_EPISODES)))
    argv = [sys.executable, "-c", DRAIN]
    duration = _timed([*argv, str(clean)])
    expected = _episode_rows(clean)
    assert len(expected["episodes"]) == N_EPISODES
    ids = {f"ep-{i:04d}" for i in range(N_EPISODES)}
    # the log's copy (.episodes.log.jsonl.tmp-*) lives for microseconds, and only when lines were appended during the
    # drain: that point rarely catches it (its runs still check the state); the part being written is the boundary
    points = [*_delays(duration, 6, "drain"), _appeared(wh, ".episodes.log.jsonl.tmp-*"), _appeared(wh / "episodes", "*/.tmp-*")]

    def check(outcome: str) -> None:
        assert set(_parts_ids(wh)) | set(_log_ids(wh)) == ids  # every episode in the store or still in the log
        if outcome == "finished":
            log_episodes(Warehouse(wh), list(_episodes(N_EPISODES)))  # the same episodes once more: drained again, replaced by id

    outcomes = _kill_points([*argv, str(wh)], points, duration * 3, check)
    assert outcomes[-1] == "killed", outcomes  # a drain interrupted while it wrote a part (how many timed kills landed: the speed)
    # a drain killed while it cut the log leaves the log's copy (named by its pid): the next cut, under the log's
    # lock, removes it; the same episodes logged once more are recorded again, replaced by id
    (wh / ".episodes.log.jsonl.tmp-4194305").write_text("a partial copy of the log\n")
    log_episodes(Warehouse(wh), list(_episodes(N_EPISODES)))
    _run([*argv, str(wh)])
    assert _episode_rows(wh) == expected  # the same rows, one per episode id
    assert not (wh / "episodes.log.jsonl").exists() and not (wh / "episodes.log.rejected.jsonl").exists()
    assert _leftovers(wh) == []


# -- catalog build --engine ray: a worker killed mid-world -----------------------------------------------------


def _ray_workers_building(sid: int) -> list[int]:
    """The Ray worker processes of the cluster's session that run a world now (their title names the task)."""
    out = subprocess.run(["ps", "-ww", "-eo", "pid=,sid=,args="], capture_output=True, text=True, check=True).stdout
    found = []
    for line in out.splitlines():
        f = line.split(None, 2)
        if len(f) == 3 and int(f[1]) == sid and f[2].startswith("ray::build_world_entry"):
            found.append(int(f[0]))
    return found


@pytest.mark.ray
@pytest.mark.timeout(900)
def test_a_ray_worker_killed_mid_world_costs_no_world(tmp_path, monkeypatch):
    """The worker that builds a world is SIGKILLed once the world file's temporary appears; Ray retries the task on
    a fresh worker, whose write of the same world removes the killed one's temporary. The catalog then equals a
    clean process-pool build's, world file by world file."""
    from tests.catalog.test_build import _stable
    from tests.ray_cluster import AUTH, RayHead
    from worldforge.catalog.build import build_catalog, read_catalog
    from worldforge.catalog.generate import generate_catalog
    from worldforge.warehouse.worlds import content_digests

    specs = tmp_path / "specs"
    generate_catalog(2, 3, specs)
    ref = tmp_path / "ref"
    assert build_catalog(specs, Warehouse(ref), workers=1).built == 2
    wh = tmp_path / "wh"
    for name, value in AUTH.items():
        monkeypatch.setenv(name, value)
    with RayHead(dashboard=False) as head:
        proc = subprocess.Popen([*CLI, "catalog", "build", str(specs), "--warehouse", str(wh), "--engine", "ray",
                                 "--address", head.address, "--workers", "1"],
                                cwd=ROOT, env=head.env, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            killed = None
            deadline = time.monotonic() + 300
            while killed is None and proc.poll() is None and time.monotonic() < deadline:
                if any(wh.glob(".*.duckdb.tmp-*")):  # a world file is being written
                    workers = _ray_workers_building(head.sid)
                    if workers:
                        os.kill(workers[0], signal.SIGKILL)
                        killed = workers[0]
                time.sleep(0.005)
            out, _ = proc.communicate(timeout=600)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(30)
    assert killed is not None, "no Ray worker was caught writing a world"
    assert proc.returncode == 0, out[-3000:]
    assert "built 2, failed 0" in out, out[-2000:]
    assert _stable(read_catalog(Warehouse(wh))) == _stable(read_catalog(Warehouse(ref)))  # the rows, one per world, none twice
    for row in read_catalog(Warehouse(ref)):
        assert content_digests(wh / f"{row.world}.duckdb") == content_digests(ref / f"{row.world}.duckdb"), row.world
    assert [p for p in _leftovers(wh) if not p.startswith("logs")] == []
