"""A failed atomic write leaves no temporary file or folder behind and the previous content untouched."""

import json
import os

import duckdb
import pytest

from worldforge.warehouse import atomic, duck
from worldforge.warehouse.atomic import atomic_dir, atomic_file, write_jsonl_atomic
from worldforge.warehouse.duck import atomic_duckdb, open_readonly


class Boom(Exception):
    """The failure raised on purpose."""


FAILURES = [Boom, KeyboardInterrupt]


def names(folder):
    """Every entry in ``folder`` (hidden ones included), sorted."""
    return sorted(p.name for p in folder.iterdir())


def no_temporaries(folder, *expected):
    """``folder`` holds exactly ``expected``: no ``.tmp-*`` file or folder, no ``.old`` folder, no ``.wal``."""
    left = names(folder)
    assert not [n for n in left if ".tmp" in n or n.endswith((".old", ".wal"))], left
    assert left == sorted(expected), left


def fail_on_call(monkeypatch, module, n):
    """Make the ``n``-th call (1-based) of ``module.os.replace`` raise ``OSError``."""
    real = os.replace
    calls = []

    def replace(src, dst):
        calls.append((src, dst))
        if len(calls) == n:
            raise OSError("disk on fire")
        return real(src, dst)

    monkeypatch.setattr(module.os, "replace", replace)
    return calls


# -- atomic_file ------------------------------------------------------------------------------


@pytest.mark.parametrize("exc", FAILURES)
def test_atomic_file_failure_inside_the_block(tmp_path, exc):
    target = tmp_path / "data.txt"
    target.write_text("previous")
    with pytest.raises(exc):
        with atomic_file(target) as tmp:
            tmp.write_text("half written")
            tmp.with_name(tmp.name + ".tmp").write_text("a writer's own temporary file")  # DuckDB COPY's USE_TMP_FILE
            raise exc()
    assert target.read_text() == "previous"
    no_temporaries(tmp_path, "data.txt")


def test_atomic_file_failure_without_a_previous_file(tmp_path):
    with pytest.raises(Boom):
        with atomic_file(tmp_path / "new.txt") as tmp:
            tmp.write_text("half")
            raise Boom()
    no_temporaries(tmp_path)


def test_atomic_file_failing_rename(tmp_path, monkeypatch):
    target = tmp_path / "data.txt"
    target.write_text("previous")
    fail_on_call(monkeypatch, atomic, 1)
    with pytest.raises(OSError, match="disk on fire"):
        with atomic_file(target) as tmp:
            tmp.write_text("new")
    assert target.read_text() == "previous"
    no_temporaries(tmp_path, "data.txt")


def test_atomic_file_failing_duckdb_copy(tmp_path):
    target = tmp_path / "shard.parquet"
    con = duckdb.connect(":memory:")
    con.execute(f"COPY (SELECT 1 AS x) TO '{target}' (FORMAT parquet)")
    before = target.read_bytes()
    with pytest.raises(duckdb.Error):
        with atomic_file(target) as tmp:
            con.execute(f"COPY (SELECT CASE WHEN range < 5000 THEN range ELSE error('boom') END AS x FROM range(10000)) TO '{tmp}' (FORMAT parquet)")
    con.close()
    assert target.read_bytes() == before
    no_temporaries(tmp_path, "shard.parquet")


def test_atomic_file_success(tmp_path):
    target = tmp_path / "data.txt"
    target.write_text("previous")
    with atomic_file(target) as tmp:
        tmp.write_text("new")
    assert target.read_text() == "new"
    no_temporaries(tmp_path, "data.txt")


# -- write_jsonl_atomic -----------------------------------------------------------------------


def rows_then(exc):
    """Two good rows, then ``exc``."""
    yield {"a": 1}
    yield {"a": 2}
    raise exc()


@pytest.mark.parametrize("rows", [rows_then(Boom), rows_then(KeyboardInterrupt), [{"a": 1}, {"a": object()}]], ids=["error", "interrupt", "unserialisable"])
def test_write_jsonl_atomic_failing_writer(tmp_path, rows):
    target = tmp_path / "rows.jsonl"
    write_jsonl_atomic(target, [{"old": True}])
    with pytest.raises((Boom, KeyboardInterrupt, TypeError)):
        write_jsonl_atomic(target, rows)
    assert [json.loads(line) for line in target.read_text().splitlines()] == [{"old": True}]
    no_temporaries(tmp_path, "rows.jsonl")


def test_write_jsonl_atomic_success(tmp_path):
    target = tmp_path / "rows.jsonl"
    write_jsonl_atomic(target, [{"a": "é"}])
    assert target.read_text(encoding="utf-8") == '{"a": "é"}\n'
    no_temporaries(tmp_path, "rows.jsonl")


# -- atomic_dir -------------------------------------------------------------------------------


def previous_dir(tmp_path):
    """A folder ``out`` with one file and a subfolder."""
    out = tmp_path / "out"
    (out / "sub").mkdir(parents=True)
    (out / "a.txt").write_text("previous")
    (out / "sub" / "b.txt").write_text("previous b")
    return out


def dir_content(folder):
    """Relative path -> bytes of every file below ``folder``."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("exc", FAILURES)
def test_atomic_dir_failure_inside_the_block(tmp_path, exc):
    out = previous_dir(tmp_path)
    before = dir_content(out)
    with pytest.raises(exc):
        with atomic_dir(out) as tmp:
            (tmp / "a.txt").write_text("half")
            (tmp / "deep" / "er").mkdir(parents=True)
            raise exc()
    assert dir_content(out) == before
    no_temporaries(tmp_path, "out")


def test_atomic_dir_failure_without_a_previous_folder(tmp_path):
    with pytest.raises(Boom):
        with atomic_dir(tmp_path / "new") as tmp:
            (tmp / "x").write_text("half")
            raise Boom()
    no_temporaries(tmp_path)


@pytest.mark.parametrize("n", [1, 2], ids=["moving-old-out", "moving-new-in"])
def test_atomic_dir_failing_swap_puts_the_old_folder_back(tmp_path, monkeypatch, n):
    out = previous_dir(tmp_path)
    before = dir_content(out)
    fail_on_call(monkeypatch, atomic, n)
    with pytest.raises(OSError, match="disk on fire"):
        with atomic_dir(out) as tmp:
            (tmp / "a.txt").write_text("new")
    assert dir_content(out) == before
    no_temporaries(tmp_path, "out")


def test_atomic_dir_success(tmp_path):
    out = previous_dir(tmp_path)
    with atomic_dir(out) as tmp:
        (tmp / "c.txt").write_text("new")
    assert dir_content(out) == {"c.txt": b"new"}
    assert (out.stat().st_mode & 0o777) == 0o755
    no_temporaries(tmp_path, "out")


# -- atomic_duckdb ----------------------------------------------------------------------------


def write_db(path, value):
    """A DuckDB file with ``t(x) = [value]``, through :func:`atomic_duckdb`."""
    with atomic_duckdb(path) as con:
        con.execute("CREATE TABLE t (x INTEGER)")
        con.execute("INSERT INTO t VALUES (?)", [value])


def db_value(path):
    """``t.x`` of a DuckDB file."""
    con = open_readonly(path)
    try:
        return con.execute("SELECT x FROM t").fetchall()
    finally:
        con.close()


@pytest.mark.parametrize("update", [False, True], ids=["fresh", "update"])
@pytest.mark.parametrize("exc", FAILURES)
def test_atomic_duckdb_failure_inside_the_block(tmp_path, exc, update):
    path = tmp_path / "w.duckdb"
    write_db(path, 1)
    before = path.read_bytes()
    with pytest.raises(exc):
        with atomic_duckdb(path, update=update) as con:
            con.execute("CREATE TABLE IF NOT EXISTS t (x INTEGER)")
            con.execute("INSERT INTO t SELECT range FROM range(100000)")
            raise exc()
    assert path.read_bytes() == before and db_value(path) == [(1,)]
    no_temporaries(tmp_path, "w.duckdb")
    write_db(path, 2)  # the shared writer instance is still usable
    assert db_value(path) == [(2,)]
    no_temporaries(tmp_path, "w.duckdb")


def test_atomic_duckdb_failing_statement(tmp_path):
    path = tmp_path / "w.duckdb"
    write_db(path, 1)
    with pytest.raises(duckdb.Error):
        with atomic_duckdb(path, update=True) as con:
            con.execute("INSERT INTO t VALUES (5)")
            con.execute("INSERT INTO nope VALUES (1)")
    assert db_value(path) == [(1,)]
    no_temporaries(tmp_path, "w.duckdb")


def test_atomic_duckdb_failing_rename(tmp_path, monkeypatch):
    path = tmp_path / "w.duckdb"
    write_db(path, 1)
    fail_on_call(monkeypatch, duck, 1)
    with pytest.raises(OSError, match="disk on fire"):
        write_db(path, 2)
    monkeypatch.undo()
    assert db_value(path) == [(1,)]
    no_temporaries(tmp_path, "w.duckdb")


@pytest.mark.parametrize("exc", [OSError, KeyboardInterrupt])
def test_atomic_duckdb_failing_copy_for_update(tmp_path, monkeypatch, exc):
    path = tmp_path / "w.duckdb"
    write_db(path, 1)
    before = path.read_bytes()

    def half_copy(src, dst):
        with open(dst, "wb") as fh:
            fh.write(open(src, "rb").read()[:100])
        raise exc()

    monkeypatch.setattr(duck.shutil, "copyfile", half_copy)
    with pytest.raises(exc):
        with atomic_duckdb(path, update=True):
            pytest.fail("the block must not run")
    assert path.read_bytes() == before
    no_temporaries(tmp_path, "w.duckdb")


def test_atomic_duckdb_update_of_a_broken_file(tmp_path):
    path = tmp_path / "w.duckdb"
    path.write_text("not a database")
    with pytest.raises(duckdb.Error):
        with atomic_duckdb(path, update=True):
            pytest.fail("the block must not run")
    assert path.read_text() == "not a database"
    no_temporaries(tmp_path, "w.duckdb")


def test_atomic_duckdb_removes_a_stale_temporary(tmp_path):
    path = tmp_path / "w.duckdb"
    write_db(path, 1)
    import threading

    stale = tmp_path / f".w.duckdb.tmp-{os.getpid()}-{threading.get_ident()}"
    stale.write_text("left by a crashed run")
    stale.with_name(stale.name + ".wal").write_text("and its log")
    write_db(path, 3)
    assert db_value(path) == [(3,)]
    no_temporaries(tmp_path, "w.duckdb")


# -- a folder or a file in the way --------------------------------------------------------------

def test_a_folder_where_a_file_goes_is_one_clear_error_and_leaves_nothing(tmp_path):
    from worldforge.errors import WarehouseError

    (tmp_path / "w.duckdb").mkdir()
    (tmp_path / "out.json").mkdir()
    with pytest.raises(WarehouseError, match="w.duckdb: is a folder, not a DuckDB file"):
        with atomic_duckdb(tmp_path / "w.duckdb") as con:
            con.execute("CREATE TABLE t (x INT)")
    with pytest.raises(WarehouseError, match="out.json: is a folder, not a file"):
        with atomic_file(tmp_path / "out.json") as tmp:
            tmp.write_text("{}")
    with pytest.raises(WarehouseError, match="is a folder, not a DuckDB file"):
        open_readonly(tmp_path / "w.duckdb")
    no_temporaries(tmp_path, "out.json", "w.duckdb")
    assert (tmp_path / "w.duckdb").is_dir() and not any((tmp_path / "w.duckdb").iterdir())


def test_a_file_in_the_way_of_the_warehouse_folder_is_named(tmp_path):
    from worldforge.errors import WarehouseError

    (tmp_path / "wh").write_text("not a folder")
    with pytest.raises(WarehouseError, match=f"{tmp_path / 'wh'} is a file"):
        with atomic_duckdb(tmp_path / "wh" / "sub" / "w.duckdb"):
            pass
    with pytest.raises(WarehouseError, match="is a file, not a folder"):
        with atomic_dir(tmp_path / "wh"):
            pass
    no_temporaries(tmp_path, "wh")


def test_the_cli_says_one_line_when_a_world_path_is_a_folder(tmp_path):
    import subprocess
    import sys

    from tests.conftest import ROOT, SPECS_DIR

    (tmp_path / "esports_2031.duckdb").mkdir()
    proc = subprocess.run([sys.executable, "-m", "worldforge.cli", "world", "build", str(SPECS_DIR / "esports_2031.yaml"),
                           "--warehouse", str(tmp_path)], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [f"error: {tmp_path / 'esports_2031.duckdb'}: is a folder, not a DuckDB file (move or remove it, then run again)"]
    no_temporaries(tmp_path, "esports_2031.duckdb")


def test_row_groups_written_straight_to_the_file_keep_every_row(tmp_path):
    """A large insert split in two row groups (``rows_per_group``) skips the write-ahead log: every row is in the file,
    in two row groups, and no log is left beside it; a failed block with the same option leaves the old file."""
    path = tmp_path / "w.duckdb"
    rows = 50_000
    with atomic_duckdb(path) as con:
        con.execute("CREATE TABLE t (a INTEGER, b VARCHAR)")
        con.execute("INSERT INTO t VALUES (0, 'old')")
    assert duck.rows_per_group(rows) == 26624 and duck.rows_per_group(10) == 2048
    with atomic_duckdb(path, update=True, row_group_size=duck.rows_per_group(rows)) as con:
        con.execute(f"INSERT INTO t SELECT i, 'row ' || i FROM range(1, {rows}) r(i)")
    no_temporaries(tmp_path, "w.duckdb")
    con = duckdb.connect(str(path), read_only=True)
    try:
        assert con.sql("SELECT count(*), sum(a), count(DISTINCT b) FROM t").fetchall() == [(rows, rows * (rows - 1) // 2, rows)]
        assert con.sql("SELECT count(DISTINCT row_group_id) FROM pragma_storage_info('t')").fetchall()[0][0] >= 2
    finally:
        con.close()
    with pytest.raises(Boom), atomic_duckdb(path, update=True, row_group_size=2048) as con:
        con.execute("DELETE FROM t")
        raise Boom
    con = open_readonly(path)
    try:
        assert con.sql("SELECT count(*) FROM t").fetchall() == [(rows,)]
    finally:
        con.close()
    no_temporaries(tmp_path, "w.duckdb")
