import json

import duckdb
import polars as pl
import pytest

from tests.conftest import TRAJECTORIES
from worldforge.errors import WarehouseError
from worldforge.trajectories import balance, ingest, load_store
from worldforge.trajectories import store as store_mod
from worldforge.warehouse import Warehouse


@pytest.fixture(scope="module")
def ingested(tmp_path_factory):
    wh = Warehouse(tmp_path_factory.mktemp("wh"))
    report = ingest([TRAJECTORIES], wh)
    return wh, report


def test_ingest_every_source_with_balance(ingested):
    wh, report = ingested
    t = report.tally
    assert t.balanced and t.inputs == t.kept + t.dropped_total
    assert t.dropped_total == 7 and t.kept == 1410 and t.inputs == 1417
    assert set(report.by_source) == {"swe-agent", "openhands", "intercode", "tau-bench", "toolbench", "fireact", "webvoyager"}
    assert 0.3 < report.informative_share < 0.9
    assert balance(report.path) == t  # re-counted from the file: the same counts and quarantine reasons


def test_store_tables_and_constraints(ingested):
    wh, report = ingested
    con = duckdb.connect(str(report.path), read_only=True)
    n_turns, nulls = con.execute(
        "SELECT count(*), count(*) FILTER (WHERE obs_tokens IS NULL OR novelty IS NULL OR line_surprisal IS NULL OR informative IS NULL) FROM turns"
    ).fetchone()
    assert n_turns == report.turns and nulls == 0
    assert con.execute("SELECT sum(n_turns) FROM trajectories").fetchone()[0] == n_turns
    assert con.execute("SELECT count(*) FROM turns WHERE informative <> (mask_reason = 'pass')").fetchone()[0] == 0
    domains = {r[0] for r in con.execute("SELECT DISTINCT domain FROM trajectories").fetchall()}
    assert domains <= {"terminal", "search", "mcp", "swe", "web", "android", "os", "tool"}
    with pytest.raises(duckdb.Error):
        con.execute("INSERT INTO turns (trajectory_id, turn_idx, action, observation) VALUES ('nope', 0, 'a', 'b')")
    con.close()


def test_reingesting_a_subfolder_replaces_its_rows(ingested, tmp_path):
    wh, report = ingested
    target = tmp_path / "wh"
    target.mkdir()
    (target / "trajectories.duckdb").write_bytes(report.path.read_bytes())
    again = ingest([TRAJECTORIES / "tau-bench"], Warehouse(target))
    st = load_store(again.path)
    assert st.trajectories.height == 1410 and st.turns.height == report.turns  # no duplicates
    assert st.trajectories.filter(pl.col("source") == "tau-bench")["batch"].unique().to_list() == [2]
    assert balance(again.path).balanced


def test_a_failed_write_leaves_the_store(ingested, tmp_path, monkeypatch):
    wh, report = ingested
    target = tmp_path / "trajectories.duckdb"
    target.write_bytes(report.path.read_bytes())
    before = target.read_bytes()
    monkeypatch.setattr(store_mod, "insert_frame", lambda *a: (_ for _ in ()).throw(OSError("simulated crash")))
    with pytest.raises(OSError):
        ingest([TRAJECTORIES / "webvoyager"], Warehouse(tmp_path))
    assert target.read_bytes() == before
    # no temporary file left behind (the writers' lock file stays, empty, as with any flock)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trajectories.duckdb", "trajectories.duckdb.lock"]


def test_missing_path_and_foreign_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        ingest([tmp_path / "nope"], Warehouse(tmp_path))
    duckdb.connect(str(tmp_path / "trajectories.duckdb")).execute("CREATE TABLE x (a INT)").close()
    with pytest.raises(WarehouseError, match="not a worldforge trajectory store"):
        ingest([TRAJECTORIES / "webvoyager"], Warehouse(tmp_path))


def test_lone_surrogates_in_a_real_file_are_stored_escaped(tmp_path):
    # found by bench/fuzz.py: a JSON "\ud800" in an InterCode query made read_batch raise UnicodeEncodeError
    import json

    real = json.loads((TRAJECTORIES / "intercode/data/results/ctf/ic_ctf_gpt-4_25_turns.json").read_text())
    first = next(iter(real))
    real[first]["query"] = "\ud800 find the flag"
    real[first]["turn_history"]["observations"][0] = "out \udfff"
    target = tmp_path / "intercode/data/results/ctf/ic_ctf_gpt-4_25_turns.json"
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps(real))  # ASCII JSON: the surrogates as \ud800 escapes
    batch = store_mod.read_batch([tmp_path])
    assert batch.trajectories.height == len(real) and batch.quarantine.height == 0
    assert batch.trajectories["task"].str.contains(r"\ud800 find the flag", literal=True).any()
    assert batch.turns["observation"].str.contains(r"out \udfff", literal=True).any()


def test_ingest_is_incremental_by_content_hash(tmp_path):
    """Files already stored with the same bytes are not read again; a changed file is; force reads all."""
    src = tmp_path / "in"
    src.mkdir()
    rec = {"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "Action: search[a]"},
                        {"role": "user", "content": "Observation: first"}]}
    (src / "a.jsonl").write_text(json.dumps(rec) + "\n")
    (src / "b.jsonl").write_text(json.dumps(rec).replace("first", "second") + "\n")
    wh = Warehouse(tmp_path / "wh")
    first = ingest([src], wh)
    assert (first.files, first.unchanged, first.tally.inputs) == (2, 0, 2)
    again = ingest([src], wh)
    assert (again.files, again.unchanged, again.tally.inputs) == (0, 2, 0) and again.tally.balanced
    (src / "b.jsonl").write_text(json.dumps(rec).replace("first", "third") + "\n")
    changed = ingest([src], wh)
    assert (changed.files, changed.unchanged) == (1, 1)
    forced = ingest([src], wh, force=True)
    assert (forced.files, forced.unchanged) == (2, 0)
    con = duckdb.connect(str(wh.trajectory_store), read_only=True)
    try:
        obs = sorted(r[0] for r in con.execute("SELECT observation FROM turns").fetchall())
    finally:
        con.close()
    assert obs == ["first", "third"]  # the changed file replaced its old rows; nothing doubled


def test_streaming_ingest_masks_equal_mask_turns_on_the_real_corpus(ingested, tmp_path):
    """The store's statistics (local ones per chunk, corpus ones in SQL) equal ``mask_turns`` over the same turns,
    whatever the chunk size."""
    from worldforge.trajectories import mask_turns

    wh, _ = ingested
    small = Warehouse(tmp_path / "small")
    ingest([TRAJECTORIES], small, chunk_turns=97)  # many chunks: trajectories split across none of them
    for path in (wh.trajectory_store, small.trajectory_store):
        con = duckdb.connect(str(path), read_only=True)
        try:
            stored = con.sql("""SELECT u.*, t.domain FROM turns u JOIN trajectories t USING (trajectory_id)
                                ORDER BY trajectory_id, turn_idx""").pl()
            limits = con.sql("SELECT * FROM mask_thresholds ORDER BY domain, statistic").pl()
        finally:
            con.close()
        ref, ref_limits = mask_turns(stored.select("trajectory_id", "turn_idx", "domain", "action", "observation"))
        ref = ref.sort("trajectory_id", "turn_idx")
        assert stored.height == ref.height == 5285
        assert stored["obs_tokens"].to_list() == ref["obs_tokens"].to_list()
        for col in ("compression_ratio", "novelty", "line_surprisal"):
            assert (stored[col] - ref[col]).abs().max() < 1e-9, col
        assert stored["mask_reason"].to_list() == ref["mask_reason"].to_list()
        assert stored["informative"].to_list() == ref["informative"].to_list()
        assert limits.select("domain", "statistic", "source").equals(ref_limits.sort("domain", "statistic").select("domain", "statistic", "source"))
        assert (limits["threshold"] - ref_limits.sort("domain", "statistic")["threshold"]).abs().max() < 1e-9


def _chat_line(q: str, observation: str) -> str:
    return json.dumps({"messages": [
        {"role": "user", "content": f"Find {q}."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "web_search", "arguments": json.dumps({"query": q})}}]},
        {"role": "tool", "tool_call_id": "c1", "content": observation}, {"role": "assistant", "content": "done"}]}) + "\n"


def test_a_record_over_the_size_cap_is_quarantined_with_its_size(tmp_path):
    """Issue 33: a single huge observation is quarantined with its size and the cap (never held
    whole), the records beside it are read, the file's hash covers every byte, counts balance."""
    from worldforge.trajectories.readers import file_sha1, read_file

    big = " ".join(f"w{i}" for i in range(400_000))  # about 2.9 MiB of distinct words
    path = tmp_path / "in" / "one.jsonl"
    path.parent.mkdir()
    path.write_text(_chat_line("a", "result one") + _chat_line("b", big) + _chat_line("c", "result three"))
    recs = list(read_file(path, max_record_mb=1))
    kinds = [type(r).__name__ for r in recs]
    assert kinds == ["Trajectory", "Quarantined", "Trajectory"]
    line_mib = len(_chat_line("b", big).encode()) - 1
    assert recs[1].locator == "line 2" and f"over the 1 MiB size cap ({line_mib / 2**20:.1f} MiB" in recs[1].reason
    assert "WORLDFORGE_MAX_RECORD_MB" in recs[1].reason
    assert {r.file_sha1 for r in recs} == {file_sha1(path)}  # no "file changed while read": the skipped bytes were hashed
    assert [type(r).__name__ for r in read_file(path, max_record_mb=3)] == ["Trajectory"] * 3
    report = ingest([path.parent], Warehouse(tmp_path / "wh"), max_record_mb=1)
    assert report.tally.balanced and report.tally.kept == 2
    assert list(report.tally.dropped) == [recs[1].reason]
    # a document (parsed whole) whose trajectory is over the cap: the trajectory's text is what counts
    doc = tmp_path / "doc" / "one.json"
    doc.parent.mkdir()
    doc.write_text(json.dumps([json.loads(_chat_line("d", big)), json.loads(_chat_line("e", "short"))]))
    recs = list(read_file(doc, max_record_mb=1))
    assert [type(r).__name__ for r in recs] == ["Quarantined", "Trajectory"] and "size cap" in recs[0].reason


def test_the_size_cap_is_a_setting_and_an_option(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from worldforge.cli import app
    from worldforge.trajectories.readers import read_file

    path = tmp_path / "in" / "one.jsonl"
    path.parent.mkdir()
    path.write_text(_chat_line("a", "x " * 300_000) + _chat_line("b", "fine"))
    assert [type(r).__name__ for r in read_file(path)] == ["Trajectory", "Trajectory"]  # 16 MiB by default
    assert [type(r).__name__ for r in read_file(path, max_record_mb=0.5)] == ["Quarantined", "Trajectory"]  # 0.6 MiB
    monkeypatch.setenv("WORLDFORGE_MAX_RECORD_MB", "1")  # the CLI passes the setting down
    result = CliRunner().invoke(app, ["trajectories", "ingest", str(path.parent), "--warehouse", str(tmp_path / "wh1")])
    assert result.exit_code == 0 and "quarantined 0" in result.output and "trajectories 2" in result.output, result.output
    monkeypatch.setenv("WORLDFORGE_MAX_RECORD_MB", "0")
    result = CliRunner().invoke(app, ["trajectories", "ingest", str(path.parent), "--warehouse", str(tmp_path / "wh0")])
    assert result.exit_code != 0 and "WORLDFORGE_MAX_RECORD_MB" in result.output, result.output
    monkeypatch.delenv("WORLDFORGE_MAX_RECORD_MB")
    result = CliRunner().invoke(app, ["trajectories", "ingest", str(path.parent), "--warehouse", str(tmp_path / "wh"), "--max-record-mb", "0.5"])
    assert result.exit_code == 0, result.output
    assert "quarantined 1" in result.output and "trajectories 1" in result.output
