"""One declaration per store table: the trajectory store's DDL and the episode store's tables come from
the same polars schemas (worldforge.warehouse.duck.table_ddl), so the two stores cannot drift apart."""

from __future__ import annotations

import duckdb
import polars as pl
import pytest

from worldforge.errors import WarehouseError
from worldforge.trajectories.episodes import read_episode_tables
from worldforge.trajectories.store import STORE_DDL
from worldforge.warehouse.duck import table_ddl


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[tuple[str, str]]:
    return con.execute("SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = ? ORDER BY column_index", [table]).fetchall()


def test_both_stores_declare_trajectories_and_turns_alike(tmp_path):
    con = duckdb.connect()
    con.execute(STORE_DDL)
    empty = read_episode_tables(tmp_path)  # no part yet: the tables come from the same schemas
    for table in ("trajectories", "turns"):
        mem = duckdb.connect()
        frame = empty[table]
        mem.register("f", frame.to_arrow())
        assert [c for c, _ in _columns(con, table)] == frame.columns
        assert [t for _, t in _columns(con, table)] == [r[1] for r in mem.execute("DESCRIBE SELECT * FROM f").fetchall()]


def test_table_ddl_writes_keys_and_refuses_columns_it_does_not_have():
    con = duckdb.connect()
    con.execute(table_ddl("parent", {"id": pl.String, "n": pl.Int64}, primary_key=("id",), not_null=("n",)))
    con.execute(table_ddl("child", {"id": pl.String, "i": pl.Int64}, primary_key=("id", "i"), references={"id": "parent (id)"}))
    con.execute("INSERT INTO parent VALUES ('a', 1)")
    with pytest.raises(duckdb.ConstraintException):
        con.execute("INSERT INTO parent VALUES ('b', NULL)")
    with pytest.raises(duckdb.ConstraintException):
        con.execute("INSERT INTO child VALUES ('zzz', 1)")  # no such parent
    con.execute("INSERT INTO child VALUES ('a', 1)")
    with pytest.raises(duckdb.ConstraintException):
        con.execute("INSERT INTO child VALUES ('a', 1)")  # the two-column key
    with pytest.raises(WarehouseError, match=r"no columns \['nope'\]"):
        table_ddl("t", {"id": pl.String}, not_null=("nope",))
