"""Scoring a Markdown-table answer against a WideSearch task.

Two rule sets (``rules``, :data:`RULES`): ``worldforge`` (the default, below) and ``widesearch``, which
reproduces WideSearch's official scorer, quirks included
(:mod:`worldforge.tasks.widesearch`). The default rules follow WideSearch's (ByteDance, MIT;
``evaluate_single_query``):

1. Column names are normalised (``strip().lower().replace(" ", "")``); the answer must have
   every required column. Cells of both tables are cleaned the same way first
   (:func:`clean_cell`: ``<br>`` and line breaks become spaces, whitespace runs one space), since
   a Markdown answer cannot hold a line break that a gold CSV cell can.
2. Rows are de-duplicated on ``unique_columns``, every ``eval_pipeline`` column of both
   tables is preprocessed, and answer rows are matched to gold rows on ``unique_columns``
   (an inner join).
3. Each matched row scores 1 per key column and, per non-key column, each of its metrics;
   a row's score is the minimum over its columns.
4. ``precision_by_row`` = Σ row scores / answer rows, ``recall_by_row`` = Σ / gold rows;
   ``*_by_item`` the same over cells (rows × required columns); F1 is their harmonic mean.

Differences, each reported in ``notes``: when preprocessing makes distinct gold keys
collide (``extract_number`` turns every "第一章" into ``NULL``), rows are matched on the
normalised raw keys; answer columns that are not required are ignored
(WideSearch would try an LLM column alignment, then give 0); ``llm_judge`` columns use a
``judge`` (:class:`worldforge.tasks.judge.LLMJudge` with a language model) and, without one, fall
back to normalised exact match, which the notes say; a ``number_near``
without a tolerance uses 0; malformed answers score 0 with the reason, never an exception.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import polars as pl

from worldforge.tasks.io import Task, TaskError, load_tasks, norm_column
from worldforge.tasks.metrics import METRICS, PREPROCESS, Score, norm_str

RULES = ("worldforge", "widesearch")
"""The scoring rules: ``worldforge`` (the default) and ``widesearch`` (WideSearch's official scorer)."""

Judge = Callable[[list[str], list[str], str], list[float | None]]
"""``judge(responses, targets, criterion) -> scores in [0, 1]``, one per pair; ``None`` when the judge
gave no verdict (that cell is scored by normalised exact match; 0 under the ``widesearch`` rules).
:class:`worldforge.tasks.judge.LLMJudge` is one backed by a language model; under the ``widesearch`` rules its
``align`` method (:data:`worldforge.tasks.widesearch.Aligner`) also aligns columns and keys."""

_FENCE = re.compile(r"```(?:markdown|md)?\s*\n(.*?)```", re.S)
_BREAK = re.compile(r"<br\s*/?>", re.I)
_SPACE = re.compile(r"\s+")
_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")


def _split_row(line: str) -> list[str]:
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    cells = re.split(r"(?<!\\)\|", line)
    return [_BREAK.sub("\n", c.strip().replace("\\|", "|")) for c in cells]


def clean_cell(text: object) -> str:
    """A cell as both sides of a comparison see it: ``<br>`` (any form) and line breaks as spaces,
    every run of whitespace one space, no leading or trailing space.

    A Markdown answer cannot hold a line break, so a gold cell written on two lines must compare
    equal to the same text on one line, with ``<br>``, ``<br/>`` or a space where the break was.
    """
    return _SPACE.sub(" ", _BREAK.sub(" ", str(text))).strip()


def parse_markdown_table(text: str) -> tuple[list[str], list[list[str]]] | None:
    """The first Markdown table in ``text`` (inside a fence or not) as (header, rows)."""
    blocks = _FENCE.findall(text) or [text]
    for block in blocks:
        lines = block.splitlines()
        for i in range(len(lines) - 1):
            if "|" in lines[i] and _SEPARATOR.match(lines[i + 1]):
                header = _split_row(lines[i])
                rows = []
                for line in lines[i + 2:]:
                    if "|" not in line or not line.strip():
                        break
                    rows.append(_split_row(line))
                return header, rows
    return None


def render_markdown_table(columns: list[str], rows: list[dict[str, str]]) -> str:
    """A Markdown table (``|`` escaped, newlines as ``<br>``), the inverse of the parser."""

    def cell(v: str) -> str:
        return str(v).replace("|", "\\|").replace("\n", "<br>")

    out = ["| " + " | ".join(cell(c) for c in columns) + " |", "|" + "---|" * len(columns)]
    out += ["| " + " | ".join(cell(r.get(c, "")) for c in columns) + " |" for r in rows]
    return "\n".join(out)


def frame_markdown(frame: pl.DataFrame | list[dict], rows: int | None = None) -> str:
    """A frame or a list of dict rows (its first ``rows`` rows) as a Markdown table
    (:func:`render_markdown_table`); ``None`` as an empty cell, floats to 3 decimals."""
    frame = frame if isinstance(frame, pl.DataFrame) else pl.DataFrame(frame)
    head = frame if rows is None else frame.head(rows)
    cells = [{c: "" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v)) for c, v in r.items()} for r in head.iter_rows(named=True)]
    return render_markdown_table(head.columns, cells)


def _dedup(rows: list[dict[str, str]], keys: list[str]) -> list[dict[str, str]]:
    seen, out = set(), []
    for r in rows:
        k = tuple(r.get(c, "") for c in keys)
        if k not in seen:
            seen.add(k)
            out.append(r)
    return out


def _preprocess(rows: list[dict[str, str]], pipeline: dict) -> list[dict[str, str]]:
    out = []
    for r in rows:
        r = dict(r)
        for col, item in pipeline.items():
            if col in r:
                for name in item.get("preprocess", []):
                    r[col] = PREPROCESS[name](r[col]) if name in PREPROCESS else r[col]
        out.append(r)
    return out


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r > 1e-9 else 0.0


def check_rules(rules: str) -> str:
    """``rules`` when it names a rule set of :data:`RULES`.

    Raises:
        TaskError: any other value (the message lists the rule sets).
    """
    if rules not in RULES:
        raise TaskError(f"unknown scoring rules {rules!r}: use one of {', '.join(RULES)}")
    return rules


def score_table(answer_markdown: str, task: Task, judge: Judge | None = None, rules: str = "worldforge") -> Score:
    """Score an answer (one Markdown table) against a task's gold table.

    Args:
        answer_markdown: the agent's answer; the first Markdown table in it is scored.
        task: the task with its gold rows and ``evaluation``.
        judge: scores ``llm_judge`` columns; without one they use normalised exact match. Under
            ``widesearch`` rules its ``align`` method, when it has one, also aligns columns and keys.
        rules: ``worldforge`` (the rules of this module) or ``widesearch`` (WideSearch's official
            scorer: :func:`worldforge.tasks.widesearch.score_widesearch`, which also sets ``score``).

    Returns:
        A :class:`Score` (figures in [0, 1], except that ``widesearch`` precision can pass 1 when keys
        collide); a malformed answer scores 0 and says why in ``notes``.

    Raises:
        TaskError: unknown ``rules``.
    """
    if check_rules(rules) == "widesearch":
        from worldforge.tasks.widesearch import score_widesearch

        return score_widesearch(answer_markdown, task, judge)
    score = Score()
    ev = task.evaluation
    required, keys, pipeline = task.required, task.unique_columns, ev["eval_pipeline"]
    unknown = sorted({n for item in pipeline.values() for n in item.get("preprocess", [])} - PREPROCESS.keys())
    if unknown:
        score.notes.append(f"unknown preprocess {unknown}: left as is")

    parsed = parse_markdown_table(answer_markdown or "")
    if parsed is None:
        score.notes.append("no Markdown table found in the answer")
        return score
    header, raw_rows = parsed
    cols = [norm_column(h) for h in header]
    missing = [c for c in required if c not in cols]
    if missing:
        score.notes.append(f"answer lacks required columns {missing} (has {cols})")
        return score
    extra = [h for h, c in zip(header, cols) if c not in required]
    if extra:
        score.notes.append(f"ignored columns that the task does not ask for: {extra}")
    ragged = sum(1 for r in raw_rows if len(r) != len(cols))
    if ragged:
        score.notes.append(f"{ragged} row(s) with {'a missing' if ragged == 1 else 'missing'} or extra cells (padded/truncated)")
    answer = [{c: (r[i] if i < len(r) else "") for i, c in enumerate(cols) if c in required} for r in raw_rows]
    empty = sum(1 for r in answer for c in required if not r[c].strip())
    if empty:
        score.notes.append(f"{empty} empty cell(s) in the answer")

    gold_clean = [{c: clean_cell(v) for c, v in r.items()} for r in task.gold]
    answer = [{c: clean_cell(v) for c, v in r.items()} for r in answer]
    gold_raw, answer_raw = _dedup(gold_clean, keys), _dedup(answer, keys)
    gold, answer = _preprocess(gold_raw, pipeline), _preprocess(answer_raw, pipeline)

    def key(row: dict[str, str]) -> tuple[str, ...]:
        return tuple(row.get(c, "") for c in keys)

    gold_keys, answer_keys = [key(r) for r in gold], [key(r) for r in answer]
    if len(set(gold_keys)) < len(gold_keys):  # preprocessing merged distinct keys ("第一章" -> "NULL")
        score.notes.append(f"preprocessing makes gold keys {keys} collide; rows matched on normalised raw keys instead")
        gold_keys = [tuple(norm_str(v) for v in key(r)) for r in gold_raw]
        answer_keys = [tuple(norm_str(v) for v in key(r)) for r in answer_raw]
    by_key = dict(zip(gold_keys, gold))
    matched = [(by_key[k], a) for k, a in zip(answer_keys, answer) if k in by_key]

    # one score column per (column, metric); keys score 1
    columns: list[list[float]] = []
    owners: list[str] = []  # the required column of each score column
    judged_fallback, unjudged = set(), 0
    for col in required:
        if col in keys:
            columns.append([1.0] * len(matched))
            owners.append(col)
            continue
        item = pipeline.get(col, {"metric": ["exact_match"]})
        for metric in item.get("metric", ["exact_match"]):
            targets = [g.get(col, "") for g, _ in matched]
            responses = [a[col] for _, a in matched]
            if metric == "llm_judge":
                if judge is not None:
                    verdicts = list(judge(responses, targets, item.get("criterion", "")))
                    unjudged += sum(v is None for v in verdicts)
                    vals = [float(v) if v is not None else (1.0 if norm_str(r) == norm_str(t) else 0.0)
                            for v, r, t in zip(verdicts, responses, targets)]
                else:
                    judged_fallback.add(col)
                    vals = [1.0 if norm_str(r) == norm_str(t) else 0.0 for r, t in zip(responses, targets)]
            elif metric in METRICS:
                vals = [METRICS[metric](r, t, item.get("criterion")) for r, t in zip(responses, targets)]
            else:
                score.notes.append(f"unknown metric {metric!r} on {col!r}: scored 0")
                vals = [0.0] * len(matched)
            columns.append(vals)
            owners.append(col)
    if judged_fallback:
        score.notes.append(f"no judge given: llm_judge columns {sorted(judged_fallback)} scored by normalised exact match")
    if unjudged:
        score.notes.append(f"the judge gave no verdict on {unjudged} llm_judge cell(s): scored by normalised exact match")

    tp_row = sum(min(c[i] for c in columns) for i in range(len(matched))) if columns else 0.0
    tp_item = sum(sum(c) for c in columns)
    n_pred, n_gold = len(answer), len(gold)
    score.precision_by_row = tp_row / n_pred if n_pred else 0.0
    score.recall_by_row = tp_row / n_gold if n_gold else 0.0
    score.precision_by_item = tp_item / (n_pred * len(required)) if n_pred else 0.0
    score.recall_by_item = tp_item / (n_gold * len(required)) if n_gold else 0.0
    score.f1_by_row = _f1(score.precision_by_row, score.recall_by_row)
    score.f1_by_item = _f1(score.precision_by_item, score.recall_by_item)
    for col in required:
        vals = [v for owner, c in zip(owners, columns) if owner == col for v in c]
        per_metric = len(vals) / len(matched) if matched else 1  # a column scored by several metrics counts each
        tp = sum(vals) / per_metric if per_metric else 0.0
        score.by_column[col] = _f1(tp / n_pred if n_pred else 0.0, tp / n_gold if n_gold else 0.0)
    if not n_pred:
        score.notes.append("the answer table has no rows")
    if n_pred and len(matched) < n_pred:
        score.notes.append(f"{n_pred - len(matched)} answer row(s) match no gold row on {keys}")
    return score


def score_answer(answer: str | Path, tasks: str | Path, instance_id: str, judge: Judge | None = None, rules: str = "worldforge") -> Score:
    """Score an answer file (one Markdown table) against one task of a WideSearch-format task file.

    Args:
        answer: the file holding the answer.
        tasks: ``tasks.jsonl`` (gold tables in ``tables/`` beside it).
        instance_id: the task's ``instance_id``.
        judge: scores ``llm_judge`` columns (see :func:`score_table`).
        rules: ``worldforge`` or ``widesearch`` (see :func:`score_table`).

    Raises:
        FileNotFoundError: no such answer file.
        TaskError: unknown ``rules``; the task file is malformed or has no such task (the message names a few that exist).
    """
    check_rules(rules)
    answer = Path(answer)
    if not answer.is_file():
        raise FileNotFoundError(f"{answer}: no such answer file")
    loaded = load_tasks(tasks)
    if instance_id not in loaded:
        some = ", ".join(list(loaded)[:5])
        raise TaskError(f"{tasks}: no task {instance_id!r} (e.g. {some})")
    return score_table(answer.read_text(encoding="utf-8"), loaded[instance_id], judge, rules)
