"""open_readonly: files attached read-only to the process's shared DuckDB instance.

Several files may be attached at once (other threads' readers and writers), so every catalogue query of the
library must stay inside the connection's own file; a closed connection leaves nothing attached.
"""

from __future__ import annotations

import threading

import duckdb
import pytest

from worldforge.errors import WarehouseError
from worldforge.warehouse.duck import _writer_cursor, atomic_duckdb, constraints, count_rows, open_readonly


def _attached() -> list[str]:
    con = _writer_cursor()
    try:
        return [r[0] for r in con.execute("SELECT database_name FROM duckdb_databases() WHERE database_name LIKE 'wf\\_%' ESCAPE '\\'").fetchall()]
    finally:
        con.close()


def _file(path, table: str, rows: int) -> None:
    with atomic_duckdb(path) as con:
        con.execute(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, x INTEGER)")
        con.execute(f"INSERT INTO {table} SELECT i, i FROM range({rows}) t(i)")


def test_catalogue_queries_see_only_their_own_file(tmp_path):
    a, b = tmp_path / "a.duckdb", tmp_path / "b.duckdb"
    _file(a, "alpha", 3)
    _file(b, "beta", 5)
    with open_readonly(a) as ca, open_readonly(b) as cb:  # both attached to the one instance at once
        assert count_rows(a, "alpha") == 3 and count_rows(b, "beta") == 5
        assert count_rows(a, "beta") is None and count_rows(b, "alpha") is None  # the other file's table is not this one's
        assert constraints(ca)["table_name"].to_list() == ["alpha"]
        assert constraints(cb)["table_name"].to_list() == ["beta"]
        assert ca.execute("SELECT count(*) FROM alpha").fetchone()[0] == 3
        with pytest.raises(duckdb.CatalogException):  # unqualified names resolve in the connection's own file
            ca.execute("SELECT count(*) FROM beta")


def test_close_detaches_and_a_closed_connection_says_so(tmp_path):
    path = tmp_path / "w.duckdb"
    _file(path, "t", 2)
    before = set(_attached())
    con = open_readonly(path)
    assert len(set(_attached()) - before) == 1
    con.close()
    con.close()  # a second close does nothing
    assert set(_attached()) == before
    with pytest.raises(duckdb.ConnectionException, match="already closed"):
        con.execute("SELECT 1")
    with open_readonly(path):
        pass
    assert set(_attached()) == before


def test_a_cursor_of_a_reader_reads_the_same_file(tmp_path):
    path = tmp_path / "w.duckdb"
    _file(path, "t", 4)
    with open_readonly(path) as con:
        for other in (con.cursor(), con.duplicate()):
            assert other.execute("SELECT count(*) FROM t").fetchone()[0] == 4
            other.close()
        assert con.execute("SELECT count(*) FROM t").fetchone()[0] == 4


def test_a_reader_keeps_the_file_it_opened_while_a_write_replaces_it(tmp_path):
    path = tmp_path / "w.duckdb"
    _file(path, "t", 2)
    old = open_readonly(path)
    try:
        _file(path, "t", 7)  # written beside and renamed over the attached file
        assert old.execute("SELECT count(*) FROM t").fetchone()[0] == 2
        assert count_rows(path, "t") == 7
    finally:
        old.close()


def test_many_threads_read_the_same_file_at_once(tmp_path):
    path = tmp_path / "w.duckdb"
    _file(path, "t", 11)
    before = set(_attached())
    got, errors = [], []

    def read() -> None:
        try:
            for _ in range(20):
                got.append(count_rows(path, "t"))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=read) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and got == [11] * 120
    assert set(_attached()) == before


def test_not_a_duckdb_file_is_one_line(tmp_path):
    bad = tmp_path / "bad.duckdb"
    bad.write_bytes(b"this is not a database" * 300)
    before = set(_attached())
    with pytest.raises(WarehouseError, match=r"bad.duckdb: cannot open as DuckDB \("):
        open_readonly(bad)
    assert set(_attached()) == before


def test_relations_of_a_reader_join_and_show_as_duckdbs_own(tmp_path):
    path = tmp_path / "a.duckdb"
    with atomic_duckdb(path) as con:
        con.execute("CREATE TABLE t AS SELECT range AS x, range * 2 AS y FROM range(3)")
    with open_readonly(path) as ro:
        a, b = ro.sql("SELECT x FROM t"), ro.sql("SELECT x, y FROM t")
        assert sorted(a.join(b, "x").fetchall()) == [(0, 0), (1, 2), (2, 4)]  # a relation argument is DuckDB's own
        assert sorted(a.union(ro.sql("SELECT 7")).fetchall()) == [(0,), (1,), (2,), (7,)]
        assert "x" in repr(a) and "2" in str(a)  # the rows, as DuckDB prints them
