"""Export stored trajectories to ATIF and to OpenTelemetry GenAI spans, for existing viewers and tracing UIs.

* **ATIF** (Harbor's Agent Trajectory Interchange Format, ``ATIF-v1.4``; laude-institute/harbor
  ``docs/rfcs/0001-trajectory-format.md``): one file per trajectory,
  ``OUT/<source>/<trajectory_id>.json``. A user step holds the task; each turn is an agent step
  whose action, when it is a ``{"name", "arguments"}`` tool call, is a ``tool_calls`` entry
  answered by ``observation.results[0].source_call_id``, and otherwise (a shell command, a
  ReAct action) the step's ``message`` with a result without ``source_call_id``. The step's
  ``extra`` holds the loss-mask decision (``informative``, ``mask_reason``).
* **OTel** (OTLP JSON, the ``ExportTraceServiceRequest`` encoding the collector's file exporter
  writes; GenAI semantic conventions): one file per source, ``OUT/<source>.jsonl``, one export
  request per line and per trajectory. A trajectory is one trace: an ``invoke_agent`` root span
  (``gen_ai.conversation.id`` = the trajectory id, ``gen_ai.input.messages`` = the task) and one
  ``execute_tool`` child span per turn (``gen_ai.tool.name``, ``gen_ai.tool.call.id``,
  ``gen_ai.tool.call.arguments``, ``gen_ai.tool.call.result``) plus ``worldforge.action`` (the
  action text as stored), ``worldforge.informative`` and ``worldforge.mask_reason``. Span times
  are synthetic (1 ms per turn from the Unix epoch): the store keeps no timestamps.

Both formats read back into the same turns with :func:`~worldforge.trajectories.readers.read_file`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from worldforge.errors import WarehouseError
from worldforge.trajectories.model import StoredTrajectory
from worldforge.trajectories.store import iter_trajectories
from worldforge.warehouse.atomic import atomic_dir
from worldforge.warehouse.layout import Warehouse

FORMATS = ("atif", "otel")
ATIF_VERSION = "ATIF-v1.4"
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class ExportReport:
    """What an export wrote: ``trajectories`` and ``turns`` exported, ``files`` written under ``out``."""

    format: str
    out: Path
    trajectories: int
    turns: int
    files: int


def tool_call(action: str) -> tuple[str, Any] | None:
    """``(name, arguments)`` of an action stored as ``{"name", "arguments"}`` JSON (``None`` for a text action)."""
    if not action.startswith("{"):
        return None
    try:
        obj = json.loads(action)
    except ValueError:
        return None
    if isinstance(obj, dict) and set(obj) == {"name", "arguments"} and isinstance(obj["name"], str):
        return obj["name"], obj["arguments"]
    return None


def atif_document(tr: StoredTrajectory) -> dict:
    """One trajectory as an ATIF document (see the module docstring)."""
    steps: list[dict] = [{"step_id": 1, "source": "user", "message": tr.task}]
    for t in tr.turns:
        step: dict[str, Any] = {"step_id": len(steps) + 1, "source": "agent",
                                "extra": {"informative": t.informative, "mask_reason": t.mask_reason}}
        call = tool_call(t.action)
        if call is None:
            step["message"] = t.action
            step["observation"] = {"results": [{"content": t.observation}]}
        else:
            cid = f"call_{t.turn_idx}"
            step["message"] = ""
            step["tool_calls"] = [{"tool_call_id": cid, "function_name": call[0],
                                   "arguments": call[1] if isinstance(call[1], dict) else {"input": call[1]}}]
            step["observation"] = {"results": [{"source_call_id": cid, "content": t.observation}]}
        steps.append(step)
    return {"schema_version": ATIF_VERSION, "session_id": tr.trajectory_id,
            "agent": {"name": tr.source, "version": "worldforge"}, "steps": steps,
            "final_metrics": {"total_steps": len(steps)},
            "extra": {"source": tr.source, "domain": tr.domain, "origin": tr.origin}}


def _attr(key: str, value: Any) -> dict:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": str(value)}}


def otlp_request(tr: StoredTrajectory) -> dict:
    """One trajectory as an OTLP JSON ``ExportTraceServiceRequest`` of GenAI spans (see the module docstring)."""
    trace_id = hashlib.sha256(tr.trajectory_id.encode()).hexdigest()[:32]
    root_id = trace_id[:16]
    n = len(tr.turns)
    spans = [{
        "traceId": trace_id, "spanId": root_id, "name": f"invoke_agent {tr.source}", "kind": 1,
        "startTimeUnixNano": "0", "endTimeUnixNano": str((n + 1) * 1_000_000),
        "attributes": [_attr("gen_ai.operation.name", "invoke_agent"), _attr("gen_ai.agent.name", tr.source),
                       _attr("gen_ai.conversation.id", tr.trajectory_id),
                       _attr("gen_ai.input.messages", json.dumps([{"role": "user", "parts": [{"type": "text", "content": tr.task}]}], ensure_ascii=False)),
                       _attr("worldforge.domain", tr.domain)],
        "status": {},
    }]
    for t in tr.turns:
        call = tool_call(t.action)
        name, args = call if call is not None else ("action", t.action)
        span_id = hashlib.sha256(f"{tr.trajectory_id}#{t.turn_idx}".encode()).hexdigest()[:16]
        start = (t.turn_idx + 1) * 1_000_000
        spans.append({
            "traceId": trace_id, "spanId": span_id, "parentSpanId": root_id, "name": f"execute_tool {name}", "kind": 1,
            "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 900_000),
            "attributes": [_attr("gen_ai.operation.name", "execute_tool"), _attr("gen_ai.tool.name", name),
                           _attr("gen_ai.tool.call.id", f"call_{t.turn_idx}"),
                           _attr("gen_ai.tool.call.arguments", args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)),
                           _attr("gen_ai.tool.call.result", t.observation), _attr("gen_ai.conversation.id", tr.trajectory_id),
                           _attr("worldforge.action", t.action), _attr("worldforge.informative", t.informative),
                           _attr("worldforge.mask_reason", t.mask_reason)],
            "status": {},
        })
    return {"resourceSpans": [{"resource": {"attributes": [_attr("service.name", "worldforge")]},
                               "scopeSpans": [{"scope": {"name": "worldforge.trajectories"}, "spans": spans}]}]}


def export_trajectories(warehouse: Warehouse, out: str | Path, fmt: str, source: str | None = None,
                        progress: Callable[[int], None] | None = None) -> ExportReport:
    """Export the trajectory store's trajectories (one source, or all) to ``out`` as ATIF or OTel.

    The trajectories are streamed from the store (memory: one trajectory and one open file per
    source); ``out`` is replaced atomically when the export succeeds.

    Args:
        warehouse: the warehouse holding ``trajectories.duckdb``.
        out: the folder to write (replaced).
        fmt: ``atif`` or ``otel``.
        source: only this source (``None``: every source).
        progress: called with the number of trajectories exported so far.

    Raises:
        ValueError: an unknown format.
        WarehouseError: no store, or no trajectory (of ``source``) in it; nothing is written.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r} (choose from {', '.join(FORMATS)})")
    path = warehouse.trajectory_store
    if not path.exists():
        raise WarehouseError(f"{path}: no trajectory store (run `worldforge trajectories ingest` first)")
    n = turns = 0
    files: dict[str, Any] = {}
    with atomic_dir(out) as tmp:
        try:
            for tr in iter_trajectories(path):
                if source is not None and tr.source != source:
                    continue
                safe = _SAFE.sub("_", tr.source)
                if fmt == "atif":
                    d = tmp / safe
                    d.mkdir(exist_ok=True)
                    (d / f"{tr.trajectory_id}.json").write_text(json.dumps(atif_document(tr), ensure_ascii=False, indent=1), encoding="utf-8")
                    files[f"{safe}/{tr.trajectory_id}"] = None
                else:
                    fh = files.get(safe) or files.setdefault(safe, open(tmp / f"{safe}.jsonl", "w", encoding="utf-8"))  # noqa: SIM115
                    fh.write(json.dumps(otlp_request(tr), ensure_ascii=False) + "\n")
                n += 1
                turns += len(tr.turns)
                if progress:
                    progress(n)
        finally:
            for fh in files.values():
                if fh is not None:
                    fh.close()
        if n == 0:
            raise WarehouseError(f"{path}: no trajectories{f' of source {source!r}' if source else ''} to export")
    return ExportReport(fmt, Path(out), n, turns, len(files))
