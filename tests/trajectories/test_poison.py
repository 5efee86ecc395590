"""Poison isolation: one bad file never aborts an ingest, and the balance still holds.

Every case of issue 16 part 3 sits in one folder next to good files; reading and ingesting
that folder quarantines (or skips) each bad one with its reason and keeps the good ones with
their exact turns.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import duckdb
import pytest

from worldforge.trajectories import Quarantined, Trajectory, ingest, read_file, read_path
from worldforge.trajectories.readers import discover, tau_bench
from worldforge.trajectories.store import balance
from worldforge.warehouse import Warehouse

pytestmark = pytest.mark.timeout(120)


def tau_record(task: str, results: list[str]) -> dict:
    """A τ-bench-shaped record (OpenAI chat with tool calls) with one call per result."""
    traj: list[dict] = [{"role": "system", "content": "policy"}, {"role": "user", "content": task}]
    for i, res in enumerate(results):
        traj.append({"role": "assistant", "content": None,
                     "tool_calls": [{"id": f"c{i}", "type": "function", "function": {"name": "lookup", "arguments": json.dumps({"i": i})}}]})
        traj.append({"role": "tool", "tool_call_id": f"c{i}", "name": "lookup", "content": res})
    return {"task_id": 1, "trial": 0, "reward": 1.0, "info": {}, "traj": traj}


def react_line(task: str, obs: str) -> str:
    """A FireAct-shaped JSONL line (ReAct text actions, observations in user messages)."""
    return json.dumps({"messages": [{"role": "user", "content": task},
                                    {"role": "assistant", "content": "Thought: look\nAction: search[x]"},
                                    {"role": "user", "content": f"Observation: {obs}"}]})


@pytest.fixture
def poisoned(tmp_path: Path) -> Path:
    d = tmp_path / "in"
    d.mkdir()
    (d / "good_tau.json").write_text(json.dumps([tau_record("find user 7", ["user 7: Ann", "order 9: shipped"])]))
    (d / "good_react.jsonl").write_text(react_line("q1", "Paris is the capital") + "\n" + react_line("q2", "Berlin") + "\n")
    # a good record with a lone surrogate escape in an observation (valid JSON, not valid UTF-8 text)
    (d / "surrogate.json").write_text(json.dumps([tau_record("t", ["half a pair: \ud800 here"])]))
    (d / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (d / "deep_line.jsonl").write_text(react_line("q", "fine") + "\n" + "[" * 100_000 + "]" * 100_000 + "\n")
    (d / "bigint.json").write_text('{"traj": ' + "9" * 10_000 + "}")
    (d / "latin1.json").write_bytes(json.dumps([tau_record("café", ["ok"])]).replace("caf\\u00e9", "caf\xe9").encode("latin-1"))
    (d / "bad_line.jsonl").write_bytes(react_line("q", "kept").encode() + b"\n" + b'{"messages": "\xff\xfe"}\n')
    (d / "empty.json").write_bytes(b"")
    (d / "blank.jsonl").write_text("\n  \n")
    (d / "nul.json").write_bytes(b"\x00" * 64)
    os.mkfifo(d / "pipe.jsonl")
    os.symlink("loop.json", d / "loop.json")
    os.symlink("nowhere.json", d / "dangling.json")
    os.symlink("/dev/zero", d / "zero.json")
    (d / os.fsdecode(b"name\xff.json")).write_text(json.dumps([tau_record("odd name", ["result"])]))
    (d / "zz_vanishes.json").write_text(json.dumps([tau_record("gone", ["x"])]))
    return d


EXPECTED_SKIPPED = {
    "pipe.jsonl": "not a regular file (FIFO)",
    "loop.json": "symlink loop",
    "dangling.json": "dangling symlink",
    "zero.json": "not a regular file (character device)",
}


def test_discover_skips_what_is_not_a_regular_file_without_opening_it(poisoned):
    found, skipped = discover([poisoned])
    assert {p.name: why for p, why in skipped} == EXPECTED_SKIPPED
    names = {rel for _, rel in found}
    assert "good_tau.json" in names and os.fsdecode(b"name\xff.json") in names
    assert not names & EXPECTED_SKIPPED.keys()


def test_every_poison_file_is_quarantined_and_the_good_ones_are_read(poisoned):
    out = list(read_path([poisoned]))
    q = {(r.source_path, r.locator): r.reason for r in out if isinstance(r, Quarantined)}
    kept = {(r.source_path, r.locator): r for r in out if isinstance(r, Trajectory)}
    assert q[("deep.json", "file")] == "JSON nested too deeply to parse"
    assert q[("deep_line.jsonl", "line 2")] == "JSON nested too deeply to parse"
    assert q[("bigint.json", "file")].startswith("integer too large to parse (Exceeds the limit (4300 digits)")
    assert q[("latin1.json", "file")].startswith("not UTF-8 text (byte 0xe9 at offset ")
    assert q[("bad_line.jsonl", "line 2")].startswith("not UTF-8 text (byte 0xff at offset ")
    assert q[("empty.json", "file")] == "empty file"
    assert q[("blank.jsonl", "file")] == "empty file"
    assert q[("nul.json", "file")].startswith("invalid JSON")
    assert [t.observation for t in kept[("good_tau.json", "item 0")].turns] == ["user 7: Ann", "order 9: shipped"]
    assert [t.observation for t in kept[("good_react.jsonl", "line 2")].turns] == ["Berlin"]
    assert [t.observation for t in kept[("deep_line.jsonl", "line 1")].turns] == ["fine"]
    assert [t.observation for t in kept[("bad_line.jsonl", "line 1")].turns] == ["kept"]
    assert kept[("surrogate.json", "item 0")].turns[0].observation == "half a pair: \ud800 here"
    assert kept[(os.fsdecode(b"name\xff.json"), "item 0")].task == "odd name"
    assert len(out) == len(q) + len(kept)


def test_ingest_balances_with_poison_and_a_file_that_vanishes(poisoned, tmp_path):
    wh = Warehouse(tmp_path / "wh")
    vanish = poisoned / "zz_vanishes.json"

    def progress(done: int, total: int, rel: str) -> None:  # the last file disappears after the listing
        if vanish.exists():
            vanish.unlink()

    report = ingest([poisoned], wh, progress=progress)
    assert report.tally.balanced
    assert report.skipped_reasons == {why: 1 for why in EXPECTED_SKIPPED.values()}
    tally = balance(wh.trajectory_store)  # re-counted from the store file
    assert tally.balanced and (tally.inputs, tally.kept) == (report.tally.inputs, report.tally.kept) == (16, 7)
    con = duckdb.connect(str(wh.trajectory_store), read_only=True)
    try:
        reasons = dict(con.execute("SELECT source_path, reason FROM quarantine WHERE locator = 'file'").fetchall())
        stored = dict(con.execute("SELECT t.task, string_agg(u.observation, ' | ' ORDER BY u.turn_idx) FROM trajectories t "
                                  "JOIN turns u USING (trajectory_id) GROUP BY 1").fetchall())
        names = {r[0] for r in con.execute("SELECT source_path FROM trajectories").fetchall()}
    finally:
        con.close()
    assert reasons["zz_vanishes.json"] == "cannot read file (No such file or directory)"
    assert stored["find user 7"] == "user 7: Ann | order 9: shipped"
    assert stored["t"] == "half a pair: \\ud800 here"  # the lone surrogate stored as its escape
    assert "name\\udcff.json" in names  # the undecodable byte of the name, as its escape


def test_an_unexpected_reader_failure_quarantines_that_record_only(tmp_path, monkeypatch):
    f = tmp_path / "two.json"
    f.write_text(json.dumps([tau_record("a", ["1"]), tau_record("b", ["2"])]))
    real = tau_bench.openai_tool_turns
    calls = iter([RuntimeError("boom"), None])

    def flaky(messages):
        exc = next(calls)
        if exc:
            raise exc
        return real(messages)

    monkeypatch.setattr(tau_bench, "openai_tool_turns", flaky)
    out = list(read_file(f))
    assert [type(r).__name__ for r in out] == ["Quarantined", "Trajectory"]
    assert (out[0].locator, out[0].reason) == ("item 0", "reader error (RuntimeError: boom)")
    assert out[1].task == "b"


def test_read_file_on_a_fifo_or_a_missing_file_never_blocks_nor_raises(tmp_path):
    """A path that turned into a FIFO (or vanished) after the listing: one quarantined record, at once."""
    from worldforge.trajectories.readers import file_sha1

    fifo = tmp_path / "late.jsonl"
    os.mkfifo(fifo)
    [q] = list(read_file(fifo))
    assert isinstance(q, Quarantined) and q.reason == "not a regular file (FIFO)"
    [q] = list(read_file(tmp_path / "gone.json"))
    assert q.reason == "cannot read file (No such file or directory)"
    with pytest.raises(OSError):
        file_sha1(fifo)
