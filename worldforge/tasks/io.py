"""WideSearch task files: ``tasks.jsonl`` plus ``tables/<instance_id>.csv`` gold tables.

The layout and fields are those of the real tasks in ``../shared/data/widesearch_tasks/``:
one JSON object per line with ``instance_id``, ``question`` (or ``query``), ``evaluation``
(an object, or a JSON *string* holding it) and ``language``; the gold answer is a CSV whose
header names the required columns. Gold CSVs may start with a UTF-8 BOM, carry an unnamed
leading index column, and have headers with stray spaces: all three are handled.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worldforge.errors import WorldforgeError


class TaskError(WorldforgeError):
    """A task file or gold table cannot be read."""


def norm_column(name: str) -> str:
    """WideSearch's column normalisation: ``name.strip().lower().replace(" ", "")``."""
    return name.strip().lower().replace(" ", "")


@dataclass
class Task:
    """One WideSearch-style task.

    Attributes:
        instance_id: the task id (also the gold CSV's file name).
        question: the instruction given to the agent.
        evaluation: ``{unique_columns, required, eval_pipeline}`` (column names normalised).
        gold: gold rows, ``{normalised column: cell text}``.
        language: ``en``/``zh``...
        extra: other fields of the JSONL line, kept on export.
        raw_evaluation: the ``evaluation`` as the task file wrote it (names not normalised), for the
            ``widesearch`` scoring rules, which read it as WideSearch does; ``None`` for a task made here.
    """

    instance_id: str
    question: str
    evaluation: dict[str, Any]
    gold: list[dict[str, str]]
    language: str = "en"
    extra: dict[str, Any] = field(default_factory=dict)
    raw_evaluation: dict[str, Any] | None = field(default=None, compare=False, repr=False)

    @property
    def required(self) -> list[str]:
        """The columns an answer must give, normalised, in order."""
        return list(self.evaluation["required"])

    @property
    def unique_columns(self) -> list[str]:
        """The columns that identify a row (normalised): the scorer matches answer rows to gold rows on them."""
        return list(self.evaluation["unique_columns"])


def _raw_evaluation(ev: Any, where: str) -> dict[str, Any]:
    if isinstance(ev, str):
        try:
            ev = json.loads(ev)
        except json.JSONDecodeError as exc:
            raise TaskError(f"{where}: evaluation is not valid JSON ({exc.msg})") from None
    if not isinstance(ev, dict) or not {"unique_columns", "required", "eval_pipeline"} <= ev.keys():
        raise TaskError(f"{where}: evaluation needs unique_columns, required and eval_pipeline")
    return ev


def _normalise_evaluation(ev: dict[str, Any]) -> dict[str, Any]:
    return {
        "unique_columns": [norm_column(c) for c in ev["unique_columns"]],
        "required": [norm_column(c) for c in ev["required"]],
        "eval_pipeline": {norm_column(c): v for c, v in ev["eval_pipeline"].items()},
    }


def read_gold_csv(path: Path) -> list[dict[str, str]]:
    """Gold rows with normalised headers; an unnamed leading index column is dropped."""
    with path.open(encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.reader(fh))
    if not rows:
        return []
    header = [norm_column(h) for h in rows[0]]
    keep = [i for i, h in enumerate(header) if h and not h.startswith("unnamed:")]
    return [{header[i]: (r[i] if i < len(r) else "") for i in keep} for r in rows[1:] if any(c.strip() for c in r)]


def load_tasks(jsonl: str | Path, tables: str | Path | None = None) -> dict[str, Task]:
    """Read a task file and the gold tables beside it (``tables/`` next to the JSONL).

    Raises:
        TaskError: the file is missing or a line or gold table is malformed.
    """
    p = Path(jsonl)
    if not p.is_file():
        raise TaskError(f"{p}: no such task file")
    tdir = Path(tables) if tables else p.parent / "tables"
    out: dict[str, Task] = {}
    for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{p}:{i}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise TaskError(f"{where}: not JSON ({exc.msg})") from None
        if "instance_id" not in obj or "evaluation" not in obj:
            raise TaskError(f"{where}: needs instance_id and evaluation")
        iid = str(obj["instance_id"])
        raw = _raw_evaluation(obj["evaluation"], where)
        evaluation = _normalise_evaluation(raw)
        gold_path = tdir / f"{iid}.csv"
        if not gold_path.is_file():
            raise TaskError(f"{where}: gold table {gold_path} not found")
        extra = {k: v for k, v in obj.items() if k not in ("instance_id", "question", "query", "evaluation", "language")}
        out[iid] = Task(
            instance_id=iid,
            question=str(obj.get("question") or obj.get("query") or ""),
            evaluation=evaluation,
            gold=read_gold_csv(gold_path),
            language=str(obj.get("language", "en")),
            extra=extra,
            raw_evaluation=raw,
        )
    return out


def write_tasks(tasks: list[Task], out_dir: str | Path, evaluation_as_string: bool = True) -> Path:
    """Write ``out_dir/tasks.jsonl`` and ``out_dir/tables/<instance_id>.csv``.

    ``evaluation`` is written as a JSON string, as in the DeepWideSearch files.
    """
    d = Path(out_dir)
    (d / "tables").mkdir(parents=True, exist_ok=True)
    with (d / "tasks.jsonl").open("w", encoding="utf-8") as fh:
        for t in tasks:
            ev = json.dumps(t.evaluation, ensure_ascii=False) if evaluation_as_string else t.evaluation
            line = {"instance_id": t.instance_id, "question": t.question, "evaluation": ev, "language": t.language, **t.extra}
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")
    for t in tasks:
        with (d / "tables" / f"{t.instance_id}.csv").open("w", encoding="utf-8", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(t.required)
            for row in t.gold:
                w.writerow([row.get(c, "") for c in t.required])
    return d / "tasks.jsonl"
