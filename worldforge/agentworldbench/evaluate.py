"""The whole evaluation: infer, judge, score (``worldforge eval run`` and the ``world_model_eval`` asset).

Reads one AgentWorldBench file or every ``<domain>_test.jsonl`` of a folder (the first
``max_records_per_source`` records of each source within each domain, so a capped run still
covers every source), and writes under ``out/``: ``input.jsonl`` (the records evaluated),
``predictions.jsonl`` (``eval infer``), ``judged.jsonl`` (``eval judge``), ``scores.json``
(``eval score``), and the completion caches beside them. A re-run is resumable: only records
without a prediction or without a readable verdict are sent again.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from worldforge.agentworldbench.infer import MAX_TOKENS, infer_file
from worldforge.agentworldbench.judge import JUDGE_ATTEMPTS, JudgeReport, judge_file
from worldforge.agentworldbench.messages import MessageStyle
from worldforge.agentworldbench.rubrics import PromptSet
from worldforge.agentworldbench.score import score_file
from worldforge.errors import WorldforgeError
from worldforge.llm.base import GenerationParams, WorldModelBackend
from worldforge.tally import Tally
from worldforge.warehouse.atomic import atomic_file


@dataclass
class EvalResult:
    """What one evaluation did.

    Attributes:
        folder: the evaluation folder (``input.jsonl``, ``predictions.jsonl``, ``judged.jsonl``, ``scores.json``).
        backend: the world model's identity (``kind:model``).
        tally: lines in = predicted + failed by reason (the inference's).
        judge: the judge run's counts.
        scores: :func:`~worldforge.agentworldbench.score.score_file` of the judged file.
    """

    folder: Path
    backend: str
    tally: Tally
    judge: JudgeReport | None = None
    scores: dict = field(default_factory=dict)


def input_files(source: str | Path) -> list[Path]:
    """The AgentWorldBench files of ``source``: the file itself, or a folder's ``*_test.jsonl``.

    Raises:
        WorldforgeError: no such file or folder, or a folder without ``*_test.jsonl`` files.
    """
    src = Path(source)
    if src.is_file():
        return [src]
    if not src.is_dir():
        raise WorldforgeError(f"{src}: no such AgentWorldBench file or folder")
    files = sorted(src.glob("*_test.jsonl"))
    if not files:
        raise WorldforgeError(f"{src}: no <domain>_test.jsonl files (build the AgentWorldBench export first)")
    return files


def evaluate_export(
    export: str | Path,
    out: str | Path,
    backend: WorldModelBackend,
    judge: WorldModelBackend | None = None,
    max_records_per_source: int | None = None,
    params: GenerationParams | None = None,
    judge_params: GenerationParams | None = None,
    prompts: PromptSet | None = None,
    style: MessageStyle = "reference",
    attempts: int = JUDGE_ATTEMPTS,
    progress: Callable[[str, int, int], None] | None = None,
) -> EvalResult:
    """Infer, judge and score an AgentWorldBench file or export folder.

    Args:
        export: a ``<domain>_test.jsonl`` file or a folder of them.
        out: the evaluation folder (created).
        backend: the world model.
        judge: the judge model (``None``: rule metrics only).
        max_records_per_source: records per source within each domain at most.
        params: the world model's sampling (default greedy, :data:`~worldforge.agentworldbench.infer.MAX_TOKENS`).
        judge_params: the judge's sampling (default: :func:`~worldforge.agentworldbench.judge.judge_file`'s).
        prompts: system prompts and rubrics (``--prompts DIR``).
        style: the message construction.
        attempts: tries per unreadable verdict.
        progress: called with ``(stage, done, total)``; stage ``infer`` or ``judge``.

    Raises:
        WorldforgeError: as :func:`input_files`.
    """
    files, out = input_files(export), Path(out)
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
                        fh.write(line if line.endswith("\n") else line + "\n")

    def stage(name: str) -> Callable[[int, int], None] | None:
        return None if progress is None else (lambda d, t: progress(name, d, t))

    report = infer_file(inputs, out / "predictions.jsonl", backend, params or GenerationParams(temperature=0.0, max_tokens=MAX_TOKENS),
                        progress=stage("infer"), style=style, prompts=prompts)
    judged = judge_file(out / "predictions.jsonl", out / "judged.jsonl", judge, judge_params, progress=stage("judge"), prompts=prompts, attempts=attempts)
    scores = score_file(out / "judged.jsonl")
    with atomic_file(out / "scores.json") as tmp:
        tmp.write_text(json.dumps(scores, indent=2) + "\n", encoding="utf-8")
    return EvalResult(out, backend.identity, report.tally, judged, scores)
