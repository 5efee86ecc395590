"""Damaged stores, built for real: noise in a block of a world file, a truncated and an overwritten Parquet
part, a torn episode log, a catalog row pointing at a missing world. Each is one clear line naming the file
(never a traceback, never rows quietly changed), and ``worldforge doctor`` lists it, exits 1 and, with
``--quarantine``, moves it aside so the next build writes it anew."""

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from tests.conftest import SPECS_DIR
from tests.conftest_worlds import built_world
from worldforge.catalog.build import CatalogRow, write_row
from worldforge.errors import WarehouseError
from worldforge.simenv.env import Observation
from worldforge.trajectories.episodes import Episode, drain_episode_log, episode_line, iter_episode_trajectories, log_episodes, read_episodes, record_episodes
from worldforge.warehouse import Warehouse
from worldforge.warehouse import doctor as doctor_module
from worldforge.warehouse.doctor import diagnose, quarantine
from worldforge.warehouse.duck import open_readonly, query_readonly
from worldforge.warehouse.layout import repair_hint
from worldforge.warehouse.parts import MANIFEST, list_parts
from worldforge.warehouse.worlds import content_digests
from worldforge.world import check_world_file

SPEC = "smartphones_2029"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def pristine(specs, tmp_path_factory) -> Path:
    """A real world file with its corpus (built once; each test damages a copy)."""
    return built_world(specs[SPEC], tmp_path_factory.mktemp("pristine"))


def _copy(pristine: Path, wh: Path) -> Path:
    wh.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copyfile(pristine, wh / pristine.name))


def _block_of(path: Path, table: str) -> int:
    """The byte offset of a data block of ``table`` (DuckDB's storage info: 12 KiB of headers, then blocks)."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        size = con.execute("SELECT block_size FROM pragma_database_size()").fetchone()[0]
        block = con.execute(f"SELECT max(block_id) FROM pragma_storage_info('{table}') WHERE block_id >= 0").fetchone()[0]
    finally:
        con.close()
    assert block is not None
    return 3 * 4096 + block * size


def _noise(path: Path, offset: int, n: int = 4096) -> None:
    with open(path, "r+b") as f:
        f.seek(offset + 64)  # past the block's checksum: the data is what changes
        f.write(random.Random(offset).randbytes(n))


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "400"}
    return subprocess.run([sys.executable, "-m", "worldforge.cli", *args], capture_output=True, text=True, cwd=REPO, env=env, timeout=120)


def _one_line(proc: subprocess.CompletedProcess, path: Path) -> str:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    line = " ".join(proc.stderr.split())
    assert f"{path} is damaged" in line and "worldforge doctor" in line, line
    return line


def _episode(eid: str) -> Episode:
    steps = [({"name": "web_search", "arguments": {"query": f"q{i}"}}, Observation(f"observation {eid} {i} " * 20, "web_search", revealed=[{"url": "u"}]))
             for i in range(3)]
    return Episode(episode_id=eid, world=SPEC, scenario=None, task_id=None, question="q", seed=3,
                   perturbations_json="{}", agent="test", steps=steps, finished=True)


# -- world files -----------------------------------------------------------------------------------


def test_world_check_reads_every_block_and_says_damaged_in_one_line(pristine, tmp_path):
    path = _copy(pristine, tmp_path / "wh")
    _noise(path, _block_of(path, "corpus_pages"))  # a block no invariant query reads
    with pytest.raises(WarehouseError, match="is damaged .*checksum mismatch in the block at byte"):
        check_world_file(path)
    line = _one_line(_cli("world", "check", str(path)), path)
    assert "worldforge world run" in line


def test_every_reader_of_a_damaged_world_names_it(pristine, tmp_path):
    path = _copy(pristine, tmp_path / "wh")
    _noise(path, _block_of(path, "corpus_pages"))
    with pytest.raises(WarehouseError, match=f"{path} is damaged"):
        content_digests(path)
    with open_readonly(path) as con, pytest.raises(WarehouseError, match=f"{path} is damaged"):
        con.sql("SELECT * FROM corpus_pages").pl()
    with pytest.raises(WarehouseError, match="is damaged"):
        query_readonly(path, "SELECT * FROM corpus_pages", limit=5)
    _one_line(_cli("sql", SPEC, "SELECT * FROM corpus_pages", "--warehouse", str(path.parent)), path)


def test_a_damaged_header_is_one_line(pristine, tmp_path):
    path = _copy(pristine, tmp_path / "wh")
    _noise(path, 4096 - 64, 512)  # the first database header
    with pytest.raises(WarehouseError, match=f"{path} is damaged"):
        open_readonly(path)
    _one_line(_cli("world", "check", str(path)), path)


# -- Parquet parts ---------------------------------------------------------------------------------


def test_a_truncated_part_is_named_on_read(tmp_path):
    record_episodes(Warehouse(tmp_path), [_episode("e-1"), _episode("e-2")])
    (part,) = list_parts(tmp_path / "episodes")
    assert (part / MANIFEST).is_file()
    turns = part / "turns.parquet"
    with open(turns, "r+b") as f:
        f.truncate(turns.stat().st_size // 2)
    with pytest.raises(WarehouseError, match=f"{turns} is damaged .*truncated"):
        read_episodes(Warehouse(tmp_path))


def test_overwritten_part_bytes_fail_a_dataset_read_instead_of_changing_rows(tmp_path):
    record_episodes(Warehouse(tmp_path), [_episode("e-1"), _episode("e-2")])
    assert len(list(iter_episode_trajectories(Warehouse(tmp_path)))) == 2
    (part,) = list_parts(tmp_path / "episodes")
    turns = part / "turns.parquet"
    size = turns.stat().st_size
    _noise(turns, size // 3 - 64, 64)  # same size: only the recorded SHA-256 sees it
    assert turns.stat().st_size == size
    with pytest.raises(WarehouseError, match=f"{turns} is damaged .*SHA-256"):
        list(iter_episode_trajectories(Warehouse(tmp_path)))
    (found,) = [f for f in diagnose(Warehouse(tmp_path)) if f.kind == "part"]
    assert found.state == "damaged" and "SHA-256" in found.detail


# -- the doctor ------------------------------------------------------------------------------------


def test_doctor_lists_each_fault_exits_1_and_quarantine_lets_the_build_run_again(pristine, tmp_path):
    wh = tmp_path / "wh"
    world = _copy(pristine, wh)
    _noise(world, _block_of(world, "corpus_facts"))
    record_episodes(Warehouse(wh), [_episode("e-1")])
    (part,) = list_parts(wh / "episodes")
    (part / "steps.parquet").write_bytes((part / "steps.parquet").read_bytes()[:100])
    log = wh / "episodes.log.jsonl"
    log.write_text('{"episode_id": "whole"}\n{"episode_id": "cut off mid-wri', encoding="utf-8")

    proc = _cli("doctor", str(wh))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    rows = {line.split("│")[1].strip(): line for line in proc.stdout.splitlines() if line.count("│") >= 5}
    assert "damaged" in rows[world.name] and "checksum mismatch" in rows[world.name]
    assert "damaged" in rows[str(part.relative_to(wh))] and "steps.parquet" in rows[str(part.relative_to(wh))]
    assert "torn" in rows[log.name]
    assert "2 damaged" in proc.stdout and "1 torn" in proc.stdout

    proc = _cli("doctor", "--warehouse", str(wh), "--quarantine")
    assert proc.returncode == 1 and "moved" in proc.stdout
    assert not world.exists() and not part.exists() and log.exists()  # a torn log is not damage: it stays
    moved = sorted(p.relative_to(wh) for p in (wh / "quarantine").rglob("*") if p.is_file())
    assert any(p.name == world.name for p in moved) and any(p.name == "steps.parquet" for p in moved)

    proc = _cli("doctor", str(wh))
    assert proc.returncode == 0, proc.stdout + proc.stderr  # readers no longer trip on anything
    built = _cli("world", "build", str(SPECS_DIR / f"{SPEC}.yaml"), "--warehouse", str(wh))
    assert built.returncode == 0, built.stdout + built.stderr
    assert _cli("world", "check", str(world)).returncode == 0


def test_a_catalog_row_pointing_at_a_missing_world(tmp_path):
    spec = SPECS_DIR / f"{SPEC}.yaml"
    write_row(Warehouse(tmp_path), CatalogRow(world=SPEC, spec_path=str(spec), spec_hash="x", status="built"))
    (found,) = diagnose(Warehouse(tmp_path))[1:]  # after the catalog file's own finding
    assert found.kind == "catalog" and found.state == "missing" and found.path == tmp_path / f"{SPEC}.duckdb"
    assert quarantine(Warehouse(tmp_path), [found]) == []  # a row is not a file: nothing moved, the next catalog build rebuilds it
    proc = _cli("doctor", str(tmp_path))
    assert proc.returncode == 1 and "missing" in proc.stdout and "catalog build" in proc.stdout


def test_a_file_that_cannot_be_read_is_an_unreadable_row_not_a_traceback(pristine, tmp_path, monkeypatch):
    """An I/O error DuckDB does not call damage, a permission refused on a part's stat: one row each, the doctor goes on."""
    wh = tmp_path / "wh"
    world = _copy(pristine, wh)
    record_episodes(Warehouse(wh), [_episode("e-1")])
    (part,) = list_parts(wh / "episodes")

    def io_error(path):
        raise duckdb.IOException(f'IO Error: Could not read from file "{path}": Input/output error')

    def refused(part, full=False):
        raise PermissionError(13, "Permission denied", str(part / "turns.parquet"))

    monkeypatch.setattr(doctor_module, "read_every_block", io_error)
    monkeypatch.setattr(doctor_module, "verify_part", refused)
    found = {f.path: f for f in diagnose(Warehouse(wh))}
    for path in (world, part):
        assert found[path].state == "unreadable" and found[path].failed and not found[path].movable, found[path]
    assert "Input/output error" in found[world].detail and "PermissionError" in found[part].detail
    assert quarantine(Warehouse(wh), list(found.values())) == [] and world.exists() and part.exists()  # not damage: nothing moved


def test_a_torn_line_closed_off_by_a_later_append_is_torn_as_the_drain_treats_it(tmp_path):
    """The next append starts a new line after a torn one: the drain sets that line aside and records the rest, so
    the doctor says ``torn`` (not a failure), and ``--quarantine`` never moves the log and its pending sessions."""
    log = tmp_path / "episodes.log.jsonl"
    log.write_text(episode_line(_episode("before")) + '{"episode_id": "cut off mid-wri', encoding="ascii")
    log_episodes(Warehouse(tmp_path), [_episode("after")])  # starts a new line after the torn one
    (found,) = diagnose(Warehouse(tmp_path))
    assert found.kind == "log" and found.state == "torn" and not found.failed and not found.movable, found
    assert "line 2" in found.detail and "rejected" in found.action
    assert quarantine(Warehouse(tmp_path), [found]) == [] and log.exists()
    proc = _cli("doctor", str(tmp_path), "--quarantine")
    assert proc.returncode == 0 and "torn" in proc.stdout and log.exists(), proc.stdout + proc.stderr
    drained = drain_episode_log(Warehouse(tmp_path))  # what the doctor said: one line set aside, the others recorded
    assert (drained.recorded, drained.rejected) == (2, 1)
    assert (tmp_path / "episodes.log.rejected.jsonl").is_file()
    assert sorted(read_episodes(Warehouse(tmp_path))["episode_id"].to_list()) == ["after", "before"]


def test_the_doctor_reads_the_episode_log_line_by_line(tmp_path):
    import tracemalloc

    line = episode_line(_episode("e-0"))
    log = tmp_path / "episodes.log.jsonl"
    log.write_text(line * ((16 << 20) // len(line)), encoding="ascii")  # 16 MiB of log
    tracemalloc.start()
    try:
        (found,) = diagnose(Warehouse(tmp_path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert found.state == "ok"
    assert peak < 4 << 20, f"{peak:,} bytes at the peak for a {log.stat().st_size:,}-byte log"


def test_a_damaged_episode_part_file_says_quarantine(tmp_path):
    """The episode store's files are three levels under it (``episodes/<world>/<part>/<file>``)."""
    for path in (tmp_path / "episodes" / SPEC / "p-0001" / "turns.parquet", tmp_path / "episodes" / SPEC / "p-0001" / MANIFEST):
        assert "worldforge doctor --quarantine" in repair_hint(path), path
    record_episodes(Warehouse(tmp_path), [_episode("e-1")])
    (part,) = list_parts(tmp_path / "episodes")
    (part / "steps.parquet").write_bytes((part / "steps.parquet").read_bytes()[:100])
    (found,) = [f for f in diagnose(Warehouse(tmp_path)) if f.kind == "part"]
    assert found.state == "damaged" and "worldforge doctor --quarantine" in found.action, found
