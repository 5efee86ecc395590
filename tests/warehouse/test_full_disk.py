"""A write that runs out of space fails with one line naming its target, and leaves the previous state.

In process, the writers' own calls are made to fail with ``ENOSPC`` (a Python write, a polars write, DuckDB's
``COMMIT``). For real, the CLI writes into a small tmpfs mounted in a private mount namespace (``unshare -m``
as root, ``unshare -rm`` in a user namespace elsewhere; skipped with the reason where neither is allowed):
every command's last line is ``error: ... no space left ...``, without a traceback, and what was there
before is byte for byte the same.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl
import pytest

from worldforge.errors import StorageFullError
from worldforge.warehouse import duck
from worldforge.warehouse.atomic import atomic_dir, atomic_file, is_storage_full, out_of_space, write_jsonl_atomic
from worldforge.warehouse.duck import atomic_duckdb, open_readonly
from worldforge.warehouse.parts import list_parts, write_part

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "world_specs"


def no_temporaries(folder: Path) -> None:
    left = [p.name for p in folder.rglob("*") if ".tmp" in p.name or p.name.endswith((".old", ".wal"))]
    assert not left, left


def enospc(*_a, **_k):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_what_counts_as_a_full_disk():
    assert is_storage_full(OSError(errno.ENOSPC, "x"))
    assert is_storage_full(OSError(errno.EDQUOT, "x"))
    assert is_storage_full(duckdb.IOException('Could not write file "a.wal": No space left on device'))
    try:
        try:
            raise OSError(errno.ENOSPC, "deep")
        except OSError as inner:
            raise RuntimeError("wrapped") from inner
    except RuntimeError as outer:
        assert is_storage_full(outer)  # the cause counts
    assert not is_storage_full(OSError(errno.EACCES, "Permission denied"))
    assert not is_storage_full(ValueError("No such thing"))


def test_a_full_disk_in_an_atomic_file_keeps_the_old_file(tmp_path):
    target = tmp_path / "rows.jsonl"
    write_jsonl_atomic(target, [{"a": 1}])
    before = target.read_bytes()
    with pytest.raises(StorageFullError) as err:
        with atomic_file(target) as tmp:
            tmp.write_bytes(b"x" * 5000)
            enospc()
    msg = str(err.value)
    assert str(target) in msg and "no space left" in msg and "4.9 KiB" in msg  # what it had written
    assert "\n" not in msg and err.value.written == 5000 and err.value.free is not None
    assert target.read_bytes() == before
    no_temporaries(tmp_path)


def test_a_full_disk_in_an_atomic_folder_keeps_the_old_folder(tmp_path, monkeypatch):
    target = tmp_path / "shards"
    with atomic_dir(target) as tmp:
        pl.DataFrame({"a": [1, 2]}).write_parquet(tmp / "a.parquet")
    before = (target / "a.parquet").read_bytes()
    monkeypatch.setattr(pl.DataFrame, "write_parquet", enospc)
    with pytest.raises(StorageFullError, match="shards: no space left"):
        with atomic_dir(target) as tmp:
            pl.DataFrame({"a": [3]}).write_parquet(tmp / "a.parquet")
    assert (target / "a.parquet").read_bytes() == before
    no_temporaries(tmp_path)


def test_a_full_disk_at_a_duckdb_commit_keeps_the_old_file_and_the_writer_keeps_working(tmp_path, monkeypatch):
    target = tmp_path / "w.duckdb"
    with atomic_duckdb(target) as con:
        con.execute("CREATE TABLE t AS SELECT 1 AS a")
    before = target.read_bytes()

    class FullCursor:  # the writer's cursor, whose COMMIT fails as DuckDB's does on a full disk
        def __init__(self, con):
            self.con = con

        def execute(self, sql, *a):
            if sql == "COMMIT":
                raise duckdb.TransactionException('TransactionContext Error: Failed to commit: Could not write file '
                                                  f'"{target}.wal": No space left on device')
            return self.con.execute(sql, *a)

        def __getattr__(self, name):
            return getattr(self.con, name)

    real = duck._writer_cursor
    monkeypatch.setattr(duck, "_writer_cursor", lambda: FullCursor(real()))
    with pytest.raises(StorageFullError, match="w.duckdb: no space left"):
        with atomic_duckdb(target, update=True) as con:
            con.execute("INSERT INTO t SELECT range FROM range(1000)")
    assert target.read_bytes() == before
    no_temporaries(tmp_path)
    monkeypatch.setattr(duck, "_writer_cursor", real)
    with atomic_duckdb(target, update=True) as con:  # the process's writer instance still writes
        con.execute("INSERT INTO t VALUES (2)")
    with open_readonly(target) as ro:
        assert ro.execute("SELECT count(*) FROM t").fetchone()[0] == 2


def test_a_full_disk_in_a_part_write_leaves_no_part(tmp_path, monkeypatch):
    write_part(tmp_path, "w", {"t": pl.DataFrame({"a": [1]})})
    monkeypatch.setattr(pl.DataFrame, "write_parquet", enospc)
    with pytest.raises(StorageFullError, match="no space left"):
        write_part(tmp_path, "w", {"t": pl.DataFrame({"a": [2]})})
    assert len(list_parts(tmp_path, "w")) == 1
    no_temporaries(tmp_path)


def test_an_error_raised_from_none_after_a_full_disk_is_not_a_full_disk(tmp_path):
    try:
        try:
            raise OSError(errno.ENOSPC, "full")
        except OSError:
            raise ValueError("another problem") from None
    except ValueError as exc:
        assert not is_storage_full(exc)
    with pytest.raises(KeyboardInterrupt):  # an interrupt while handling a full disk stays an interrupt
        with out_of_space(tmp_path / "x"):
            try:
                raise OSError(errno.ENOSPC, "full")
            except OSError:
                raise KeyboardInterrupt from None


def test_a_full_disk_on_another_file_system_names_that_file(tmp_path):
    spill = Path("/proc/self/spill.tmp")  # a file on another file system than tmp_path's
    with pytest.raises(StorageFullError) as err:
        with out_of_space(tmp_path / "w.duckdb"):
            raise duckdb.IOException(f'Could not write file "{spill}": No space left on device')
    assert err.value.elsewhere == str(spill) and f"no space left on the device of {spill}" in str(err.value)
    with pytest.raises(StorageFullError) as err:  # the target's own file system: no "elsewhere"
        with out_of_space(tmp_path / "w.duckdb"):
            raise duckdb.IOException(f'Could not write file "{tmp_path}/.w.duckdb.tmp-1.wal": No space left on device')
    assert err.value.elsewhere is None and "no space left on its device" in str(err.value)


def test_other_errors_pass_through_unchanged(tmp_path):
    with pytest.raises(PermissionError):
        with out_of_space(tmp_path / "x"):
            raise PermissionError(errno.EACCES, "Permission denied")


# -- for real: the CLI on a small file system ---------------------------------------------------------------

def _namespace_prefix() -> list[str] | None:
    """The ``unshare`` command that gives a private mount namespace where ``mount -t tmpfs`` works here, or None."""
    if shutil.which("unshare") is None:
        return None
    for prefix in (["unshare", "-m"], ["unshare", "-rm"]):
        probe = subprocess.run([*prefix, "sh", "-c", "d=$(mktemp -d) && mount -t tmpfs -o size=1m tmpfs $d && umount $d"],
                               capture_output=True, timeout=30)
        if probe.returncode == 0:
            return prefix
    return None


NAMESPACE = _namespace_prefix()
needs_tmpfs = pytest.mark.skipif(NAMESPACE is None, reason="no private mount namespace here (unshare -m / -rm refused): "
                                                         "cannot mount a small tmpfs")

SCRIPT = r"""
set -u
mount -t tmpfs -o size=40m tmpfs "$FS"
W="$FS/wh"
wf() { "$PY" -m worldforge.cli "$@" -w "$W"; }
digest() { "$PY" -c 'import json,sys; from worldforge.warehouse.worlds import content_digests as d; print(json.dumps(d(sys.argv[1])))' "$1"; }
wf world run "$SPECS/smartphones_2029.yaml" >/dev/null 2>&1 || { echo "BUILD FAILED"; exit 3; }
echo "BEFORE $(digest "$W/smartphones_2029.duckdb")"
(cd "$W" && find . -type f -not -name '*.lock' | sort | xargs sha1sum | sed 's/^/FILE_BEFORE /')
avail=$(df --output=avail -B1 "$FS" | tail -1)
fallocate -l $((avail - 65536)) "$FS/filler"
for cmd in "world run $SPECS/mars_colony_2030.yaml" "corpus index smartphones_2029 --retriever bm25" "tasks export $FS/wh/exported --world smartphones_2029" "datasets build sft" "trajectories ingest $TRAJ"; do
  echo "=== $cmd"
  wf $cmd 2>&1 | tail -3
  echo "RC ${PIPESTATUS[0]}"
done
echo "=== read"
wf sql smartphones_2029 "SELECT count(*) AS n FROM corpus_pages" 2>&1 | tail -2
echo "RC ${PIPESTATUS[0]}"
echo "AFTER $(digest "$W/smartphones_2029.duckdb")"
(cd "$W" && find . -type f -not -name '*.lock' | sort | xargs sha1sum | sed 's/^/FILE_AFTER /')
echo "TEMPS $(find "$W" -name '*.tmp*' -o -name '*.wal' -o -name '.gone-*' | wc -l)"
rm "$FS/filler"
wf world run "$SPECS/mars_colony_2030.yaml" >/dev/null 2>&1
echo "RETRY $?"
"""


@needs_tmpfs
def test_every_writer_of_the_cli_on_a_full_disk_says_one_line_and_keeps_the_previous_state(tmp_path):
    fs = tmp_path / "fs"
    fs.mkdir()
    env = {**os.environ, "FS": str(fs), "PY": sys.executable, "SPECS": str(SPECS),
           "TRAJ": str(ROOT.parent / "shared" / "data" / "trajectories" / "fireact"), "COLUMNS": "400"}
    env.pop("WORLDFORGE_WAREHOUSE", None)
    done = subprocess.run([*NAMESPACE, "bash", "-c", SCRIPT], capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    out = done.stdout
    assert "BUILD FAILED" not in out, out + done.stderr
    blocks = out.split("=== ")[1:]
    commands = [b for b in blocks if not b.startswith("read")]
    assert len(commands) == 5, out
    for block in commands:
        name, *lines = block.strip().splitlines()
        assert lines[-1] == "RC 2", block  # a user's problem, not a crash
        assert "Traceback" not in block, block
        errors = [ln for ln in lines if ln.startswith("error:")]
        assert len(errors) == 1 and "no space left" in errors[0], block
        assert str(fs / "wh") in errors[0], block  # names the path
    read = next(b for b in blocks if b.startswith("read"))
    read_rc = next(ln for ln in read.splitlines() if ln.startswith("RC "))
    assert read_rc == "RC 0", read  # reads go on
    line = {ln.split(" ", 1)[0]: ln.split(" ", 1)[1] for ln in out.splitlines() if ln.split(" ", 1)[0] in
            ("BEFORE", "AFTER", "TEMPS", "RETRY")}
    assert json.loads(line["BEFORE"]) == json.loads(line["AFTER"])

    def files(tag):  # {relative path: sha1} of every file of the warehouse
        return {ln.split()[2]: ln.split()[1] for ln in out.splitlines() if ln.startswith(tag + " ")}

    before, after = files("FILE_BEFORE"), files("FILE_AFTER")
    assert len(before) > 10 and {p: after.get(p) for p in before} == before  # every file there before, unchanged
    assert line["TEMPS"] == "0", out
    assert line["RETRY"] == "0", out  # with space again, the same command goes through
