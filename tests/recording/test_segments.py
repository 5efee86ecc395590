"""SegmentLog, RecordingSink and the recorded-trajectory reader, without servers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

import worldforge
from worldforge.recording.segments import SegmentLog, safe_session_id
from worldforge.recording.sink import RecordingSink, is_prefix, merge_conversation, openai_document
from worldforge.trajectories.readers import read_file
from worldforge.warehouse import Warehouse


def _call(cid: str, name: str, args: dict) -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


SYSTEM = {"role": "system", "content": "You are a shell agent."}
USER = {"role": "user", "content": "How many lines does notes.txt have?"}
CALL1 = {"role": "assistant", "content": None, "tool_calls": [_call("call_1", "bash", {"cmd": "wc -l notes.txt"})]}
RESULT1 = {"role": "tool", "tool_call_id": "call_1", "content": "42 notes.txt"}
CALL2 = {"role": "assistant", "content": "", "tool_calls": [_call("call_2", "bash", {"cmd": "head -1 notes.txt"})]}
RESULT2 = {"role": "tool", "tool_call_id": "call_2", "content": "first line"}
FINAL = {"role": "assistant", "content": "notes.txt has 42 lines."}


def _exchange(messages: list, reply: dict) -> dict:
    return {"event": "exchange", "request": {"model": "tiny", "messages": messages, "tools": [{"type": "function", "function": {"name": "bash"}}]}, "reply": reply}


def test_append_is_one_fsynced_line_per_event(tmp_path, monkeypatch):
    synced = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
    seg = SegmentLog(tmp_path / "seg")
    seg.append("s1", {"event": "start", "n": 1})
    seg.append("s1", {"event": "exchange", "text": "é\nnewline inside"})
    lines = (tmp_path / "seg" / "s1.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(x)["event"] for x in lines] == ["start", "exchange"]
    # the file on each append, plus the folder when the segment was created
    assert len(synced) == 3
    assert seg.open_sessions() == ["s1"]
    assert seg.events("s1")[1]["text"] == "é\nnewline inside"


def test_torn_last_line_is_skipped(tmp_path):
    seg = SegmentLog(tmp_path)
    seg.append("s", {"event": "start"})
    seg.append("s", {"event": "exchange", "k": 1})
    with open(tmp_path / "s.jsonl", "a") as fh:
        fh.write('{"event": "exchange", "k": 2, "request": {"mess')  # killed mid-write
    assert [e.get("k") for e in seg.events("s")] == [None, 1]
    assert seg.torn["s"] == 1


def test_an_append_onto_a_torn_line_is_read_back(tmp_path):
    """A restarted writer's next event is not glued onto the torn line a kill -9 left."""
    seg = SegmentLog(tmp_path)
    seg.append("s", {"event": "start"})
    with open(tmp_path / "s.jsonl", "a") as fh:
        fh.write('{"event": "exchange", "k": 1, "request": {"mess')  # killed mid-write
    seg.append("s", {"event": "exchange", "k": 2})
    assert [e.get("k") for e in seg.events("s")] == [None, 2]
    assert seg.torn["s"] == 1


@pytest.mark.parametrize("fails", ["write", "fsync"])
def test_a_full_disk_leaves_the_segment_as_it_was(tmp_path, monkeypatch, fails):
    """A write that ENOSPC cut short (or an fsync that failed) is taken back: nothing of the failed
    event stays, and once space returns the next event is read back (it used to be appended onto
    the torn fragment and skipped as not JSON)."""
    import errno

    import worldforge.recording.segments as segments

    seg = SegmentLog(tmp_path)
    seg.append("s", {"event": "start"})
    path = tmp_path / "s.jsonl"
    before = path.read_bytes()
    real_write, real_fsync = os.write, os.fsync

    def short_write(fd, data):  # half the line reaches the disk, then it is full
        real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, "No space left on device")

    def full_fsync(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    if fails == "write":
        monkeypatch.setattr(segments.os, "write", short_write)
    else:
        monkeypatch.setattr(segments.os, "fsync", full_fsync)
    with pytest.raises(OSError, match="No space left"):
        seg.append("s", {"event": "exchange", "k": 1, "text": "x" * 200})
    monkeypatch.setattr(segments.os, "write", real_write)
    monkeypatch.setattr(segments.os, "fsync", real_fsync)
    assert path.read_bytes() == before
    seg.append("s", {"event": "exchange", "k": 2})
    assert [e.get("k") for e in seg.events("s")] == [None, 2]
    assert seg.torn["s"] == 0


def test_close_renames_and_unsafe_ids_are_refused(tmp_path):
    seg = SegmentLog(tmp_path)
    seg.append("a", {"event": "start"})
    assert seg.close("a") == tmp_path / "a.jsonl.closed"
    assert seg.open_sessions() == [] and seg.is_known("a")
    assert seg.close("a") is None
    with pytest.raises(ValueError, match="not file-name safe"):
        seg.append("../evil", {})
    assert safe_session_id("../my session/1") == "_my_session_1"


def test_conversation_merge_tolerates_resent_reply_fields():
    reply = {**CALL1, "refusal": None}
    resent = {"role": "assistant", "tool_calls": [{**_call("call_1", "bash", {"cmd": "wc -l notes.txt"})}]}
    assert is_prefix([SYSTEM, USER, reply], [SYSTEM, USER, resent, RESULT1])
    assert not is_prefix([SYSTEM, USER, FINAL], [SYSTEM, USER, CALL1])
    # a rewritten history keeps what was recorded and appends the new part
    assert merge_conversation([USER, FINAL], [USER, CALL1]) == [USER, FINAL, CALL1]


def test_openai_document_merges_three_requests():
    events = [
        {"event": "start", "at": "t0", "upstream": "http://up/v1"},
        {**_exchange([SYSTEM, USER], CALL1), "at": "t1"},
        {**_exchange([SYSTEM, USER, CALL1, RESULT1], CALL2), "at": "t2"},
        {**_exchange([SYSTEM, USER, CALL1, RESULT1, CALL2, RESULT2], FINAL), "at": "t3"},
    ]
    doc = openai_document("s", events)
    assert doc["messages"] == [SYSTEM, USER, CALL1, RESULT1, CALL2, RESULT2, FINAL]
    assert (doc["started_at"], doc["ended_at"], doc["exchanges"], doc["model"]) == ("t0", "t3", 3, "tiny")


def _store_rows(warehouse, sql):
    con = duckdb.connect(str(warehouse / "trajectories.duckdb"), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_sink_close_stores_turns_with_mask_statistics(tmp_path):
    sink = RecordingSink(Warehouse(tmp_path), "openai")
    sid = sink.new_session_id("agent 7")
    assert sid.startswith("agent_7-")
    sink.append(sid, {"event": "start", "upstream": "http://up/v1"})
    sink.append(sid, _exchange([SYSTEM, USER], CALL1))
    sink.append(sid, _exchange([SYSTEM, USER, CALL1, RESULT1], CALL2))
    sink.append(sid, _exchange([SYSTEM, USER, CALL1, RESULT1, CALL2, RESULT2], FINAL))
    closed = sink.close(sid)
    assert (closed.trajectories, closed.turns, closed.quarantined) == (1, 2, None)
    assert closed.path == tmp_path / "recordings" / "openai" / f"{sid}.json"
    assert json.loads(closed.path.read_text())["recorder"] == "worldforge record openai"
    assert sink.segments.open_sessions() == []
    rows = _store_rows(tmp_path, "SELECT t.source, t.domain, t.task, u.turn_idx, u.action, u.observation, u.obs_tokens, u.mask_reason "
                                 "FROM turns u JOIN trajectories t USING (trajectory_id) ORDER BY turn_idx")
    assert [r[:3] for r in rows] == [("record-openai", "terminal", USER["content"])] * 2
    assert json.loads(rows[0][4]) == {"name": "bash", "arguments": {"cmd": "wc -l notes.txt"}}
    assert [r[5] for r in rows] == ["42 notes.txt", "first line"]
    assert all(r[6] is not None and r[7] is not None for r in rows)
    assert sink.close(sid) is None  # already stored


def test_plain_chat_is_quarantined_and_file_kept(tmp_path):
    sink = RecordingSink(Warehouse(tmp_path), "openai")
    sid = sink.new_session_id()
    sink.append(sid, _exchange([USER], FINAL))
    closed = sink.close(sid)
    assert closed.trajectories == 0 and "nothing to learn from" in closed.quarantined
    assert closed.path.exists()
    assert _store_rows(tmp_path, "SELECT count(*) FROM quarantine")[0][0] == 1


def test_mcp_document_reads_calls_as_turns(tmp_path):
    sink = RecordingSink(Warehouse(tmp_path), "mcp")
    sid = sink.new_session_id()
    sink.append(sid, {"event": "start", "upstream": "stdio: server"})
    sink.append(sid, {"event": "tools", "tools": [{"name": "lookup", "inputSchema": {"type": "object"}}]})
    sink.append(sid, {"event": "call", "name": "lookup", "arguments": {"q": "x"}, "result_text": "found x", "is_error": False})
    sink.append(sid, {"event": "call", "name": "lookup", "arguments": {"q": "y"}, "result_text": "Error: no y", "is_error": True})
    closed = sink.close(sid)
    assert (closed.trajectories, closed.turns) == (1, 2)
    rows = _store_rows(tmp_path, "SELECT t.source, t.domain, u.observation FROM turns u JOIN trajectories t USING (trajectory_id) ORDER BY turn_idx")
    assert rows == [("record-mcp", "mcp", "found x"), ("record-mcp", "mcp", "Error: no y")]


def test_reader_quarantines_bad_recordings(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"recorder": "worldforge record openai", "messages": "oops"}))
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"recorder": "someone else", "messages": []}))
    (rec_bad,), (rec_other,) = list(read_file(bad)), list(read_file(other))
    assert rec_bad.reason == "messages is not a list of chat messages"
    assert rec_other.reason.startswith("unknown recorder 'someone else'")


KILLER = """
import sys
from worldforge.recording.sink import RecordingSink
from worldforge.warehouse import Warehouse
sink = RecordingSink(Warehouse(sys.argv[1]), "openai")
sink.append("crash", {"event": "start", "upstream": "u"})
sink.append("crash", __EX1__)
sink.append("crash", __EX2__)
print("ready", flush=True)
sys.stdin.readline()
"""


def test_recover_after_kill_9_stores_the_open_session(tmp_path):
    ex1 = _exchange([SYSTEM, USER], CALL1)
    ex2 = _exchange([SYSTEM, USER, CALL1, RESULT1], FINAL)
    code = KILLER.replace("__EX1__", repr(ex1)).replace("__EX2__", repr(ex2))
    env = {**os.environ, "PYTHONPATH": str(Path(worldforge.__file__).parents[1])}
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout.readline().strip() == "ready"
        proc.kill()  # SIGKILL: no cleanup runs
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    with open(tmp_path / "recordings" / "segments" / "openai" / "crash.jsonl", "a") as fh:
        fh.write('{"event": "exch')  # and a torn line on top
    sink = RecordingSink(Warehouse(tmp_path), "openai")
    (closed,) = sink.recover()
    assert (closed.session_id, closed.trajectories, closed.turns) == ("crash", 1, 1)
    assert _store_rows(tmp_path, "SELECT observation FROM turns") == [("42 notes.txt",)]
    assert sink.recover() == []
