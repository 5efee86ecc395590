"""The Warehouse object: one spelling of every path, resolved at the edges and never from ``None``."""

from __future__ import annotations

import os
import pickle

import pytest

from worldforge.errors import WarehouseError
from worldforge.warehouse import Warehouse
from worldforge.warehouse.layout import STORES


def test_every_path_hangs_off_the_one_folder(tmp_path):
    wh = Warehouse(tmp_path)
    assert wh.world("esports_2031") == tmp_path / "esports_2031.duckdb"
    assert (wh.trajectory_store, wh.episode_store, wh.episode_log, wh.catalog) == (
        tmp_path / "trajectories.duckdb", tmp_path / "episodes", tmp_path / "episodes.log.jsonl", tmp_path / "catalog.duckdb")
    assert wh.shard("tau2") == tmp_path / "trajectories" / "tau2.parquet"
    assert wh.tasks("w") == tmp_path / "tasks" / "w" and wh.dataset("sft") == tmp_path / "datasets" / "sft"
    assert (wh.landing, wh.recordings, wh.cache, wh.tokenizer) == (
        tmp_path / "landing", tmp_path / "recordings", tmp_path / "cache", tmp_path / "models" / "tokenizer")
    assert not (tmp_path / "reports").exists() and wh.reports().is_dir()  # the one path it creates
    with pytest.raises(ValueError, match="unknown dataset 'dpo'"):
        wh.dataset("dpo")
    for store in STORES:  # a world may not take a store's file
        with pytest.raises(WarehouseError, match="is not a world"):
            wh.world(store.removesuffix(".duckdb"))


def test_it_passes_for_its_folder_and_survives_a_process_boundary(tmp_path):
    wh = Warehouse(str(tmp_path))
    assert os.fspath(wh) == str(wh) == str(tmp_path) and wh.root == tmp_path
    assert Warehouse.of(wh) is wh and Warehouse.of(tmp_path) == wh and len({wh, Warehouse(tmp_path)}) == 1
    assert pickle.loads(pickle.dumps(wh)) == wh  # catalog workers and Ray tasks receive it pickled
    (tmp_path / "b.duckdb").touch(), (tmp_path / "a.duckdb").touch(), (tmp_path / "catalog.duckdb").touch()
    assert [p.name for p in wh.world_files()] == ["a.duckdb", "b.duckdb"]


@pytest.mark.parametrize("given", [None, "", "  ", 3])
def test_the_library_never_guesses_a_warehouse(given, monkeypatch, tmp_path):
    monkeypatch.setenv("WORLDFORGE_WAREHOUSE", str(tmp_path))  # configured, yet not read below the edges
    with pytest.raises(TypeError, match="a warehouse is required"):
        Warehouse.of(given)


def test_a_library_call_without_a_warehouse_fails_rather_than_defaulting(monkeypatch, tmp_path):
    from worldforge.summary import summarise

    monkeypatch.setenv("WORLDFORGE_WAREHOUSE", str(tmp_path))
    with pytest.raises(AttributeError):  # the library uses the Warehouse it is given: no default, no conversion
        summarise(None)  # type: ignore[arg-type]
    assert summarise(Warehouse(tmp_path)).worlds == []


def test_the_edges_resolve_the_configured_one(monkeypatch, tmp_path):
    from worldforge.cli._common import warehouse_of
    from worldforge.settings import SettingsError

    monkeypatch.setenv("WORLDFORGE_WAREHOUSE", str(tmp_path / "configured"))
    assert Warehouse.configured() == Warehouse(tmp_path / "configured")
    assert Warehouse.configured(tmp_path / "given") == Warehouse(tmp_path / "given")
    monkeypatch.chdir(tmp_path)
    assert warehouse_of(None).root == tmp_path / "configured" and warehouse_of(tmp_path / "x").root == tmp_path / "x"
    assert warehouse_of(type(tmp_path)("rel")).root == tmp_path / "rel"  # the option is made absolute
    monkeypatch.setenv("WORLDFORGE_WAREHOUSE", "")
    with pytest.raises(SettingsError, match="WORLDFORGE_WAREHOUSE"):
        Warehouse.configured()
