"""The ``closed_recordings`` sensor: one run per newly closed recording, then turn_mask_stats materialized."""

from __future__ import annotations

import json
import os

import pytest
from dagster import DagsterInstance, RunRequest, SkipReason, build_sensor_context, materialize

from assets.recordings import closed_recordings, recorded_sessions_job
from assets.resources import WarehouseResource
from assets.trajectories import turn_mask_stats
from worldforge.recording.sink import RecordingSink, stored_recordings
from worldforge.trajectories import load_store
from worldforge.warehouse import Warehouse

pytestmark = pytest.mark.dagster

USER = {"role": "user", "content": "what is in the folder?"}
CALL = {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"cmd\": \"ls\"}"}}]}
RESULT = {"role": "tool", "tool_call_id": "c1", "content": "a.txt\nb.txt"}


def _record(sink: RecordingSink, messages: list, reply: dict) -> str:
    sid = sink.new_session_id()
    sink.append(sid, {"event": "exchange", "request": {"model": "m", "messages": messages}, "reply": reply})
    return sid


def test_sensor_requests_each_closed_recording_once(tmp_path):
    warehouse = WarehouseResource(root=str(tmp_path))

    def evaluate(cursor=None):
        ctx = build_sensor_context(cursor=cursor, resources={"warehouse": warehouse})
        return ctx, closed_recordings(ctx)

    assert isinstance(evaluate()[1], SkipReason)
    sink = RecordingSink(Warehouse(tmp_path), "openai")
    tool_sid = _record(sink, [USER, CALL, RESULT], {"role": "assistant", "content": "two files"})
    chat_sid = _record(sink, [USER], {"role": "assistant", "content": "no idea"})
    open_sid = _record(sink, [USER], {"role": "assistant", "content": "still open"})
    sink.close(tool_sid)
    sink.close(chat_sid)
    ctx, reqs = evaluate()
    assert all(isinstance(r, RunRequest) for r in reqs)
    by_session = {r.tags["session"]: r for r in reqs}
    assert set(by_session) == {tool_sid, chat_sid}  # the open session is not requested
    assert by_session[tool_sid].run_key == f"openai/{tool_sid}"
    assert by_session[tool_sid].tags["turns"] == "1" and by_session[tool_sid].tags["source"] == "record-openai"
    assert by_session[chat_sid].tags["turns"] == "0" and "nothing to learn from" in by_session[chat_sid].tags["quarantined"]
    assert isinstance(evaluate(ctx.cursor)[1], SkipReason)
    # a recording with the same modification time as the newest seen one is still requested once
    sink.close(open_sid)
    newest = max(r.mtime_ns for r in stored_recordings(Warehouse(tmp_path)))
    os.utime(tmp_path / "recordings" / "openai" / f"{open_sid}.json", ns=(newest, newest))
    ctx2, reqs2 = evaluate(ctx.cursor)
    assert [r.tags["session"] for r in reqs2] == [open_sid]
    assert json.loads(ctx2.cursor)["mtime_ns"] == newest
    assert isinstance(evaluate(ctx2.cursor)[1], SkipReason)
    # the run the sensor asks for: the loss-mask statistics over the store, the recording included
    assert recorded_sessions_job.name == "recorded_sessions"
    result = materialize([turn_mask_stats], resources={"warehouse": warehouse}, instance=DagsterInstance.ephemeral(), tags=by_session[tool_sid].tags)
    assert result.success
    store = load_store(tmp_path / "trajectories.duckdb")
    assert store.turns["mask_reason"].null_count() == 0 and store.turns.height == 1
