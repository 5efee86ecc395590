"""One declaration per store table: the trajectory store's DDL comes from the polars schemas its frames use
(worldforge.warehouse.duck.table_ddl), and the episode store writes its trajectories and turns in that shape."""

from __future__ import annotations

import duckdb
import polars as pl
import pytest

from tests.trajectories.test_episode_store import _episode
from worldforge.errors import WarehouseError
from worldforge.trajectories.episodes import record_episodes
from worldforge.trajectories.store import STORE_DDL
from worldforge.warehouse import Warehouse
from worldforge.warehouse.duck import table_ddl
from worldforge.warehouse.parts import list_parts


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[tuple[str, str]]:
    return con.execute("SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = ? ORDER BY column_index", [table]).fetchall()


def test_the_episode_store_writes_trajectories_and_turns_as_the_trajectory_store_declares_them(tmp_path):
    """What ``record_episodes`` writes to disk (Parquet parts, through polars frames) has the columns and
    DuckDB types of the trajectory store's tables, so both stores feed the same dataset readers."""
    con = duckdb.connect()
    con.execute(STORE_DDL)
    record_episodes(Warehouse(tmp_path), [_episode("e1")])
    (part,) = list_parts(tmp_path / "episodes", "alpha_2031")
    for table in ("trajectories", "turns"):
        on_disk = con.execute(f"DESCRIBE SELECT * FROM read_parquet('{part / (table + '.parquet')}')").fetchall()
        assert [(r[0], r[1]) for r in on_disk] == _columns(con, table)


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
