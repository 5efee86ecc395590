"""World-model inference over an AgentWorldBench-format file (``worldforge eval infer``).

One output line per input line, in input order: the parsed prediction, or a recorded failure
with its reason (a malformed input line, a generation failure after retries, a reply without
its tags). Completions are cached as they arrive (:class:`~worldforge.llm.cache.CachedBackend`),
so a run that was killed or lost its server resumes where it stopped: a re-run generates only
what has no completion yet, and ``lines in == predictions + failures`` always.

Output line fields: the input record's own fields (``task``, ``id``, ``prompt``, ``response``,
``turn_idx`` …, as the reference's ``eval.py infer`` keeps them), ``gen`` (the raw reply, the
reference's field: its ``eval.py judge`` reads our predictions), and ``line``, ``domain`` (the
benchmark domain), ``status`` (``ok`` | ``failed``), ``think``, ``predicted_observation``,
``reference`` (the ground truth, header stripped), ``reason``, ``finish_reason``,
``prompt_tokens``, ``completion_tokens``, ``cached``, ``backend``, ``messages_style``.

Records are read as the reference writes them too (integer ids, no ``current_prompt``;
:class:`~worldforge.agentworldbench.records.AgentWorldBenchRecord`). The messages are the
reference's construction by default (:func:`~worldforge.agentworldbench.messages.build_messages`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from worldforge.agentworldbench.messages import MessageStyle, build_messages
from worldforge.agentworldbench.records import AgentWorldBenchRecord, read_records
from worldforge.agentworldbench.rubrics import PromptSet
from worldforge.agentworldbench.score import NOT_COVERED
from worldforge.errors import WorldforgeError
from worldforge.llm.base import Failure, GenerationParams, WorldModelBackend, WorldModelRequest
from worldforge.llm.cache import generate_cached
from worldforge.tally import Tally
from worldforge.warehouse.atomic import write_jsonl_atomic
from worldforge.worldmodel.parsing import ParseFailure, parse_prediction

MAX_TOKENS = 1024
"""Tokens per world-model reply at most, by default (``eval infer`` and the evaluation of an export)."""


@dataclass
class InferReport:
    """Counts of one run.

    Attributes:
        output: the predictions file.
        tally: lines in = predicted + failed by reason class (``HTTP 500``, ``timeout``,
            ``connection error``, ``malformed reply (HTML, status 200)``, ``missing <predicted_observation> tag`` ...).
        cached, generated: predictions taken from the cache and generated in this run.
        unanswered: requests that got no completion (HTTP errors, timeouts, malformed replies ...):
            nothing of them is cached, so a re-run retries exactly these.
        completion_tokens: tokens generated in this run, as the server counted them.
    """

    output: Path
    tally: Tally = field(default_factory=lambda: Tally(unit="lines", kept_as="predicted", dropped_as="failed"))
    cached: int = 0
    generated: int = 0
    unanswered: int = 0
    completion_tokens: int = 0


def grounding_of(record: AgentWorldBenchRecord) -> dict | None:
    """A grounded-backend grounding for a search record that names its world (extra fields
    ``world`` and optionally ``scenario``); the earlier actions become the history."""
    extra = record.model_extra or {}
    if not extra.get("world"):
        return None
    calls = []
    for p in record.prompt[: record.turn_idx]:
        body = p.split("```json", 1)[-1].rsplit("```", 1)[0] if "```json" in p else ""
        try:
            calls.append(json.loads(body))
        except json.JSONDecodeError:
            return None
    return {"world": extra["world"], "scenario": extra.get("scenario"), "warehouse": extra.get("warehouse"),
            "history": calls[:-1], "tool_call": calls[-1], "session_id": str(extra.get("session_id", record.id))}


def infer_file(
    input_path: str | Path,
    output_path: str | Path,
    backend: WorldModelBackend,
    params: GenerationParams | None = None,
    cache_path: str | Path | None = None,
    progress: Callable[[int, int], None] | None = None,
    style: MessageStyle = "reference",
    prompts: PromptSet | None = None,
) -> InferReport:
    """Run the world model on every record of an AgentWorldBench JSONL file.

    Args:
        input_path: ``<domain>_test.jsonl``.
        output_path: the predictions JSONL (written atomically: a failed run leaves the
            previous file untouched).
        backend: any backend; wrapped in a cache unless it already is one.
        params: sampling settings.
        cache_path: the completion cache (default ``<output>.cache.sqlite``).
        progress: called with ``(done, total)`` as requests finish.
        style: the message construction (``reference`` or ``worldforge``).
        prompts: system prompts used instead of each record's ``system_str`` where they come
            from a user's files (``--prompts DIR``); worldforge's defaults never replace a record's.

    Raises:
        WorldforgeError: the input file is missing; BackendError when the backend cannot start.
    """
    src, out = Path(input_path), Path(output_path)
    if not src.is_file():
        raise WorldforgeError(f"{src}: no such AgentWorldBench file")
    params = params or GenerationParams()
    lines: list[tuple[int, AgentWorldBenchRecord | str]] = list(read_records(src))
    requests: list[WorldModelRequest] = []
    by_id: dict[str, tuple[int, AgentWorldBenchRecord]] = {}
    for n, rec in lines:
        if isinstance(rec, AgentWorldBenchRecord):
            system = None
            if prompts is not None and prompts.source("system", rec.bench_domain()) != "worldforge":
                system = prompts.system_prompt(rec.bench_domain())
            req = WorldModelRequest(id=f"{n}:{rec.id}", messages=tuple(build_messages(rec, style=style, system=system)), grounding=grounding_of(rec))
            requests.append(req)
            by_id[req.id] = (n, rec)
    result, cached = generate_cached(backend, requests, params, cache_path or out.with_name(out.name + ".cache.sqlite"), progress)
    report = InferReport(out)
    report.tally.take(len(lines))
    rows = []
    for n, rec in lines:
        if not isinstance(rec, AgentWorldBenchRecord):
            rows.append({"line": n, "status": "failed", "reason": rec})
            report.tally.drop("malformed input")
            continue
        rid = f"{n}:{rec.id}"
        base = rec.model_dump(mode="json") | {"line": n, "domain": rec.bench_domain(), "gen": "", "reference": rec.reference(),
                                              "backend": cached.identity, "messages_style": style}
        outcome = result.failures.get(rid) or result.completions[rid]
        if isinstance(outcome, Failure):
            rows.append(base | {"status": "failed", "reason": outcome.reason})
            report.tally.drop(_reason_class(outcome.reason))
            report.unanswered += 1
            continue
        c = outcome[0]
        report.cached += c.cached
        report.generated += not c.cached
        report.completion_tokens += c.completion_tokens
        meta = {"gen": c.text, "finish_reason": c.finish_reason, "prompt_tokens": c.prompt_tokens, "completion_tokens": c.completion_tokens, "cached": c.cached}
        parsed = parse_prediction(c.text)
        if isinstance(parsed, ParseFailure):
            rows.append(base | meta | {"status": "failed", "reason": parsed.reason})
            report.tally.drop(parsed.reason.split(" (")[0])
        else:
            rows.append(base | meta | {"status": "ok", "think": parsed.think, "predicted_observation": parsed.observation})
            report.tally.keep()
    write_jsonl_atomic(out, rows)
    return report


def _reason_class(reason: str) -> str:
    for prefix in ("HTTP", "timeout", "connection error", NOT_COVERED, "grounding failed", "prompt"):
        if reason.startswith(prefix):
            return prefix if prefix != "HTTP" else reason.split(":")[0]
    return reason.split(":")[0][:60]
