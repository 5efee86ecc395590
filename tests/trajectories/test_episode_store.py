"""The episode store (issue 30, item 2): one store of Parquet parts for every world, bundled or
catalog. A write adds a part and rewrites nothing; an id recorded again is replaced; merges keep
the newest rows; a failed write leaves nothing; stores of earlier versions are moved in; writers
in several processes lose nothing; `worldforge sql episodes` reads it and nothing else."""

import multiprocessing

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

import worldforge.trajectories.episodes as episodes
import worldforge.trajectories.episodes.store as episode_store
from worldforge.cli import app
from worldforge.errors import WarehouseError
from worldforge.simenv.env import Observation
from worldforge.trajectories.episodes import (
    MERGE_PARTS,
    Episode,
    episode_counts,
    iter_episode_trajectories,
    read_episode_tables,
    read_episodes,
    record_episodes,
)
from worldforge.warehouse import Warehouse
from worldforge.warehouse.parts import list_parts


def _episode(eid: str, world: str = "alpha_2031", n: int = 2, answer: str = "", agent: str = "test") -> Episode:
    steps = [({"name": "web_search", "arguments": {"query": f"{eid} q{i}"}}, Observation(f"obs {eid} {i}", "web_search"))
             for i in range(n)]
    return Episode(episode_id=eid, world=world, scenario=None, task_id="t", question="q?", seed=1,
                   perturbations_json="{}", agent=agent, steps=steps, answer=answer, finished=True, f1_by_item=1.0)


def test_each_world_gets_its_parts_and_an_id_recorded_again_is_replaced(tmp_path):
    record_episodes(Warehouse(tmp_path), [_episode("a1", n=3, answer="first"), _episode("b1", world="beta_2030")])
    record_episodes(Warehouse(tmp_path), [_episode("a1", n=1, answer="second"), _episode("a2")])
    assert [p.parent.name for p in list_parts(tmp_path / "episodes")].count("alpha_2031") == 2
    tables = read_episode_tables(Warehouse(tmp_path))
    eps = tables["episodes"].sort("episode_id")
    assert eps["episode_id"].to_list() == ["a1", "a2", "b1"]
    assert eps.filter(pl.col("episode_id") == "a1")["answer"].to_list() == ["second"]
    # the replaced episode's children come from its newest part only: 1 step, 1 turn
    assert tables["steps"].filter(pl.col("episode_id") == "a1").height == 1
    assert tables["turns"].filter(pl.col("trajectory_id") == "a1").height == 1
    assert tables["trajectories"].height == 3
    counts = episode_counts(Warehouse(tmp_path))
    assert (counts.episodes, counts.solved, counts.by_agent) == (3, 3, [("test", 3)])
    trajs = {t.trajectory_id: t for t in iter_episode_trajectories(Warehouse(tmp_path))}
    assert set(trajs) == {"a1", "a2", "b1"} and trajs["b1"].extra == {"world": "beta_2030"}


def test_a_world_with_many_parts_is_merged_and_keeps_the_newest_rows(tmp_path):
    for i in range(MERGE_PARTS + 3):
        record_episodes(Warehouse(tmp_path), [_episode(f"e{i}"), _episode("same", answer=str(i))])
    parts = list_parts(tmp_path / "episodes", "alpha_2031")
    assert len(parts) <= MERGE_PARTS
    eps = read_episodes(Warehouse(tmp_path))
    assert eps.height == MERGE_PARTS + 4
    assert eps.filter(pl.col("episode_id") == "same")["answer"].to_list() == [str(MERGE_PARTS + 2)]
    assert not [p for p in (tmp_path / "episodes" / "alpha_2031").iterdir() if p.name.startswith(".")]


def test_a_failed_write_leaves_the_store_as_it_was(tmp_path, monkeypatch):
    record_episodes(Warehouse(tmp_path), [_episode("kept")])
    before = list_parts(tmp_path / "episodes")
    real = pl.DataFrame.write_parquet

    def fail_on_steps(self, file, *a, **k):
        if str(file).endswith("steps.parquet"):
            raise OSError("disk full")
        return real(self, file, *a, **k)

    monkeypatch.setattr(pl.DataFrame, "write_parquet", fail_on_steps)
    with pytest.raises(OSError, match="disk full"):
        record_episodes(Warehouse(tmp_path), [_episode("lost"), _episode("kept", answer="changed")])
    monkeypatch.undo()
    assert list_parts(tmp_path / "episodes") == before
    assert [p.name for p in (tmp_path / "episodes" / "alpha_2031").iterdir() if p.name.startswith(".tmp")] == []
    eps = read_episodes(Warehouse(tmp_path))
    assert eps["episode_id"].to_list() == ["kept"] and eps["answer"].to_list() == [""]


def test_a_world_name_that_is_a_path_is_refused(tmp_path):
    with pytest.raises(WarehouseError, match="not a store key"):
        record_episodes(Warehouse(tmp_path), [_episode("x", world="../outside")])
    assert not (tmp_path / "outside").exists()


def _legacy(path, eps: list[Episode]) -> None:
    """A store as earlier versions wrote it: one DuckDB file with the four tables."""
    frames = episode_store._frames(eps)
    con = duckdb.connect(str(path))
    for t, f in frames.items():  # noqa: B007 - read by name in the SQL
        con.execute(f"CREATE TABLE {t} AS SELECT * FROM f")
    con.close()


def test_stores_of_earlier_versions_are_moved_in_and_kept(tmp_path):
    _legacy(tmp_path / "episodes.duckdb", [_episode("old1"), _episode("both", answer="legacy")])
    (tmp_path / "catalog_episodes").mkdir()
    _legacy(tmp_path / "catalog_episodes" / "gamma_2029.duckdb", [_episode("cat1", world="gamma_2029", n=4)])
    record_episodes(Warehouse(tmp_path), [_episode("both", answer="new")])  # recorded after the upgrade: wins over the legacy row
    assert read_episodes(Warehouse(tmp_path)).height == 3  # the first read moves the old stores in
    assert (tmp_path / "episodes.duckdb.migrated").is_file() and not (tmp_path / "episodes.duckdb").exists()
    assert (tmp_path / "catalog_episodes" / "gamma_2029.duckdb.migrated").is_file()
    tables = read_episode_tables(Warehouse(tmp_path))
    eps = tables["episodes"].sort("episode_id")
    assert eps["episode_id"].to_list() == ["both", "cat1", "old1"]
    assert eps.filter(pl.col("episode_id") == "both")["answer"].to_list() == ["new"]
    assert tables["steps"].filter(pl.col("episode_id") == "cat1").height == 4


def _writer(wh: str, worker: int, n: int) -> None:
    for i in range(n):
        record_episodes(Warehouse(wh), [_episode(f"w{worker}-{i}", n=1), _episode(f"shared-{i % 3}", answer=f"{worker}")])


def test_processes_writing_one_world_at_once_lose_nothing(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), w, 12)) for w in range(3)]
    for p in procs:
        p.start()
    seen = []
    while any(p.is_alive() for p in procs):  # a reader beside the writers and their merges
        seen.append(read_episodes(Warehouse(tmp_path)).height)
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    got = read_episodes(Warehouse(tmp_path))["episode_id"].to_list()
    assert len(got) == len(set(got)) == 36 + 3
    assert seen == sorted(seen)  # a reader never saw episodes disappear
    assert len(list_parts(tmp_path / "episodes", "alpha_2031")) <= MERGE_PARTS


def test_sql_reads_the_episode_store_and_nothing_beside_it(tmp_path):
    record_episodes(Warehouse(tmp_path), [_episode("s1", n=2), _episode("s1", n=3), _episode("s2", world="beta_2030", n=1)])
    (tmp_path / "secret.csv").write_text("a\n1\n")
    run = CliRunner().invoke
    out = run(app, ["sql", "episodes", "SELECT world, count(*) AS n FROM steps JOIN episodes USING (episode_id) GROUP BY 1 ORDER BY 1",
                    "--warehouse", str(tmp_path)], env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    assert "alpha_2031" in out.output and "beta_2030" in out.output and "2 row(s)" in out.output
    lines = {line.split()[1]: line.split()[3] for line in out.output.splitlines() if "_20" in line}
    assert lines == {"alpha_2031": "3", "beta_2030": "1"}
    for query in (f"SELECT * FROM read_csv('{tmp_path / 'secret.csv'}')", f"SELECT * FROM read_csv('{tmp_path / 'episodes' / '..' / 'secret.csv'}')"):
        out = run(app, ["sql", "episodes", query, "--warehouse", str(tmp_path)])
        assert out.exit_code == 2 and "refused" in out.output and "Traceback" not in out.output
    out = run(app, ["sql", "episodes", "COPY steps TO 'x.csv'", "--warehouse", str(tmp_path)])
    assert out.exit_code == 2 and "refused" in out.output
    out = run(app, ["sql", "episodes", "SELECT 1", "--warehouse", str(tmp_path / "empty")])
    assert out.exit_code == 2 and "no episode store" in out.output


def test_a_batch_with_a_bad_world_or_a_warehouse_that_is_a_file_writes_nothing(tmp_path):
    with pytest.raises(WarehouseError, match="not a store key"):
        record_episodes(Warehouse(tmp_path), [_episode("ok"), _episode("x", world="bad world"), _episode("g", world="gamma_2029")])
    assert list_parts(tmp_path / "episodes") == []
    (tmp_path / "file").write_text("")
    with pytest.raises(WarehouseError, match="is a file"):
        record_episodes(Warehouse(tmp_path / "file"), [_episode("ok")])


def test_a_clock_set_back_still_orders_a_worlds_parts(tmp_path, monkeypatch):
    import time

    from worldforge.warehouse import parts

    record_episodes(Warehouse(tmp_path), [_episode("same", answer="first")])
    real = time.time_ns
    monkeypatch.setattr(parts.time, "time_ns", lambda: real() - 3_600 * 10**9)  # an hour behind
    record_episodes(Warehouse(tmp_path), [_episode("same", answer="second")])
    assert read_episodes(Warehouse(tmp_path))["answer"].to_list() == ["second"]


def test_what_a_killed_writer_left_is_swept_by_the_next_writer(tmp_path):
    record_episodes(Warehouse(tmp_path), [_episode("a")])
    folder = tmp_path / "episodes" / "alpha_2031"
    (folder / ".tmp-p-00000000000000000001-9-deadbeef").mkdir()
    (folder / ".gone-p-00000000000000000002-9-deadbeef").mkdir()
    record_episodes(Warehouse(tmp_path), [_episode("b")])
    assert sorted(p.name[:2] for p in folder.iterdir()) == ["p-", "p-"]


def test_a_corrupt_part_is_one_clear_error_and_other_worlds_still_record(tmp_path):
    record_episodes(Warehouse(tmp_path), [_episode("a"), _episode("b", world="beta_2030")])
    [part] = list_parts(tmp_path / "episodes", "alpha_2031")
    (part / "steps.parquet").write_bytes(b"not parquet")
    with pytest.raises(WarehouseError, match="steps.parquet is damaged .*worldforge doctor"):
        read_episodes(Warehouse(tmp_path))
    out = CliRunner().invoke(app, ["sql", "episodes", "SELECT count(*) FROM steps", "--warehouse", str(tmp_path)])
    assert out.exit_code == 2 and "is damaged" in out.output and "Traceback" not in out.output
    for i in range(MERGE_PARTS + 1):  # a merge that meets the corrupt part fails (logged); the writes go on
        record_episodes(Warehouse(tmp_path), [_episode(f"a{i}"), _episode(f"b{i}", world="beta_2030")])
    # the merge that met it failed; the next took the newest parts, past the corrupt one
    alpha = list_parts(tmp_path / "episodes", "alpha_2031")
    assert alpha[0] == part and (part / "steps.parquet").read_bytes() == b"not parquet"  # never folded into a merge
    assert len(alpha) <= MERGE_PARTS
    assert len(list_parts(tmp_path / "episodes", "beta_2030")) <= MERGE_PARTS
    with pytest.raises(WarehouseError, match="steps.parquet is damaged"):
        read_episodes(Warehouse(tmp_path))


def test_a_legacy_file_that_is_no_episode_store_is_set_aside_and_the_log_still_drains(tmp_path):
    from worldforge.trajectories.episodes import log_episodes

    duckdb.connect(str(tmp_path / "episodes.duckdb")).close()  # an empty DuckDB file where the old store was
    log_episodes(Warehouse(tmp_path), [_episode("logged")])
    assert read_episodes(Warehouse(tmp_path))["episode_id"].to_list() == ["logged"]
    assert (tmp_path / "episodes.duckdb.not-an-episode-store").is_file() and not (tmp_path / "episodes.duckdb").exists()
    _legacy(tmp_path / "episodes.duckdb", [_episode("old")])  # a second old store: the first .migrated is kept
    (tmp_path / "episodes.duckdb.migrated").write_text("kept")
    assert sorted(read_episodes(Warehouse(tmp_path))["episode_id"].to_list()) == ["logged", "old"]
    assert (tmp_path / "episodes.duckdb.migrated").read_text() == "kept" and (tmp_path / "episodes.duckdb.migrated-2").is_file()


def test_summary_counts_the_episodes_by_agent_in_words(tmp_path):
    record_episodes(Warehouse(tmp_path), [_episode("o1", agent="oracle"), _episode("o2", agent="oracle"), _episode("h1", world="beta_2030", agent="http")])
    out = CliRunner().invoke(app, ["summary", "--warehouse", str(tmp_path)])
    assert out.exit_code == 0, out.output
    assert "simulated episodes: 3 (http 1, oracle 2); finished 3; F1 1.0 in 3" in out.output


def test_a_merge_reads_at_most_merge_part_bytes_of_rows_however_well_they_compress(tmp_path, monkeypatch):
    """Parts of repetitive text are tiny on disk (zstd) but large in memory: merges are sized by the rows' uncompressed
    bytes, so no merged part (and no merge's read) exceeds twice MERGE_PART_BYTES, and a merged part is not merged again."""
    from worldforge.warehouse.parts import parts_data_bytes

    cap = 1 << 20
    monkeypatch.setattr(episode_store, "MERGE_PART_BYTES", cap)
    for i in range(60):  # 60 episodes of ~200 KiB of one repeated letter: ~12 MiB of rows, a few KiB on disk
        e = _episode(f"e{i}", n=1)
        e.steps[0][1].text = f"{i}-" + "x" * 200_000
        record_episodes(Warehouse(tmp_path), [e])
    parts = list_parts(tmp_path / "episodes", "alpha_2031")
    sizes = parts_data_bytes(parts)
    assert max(sizes) <= 2 * cap, sizes
    assert sum(sizes) > 10 * cap
    assert len(parts) <= sum(sizes) // (cap // 2) + episodes.MERGE_PARTS + 1  # merged: parts of about the cap, plus the newest
    assert sum(sum(f.stat().st_size for f in p.iterdir()) for p in parts) < cap  # what on-disk sizes would have seen
    assert sorted(read_episodes(Warehouse(tmp_path))["episode_id"].to_list()) == sorted(f"e{i}" for i in range(60))


def test_the_size_cache_of_parts_never_loses_an_entry_it_returns(tmp_path, monkeypatch):
    from worldforge.warehouse import parts as parts_mod

    for i in range(6):
        record_episodes(Warehouse(tmp_path), [_episode(f"c{i}")])
    found = list_parts(tmp_path / "episodes", "alpha_2031")
    monkeypatch.setattr(parts_mod, "_DATA_BYTES", {f"/nowhere/{i}": 1 for i in range(4093)})  # nearly full
    sizes = parts_mod.parts_data_bytes(found)
    assert len(sizes) == len(found) and all(s > 0 for s in sizes)


def test_a_part_merged_away_while_checked_is_listed_again_not_called_damaged(tmp_path, monkeypatch):
    from worldforge.warehouse import parts as parts_mod
    from worldforge.warehouse.parts import read_parts, remove_parts, table_files

    record_episodes(Warehouse(tmp_path), [_episode("m1")])
    record_episodes(Warehouse(tmp_path), [_episode("m2")])
    root = tmp_path / "episodes"
    real_loads, taken = parts_mod.json.loads, []

    def loads(text, *a, **k):  # a merge takes the part away right after its manifest was read
        out = real_loads(text, *a, **k)
        if not taken:
            part = list_parts(root, "alpha_2031")[0]
            taken.append(part)
            remove_parts([part])
        return out

    monkeypatch.setattr(parts_mod.json, "loads", loads)
    files = read_parts(root, lambda parts: table_files(parts, "steps"))
    assert taken and len(files) == 1 and str(taken[0]) not in files[0]  # listed again, the sound part read
