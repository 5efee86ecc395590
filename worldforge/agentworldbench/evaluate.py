"""The whole evaluation over an AgentWorldBench export folder: infer, judge, score.

Reads ``<domain>_test.jsonl`` files (the first ``max_records_per_source`` records of each source
within each domain, so a capped run still covers every source),
writes under ``out/``: ``input.jsonl`` (the records evaluated), ``predictions.jsonl``
(``eval infer``), ``judged.jsonl`` (``eval judge``), ``scores.json`` (``eval score``), and the
completion caches beside them, so a re-run resumes.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from worldforge.agentworldbench.infer import MAX_TOKENS, infer_file
from worldforge.agentworldbench.judge import judge_file
from worldforge.agentworldbench.score import score_file
from worldforge.errors import WorldforgeError
from worldforge.llm.base import GenerationParams, WorldModelBackend
from worldforge.tally import Tally


@dataclass
class EvalResult:
    """What one evaluation did.

    Attributes:
        folder: the evaluation folder (``input.jsonl``, ``predictions.jsonl``, ``judged.jsonl``, ``scores.json``).
        backend: the world model's identity (``kind:model``).
        tally: lines in = predicted + failed by reason (the inference's).
        scores: :func:`~worldforge.agentworldbench.score.score_file` of the judged file.
    """

    folder: Path
    backend: str
    tally: Tally
    scores: dict = field(default_factory=dict)


def evaluate_export(
    export: str | Path,
    out: str | Path,
    backend: WorldModelBackend,
    judge: WorldModelBackend | None = None,
    max_records_per_source: int | None = None,
    params: GenerationParams | None = None,
) -> EvalResult:
    """Infer, judge and score every domain file of an export folder.

    Raises:
        WorldforgeError: the folder holds no ``*_test.jsonl`` file.
    """
    export, out = Path(export), Path(out)
    files = sorted(export.glob("*_test.jsonl"))
    if not files:
        raise WorldforgeError(f"{export}: no <domain>_test.jsonl files (build the AgentWorldBench export first)")
    out.mkdir(parents=True, exist_ok=True)
    inputs = out / "input.jsonl"
    with open(inputs, "w", encoding="utf-8") as fh:
        for f in files:
            taken: Counter = Counter()
            with open(f, encoding="utf-8") as src:
                for line in src:
                    try:
                        source = json.loads(line).get("source", "")
                    except (ValueError, AttributeError):
                        source = ""  # kept: infer records it as a malformed line
                    if max_records_per_source is None or taken[source] < max_records_per_source:
                        taken[source] += 1
                        fh.write(line)
    report = infer_file(inputs, out / "predictions.jsonl", backend, params or GenerationParams(temperature=0.0, max_tokens=MAX_TOKENS))
    judge_file(out / "predictions.jsonl", out / "judged.jsonl", judge)
    scores = score_file(out / "judged.jsonl")
    (out / "scores.json").write_text(json.dumps(scores, indent=2) + "\n", encoding="utf-8")
    return EvalResult(out, backend.identity, report.tally, scores)
