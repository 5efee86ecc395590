"""Judging world-model predictions (``worldforge eval judge``).

Input: the predictions JSONL of ``worldforge eval infer`` (one line per AgentWorldBench record,
``status`` ok with ``predicted_observation``, or failed with a reason; ``reference`` is the real
observation).

**Rule metrics** (no judge model; :mod:`worldforge.agentworldbench.verifiers`): ``format``,
``exact_match``, ``token_f1``, ``json_structure``, ``numeric_entity`` (each 0–1, ``None`` where it
does not apply). A failed prediction scores 0 on every applicable metric.

**Judge** (optional; any backend, normally an OpenAI-compatible server): the AgentWorldBench
rubric's five dimensions — format, factuality, consistency, realism, quality — each an integer
1–5, requested as structured output when the backend supports it, normalised as
``(s − 1) / 4 × 100``. A reply that is not five integers in range is a recorded judge failure.

:func:`worldforge.agentworldbench.score.score_file` aggregates the judged lines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from worldforge.agentworldbench.verifiers import score
from worldforge.errors import WorldforgeError
from worldforge.llm.base import Failure, GenerationParams, WorldModelBackend, WorldModelRequest
from worldforge.llm.cache import generate_cached
from worldforge.tally import Tally
from worldforge.warehouse.atomic import write_jsonl_atomic

JUDGE_DIMENSIONS = ("format", "factuality", "consistency", "realism", "quality")

JUDGE_SCHEMA: dict = {
    "type": "object",
    "properties": {d: {"type": "integer", "minimum": 1, "maximum": 5} for d in JUDGE_DIMENSIONS},
    "required": list(JUDGE_DIMENSIONS),
    "additionalProperties": False,
}

JUDGE_SYSTEM = (
    "You judge a world model: it predicted what an environment returns for an agent's action. Compare the "
    "prediction with the real observation and rate it on five dimensions, each an integer from 1 (worst) to 5 (best): "
    "format (the environment's output format and structure), factuality (facts agree with the real observation), "
    "consistency (coherent with the action and earlier context, no contradictions), realism (reads like the real "
    "environment, plausible detail), quality (overall usefulness as a simulation). Reply with only a JSON object: "
    '{"format": n, "factuality": n, "consistency": n, "realism": n, "quality": n}.'
)


def normalised(s: int) -> float:
    """A 1–5 judge score on 0–100: ``(s − 1) / 4 × 100``."""
    return (s - 1) / 4 * 100


def parse_judgement(text: str) -> dict[str, int] | str:
    """The five integer scores from a judge reply, or the reason they cannot be read."""
    m = re.search(r"\{.*\}", text, re.S)
    if not m:
        return "no JSON object in the judge reply"
    try:
        obj = json.loads(m.group())
    except json.JSONDecodeError:
        return "judge reply is not valid JSON"
    out = {}
    for d in JUDGE_DIMENSIONS:
        v = obj.get(d) if isinstance(obj, dict) else None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or int(v) != v or not 1 <= v <= 5:
            return f"judge score {d!r} missing or not an integer 1-5"
        out[d] = int(v)
    return out


def judge_messages(line: dict) -> list[dict]:
    """The judge's chat messages for one prediction line: the rubric (:data:`JUDGE_SYSTEM`), then the action, the real and the predicted observation."""
    user = (f"## Agent action\n{line.get('action') or '(not recorded)'}\n\n## Real observation\n{line.get('reference', '')}\n\n"
            f"## Predicted observation\n{line.get('predicted_observation', '')}")
    return [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": user}]


@dataclass
class JudgeReport:
    """Counts of a judge run.

    Attributes:
        output: the judged file.
        lines: judged-file lines = predictions (``status`` ok) + failed predictions (scored 0).
        judge: predictions sent to the judge = judged + judge failures by reason (empty
            without a judge backend).
    """

    output: Path
    lines: Tally = field(default_factory=lambda: Tally(unit="lines", kept_as="predicted", dropped_as="failed"))
    judge: Tally = field(default_factory=lambda: Tally(unit="predictions", kept_as="judged", dropped_as="judge failures"))


def _rules(line: dict) -> dict[str, float | None]:
    ref = line.get("reference") or ""
    if line.get("status") == "ok":
        return score(line.get("predicted_observation") or "", ref, line.get("domain") or "").scores
    # a failed prediction: 0 wherever the metric applies to the reference
    applies = score("", ref, line.get("domain") or "").scores
    return {k: (None if v is None else 0.0) for k, v in applies.items()}


def judge_file(
    predictions: str | Path,
    output: str | Path,
    judge: WorldModelBackend | None = None,
    params: GenerationParams | None = None,
    cache_path: str | Path | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> JudgeReport:
    """Score every prediction line with the rule metrics and, given a judge backend, the five dimensions.

    Args:
        predictions: the output of ``eval infer``.
        output: the judged JSONL (atomic write): each input line plus ``rules`` (metric → 0–1 or
            null), ``judge`` (dimension → 1–5), ``judge_normalised`` (→ 0–100), ``judge_status``.
        judge: the judge model (``None``: rule metrics only).
        params: the judge's sampling (default greedy, 128 tokens, JSON-schema output when supported).
        cache_path: the judge reply cache (default ``<output>.cache.sqlite``).
        progress: called with ``(done, total)`` as judge requests finish.

    Raises:
        WorldforgeError: the predictions file is missing.
    """
    src, out = Path(predictions), Path(output)
    if not src.is_file():
        raise WorldforgeError(f"{src}: no such predictions file (run `worldforge eval infer` first)")
    report = JudgeReport(out)
    rows: list[dict] = []
    with open(src, encoding="utf-8") as fh:
        for n, text in enumerate(fh, 1):
            if not text.strip():
                continue
            report.lines.take()
            try:
                line = json.loads(text)
                if not isinstance(line, dict):
                    raise ValueError
            except ValueError:
                line = {"line": n, "status": "failed", "reason": "malformed prediction line"}
            line["rules"] = _rules(line)
            if line.get("status") == "ok":
                report.lines.keep()
            else:
                report.lines.drop("failed prediction")
            rows.append(line)
    if judge is not None:
        params = params or GenerationParams(temperature=0.0, max_tokens=128, json_schema=JUDGE_SCHEMA if _supports_schema(judge) else None)
        reqs = {f"{i}": WorldModelRequest(id=f"judge:{i}", messages=tuple(judge_messages(r))) for i, r in enumerate(rows) if r.get("status") == "ok"}
        report.judge.take(len(reqs))
        result, _ = generate_cached(judge, list(reqs.values()), params, cache_path or out.with_name(out.name + ".cache.sqlite"), progress)
        for i, req in reqs.items():
            row = rows[int(i)]
            outcome = result.failures.get(req.id) or result.completions[req.id]
            if isinstance(outcome, Failure):
                row["judge_status"], row["judge_reason"] = "failed", outcome.reason
                report.judge.drop(outcome.reason.split(":")[0][:60])
                continue
            parsed = parse_judgement(outcome[0].text)
            if isinstance(parsed, str):
                row["judge_status"], row["judge_reason"] = "failed", parsed
                report.judge.drop(parsed)
                continue
            row["judge_status"], row["judge"] = "ok", parsed
            row["judge_normalised"] = {d: normalised(s) for d, s in parsed.items()}
            report.judge.keep()
    write_jsonl_atomic(out, rows)
    return report


def _supports_schema(backend: WorldModelBackend) -> bool:
    try:
        backend.check_params(GenerationParams(json_schema=JUDGE_SCHEMA))
        return True
    except WorldforgeError:
        return False
