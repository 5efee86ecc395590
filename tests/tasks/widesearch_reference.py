"""Answers perturbed from the real DeepWideSearch gold tables, and WideSearch's own scorer run on them.

Shared by ``tests/tasks/test_widesearch_rules.py`` and ``bench/widesearch_rules.py``. The official
scorer (ByteDance-Seed/WideSearch, ``src/evaluation/evaluation.py``) runs in a subprocess under the
interpreter of a WideSearch checkout (:func:`official_checkout`) through ``widesearch_official.py``
beside this file, its language model replaced by a stub that does what worldforge's default judge
does (no alignment; normalised exact match for ``llm_judge`` columns).

Set ``WORLDFORGE_WIDESEARCH`` to the checkout's root (the folder holding ``src/evaluation/``); its
interpreter is ``WORLDFORGE_WIDESEARCH_PYTHON``, else the checkout's ``.venv/bin/python`` (what its
``prepare-env.sh`` builds), else this one. It needs pandas 2 (the checkout pins 2.3.1: pandas 3 reads
missing cells differently), dateparser and loguru.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.conftest import SHARED_DATA
from worldforge.tasks import Task, render_markdown_table
from worldforge.tasks.metrics import parse_date
from worldforge.tasks.scorer import Score

ENV, PYTHON_ENV = "WORLDFORGE_WIDESEARCH", "WORLDFORGE_WIDESEARCH_PYTHON"
TASKS_FILE = SHARED_DATA / "widesearch_tasks" / "deepwidesearch" / "tasks.jsonl"
FIGURES = ("score", "precision_by_row", "recall_by_row", "f1_by_row", "precision_by_item", "recall_by_item", "f1_by_item")
RUNNER = Path(__file__).with_name("widesearch_official.py")
PERTURBATIONS = ("gold", "gold-bare", "rows-shuffled", "columns-shuffled", "header-recased", "rows-dropped", "rows-added",
                 "keys-recased", "numbers-reformatted", "numbers-moved", "dates-reformatted", "cells-wrong", "cells-empty",
                 "extra-column", "missing-column", "cells-quoted", "cell-with-pipe", "dash-row", "mixed")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_PROBE = "import sys, pandas, dateparser, loguru; print(pandas.__version__)"


def official_checkout() -> tuple[Path, str] | str:
    """``(checkout root, its interpreter)``, or why the official scorer cannot run (a sentence)."""
    root = os.environ.get(ENV)
    if not root:
        return (f"set {ENV} to a checkout of ByteDance-Seed/WideSearch (the folder holding src/evaluation/; "
                "commit 0e664c3) to compare with WideSearch's own scorer")
    path = Path(root).expanduser().resolve()
    if not (path / "src" / "evaluation" / "evaluation.py").is_file():
        return f"{ENV}={root}: no src/evaluation/evaluation.py there (it must name the root of a WideSearch checkout)"
    venv = path / ".venv" / "bin" / "python"
    python = os.environ.get(PYTHON_ENV) or (str(venv) if venv.is_file() else sys.executable)
    probe = subprocess.run([python, "-c", _PROBE], capture_output=True, text=True, timeout=120)
    if probe.returncode != 0:
        return f"{python} cannot import pandas, dateparser and loguru (set {PYTHON_ENV} to an interpreter that can): {probe.stderr.strip()[-300:]}"
    if not probe.stdout.strip().startswith("2."):
        return f"{python} has pandas {probe.stdout.strip()}: WideSearch pins pandas 2.3.1 (set {PYTHON_ENV} to an interpreter with pandas 2)"
    return path, python


def run_official(checkout: Path, python: str, tasks: dict[str, Task], answers: list[tuple[str, str, str]],
                 tasks_file: Path = TASKS_FILE) -> dict[str, dict]:
    """WideSearch's figures for each ``(key, instance_id, answer)``: ``{key: {figure: value, "msg": ...}}``.

    Raises:
        RuntimeError: the runner failed (its stderr's tail).
    """
    job = {"tasks": {iid: {"evaluation": t.raw_evaluation or t.evaluation, "gold": str(tasks_file.parent / "tables" / f"{iid}.csv")}
                     for iid, t in tasks.items() if any(a[1] == iid for a in answers)},
           "answers": [{"key": k, "instance_id": iid, "response": text} for k, iid, text in answers]}
    with tempfile.TemporaryFile("w+", encoding="utf-8") as fh:
        json.dump(job, fh, ensure_ascii=False)
        fh.seek(0)
        proc = subprocess.run([python, str(RUNNER), str(checkout)], stdin=fh, capture_output=True, text=True, cwd=checkout, timeout=3600)
    if proc.returncode != 0:
        raise RuntimeError(f"the official scorer failed (exit {proc.returncode}): {proc.stderr[-3000:]}")
    out = {}
    for line in proc.stdout.splitlines():
        row = json.loads(line)
        out[row.pop("key")] = row
    return out


def differing(ours: Score, theirs: dict, tolerance: float = 0.005, figures: tuple[str, ...] = FIGURES) -> list[str]:
    """The ``figures`` on which ``ours`` and WideSearch's differ by more than ``tolerance``."""
    return [f for f in figures if abs(getattr(ours, f) - theirs[f]) > tolerance]


_DATES = """import json, sys, dateparser
out = {}
for text in json.load(sys.stdin):
    try:
        d = dateparser.parse(text, settings={"PREFER_DAY_OF_MONTH": "first"})
        out[text] = d.strftime("%Y-%m-%d") if d else None
    except Exception as exc:
        out[text] = type(exc).__name__
print(json.dumps(out))
"""


def date_cells(task: Task, answer: str) -> set[str]:
    """The cells that go through ``dateparser`` when ``answer`` is scored by WideSearch's rules: those of
    ``norm_date`` and ``date_near`` columns, in the answer and in the gold table, as pandas reads them."""
    from worldforge.tasks.widesearch import OfficialError, as_strings, extract_table

    pipeline = task.evaluation["eval_pipeline"]
    cols = [c for c, item in pipeline.items() if "norm_date" in item.get("preprocess", []) or "date_near" in item.get("metric", [])]
    try:
        parsed = extract_table(answer)
    except OfficialError:
        parsed = None
    cells = {v for c in cols for v in (parsed[1].get(c, []) if parsed else [])}
    return cells | {v for c in cols if all(c in r for r in task.gold) for v in as_strings([r[c] for r in task.gold])}


def dateparser_differs(python: str, cells: set[str]) -> set[str]:
    """The cells that WideSearch's interpreter's ``dateparser`` reads as another day than worldforge's does
    (WideSearch's lock pins dateparser 1.2.1; a few strings parse differently across versions)."""
    from worldforge.tasks.widesearch import _date

    proc = subprocess.run([python, "-c", _DATES], input=json.dumps(sorted(cells)), capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise RuntimeError(f"dateparser under {python} failed: {proc.stderr[-2000:]}")
    theirs = json.loads(proc.stdout)
    ours = {}
    for text in cells:
        parsed, error = _date(text)
        ours[text] = error.split(":")[0] if error else parsed.strftime("%Y-%m-%d") if parsed else None
    return {t for t in cells if ours[t] != theirs[t]}


# --- perturbations -------------------------------------------------------------------------------------


def _columns(task: Task, kind: str) -> list[str]:
    pipeline = task.evaluation["eval_pipeline"]
    return [c for c in task.required if c not in task.unique_columns and kind in pipeline.get(c, {}).get(
        "preprocess" if kind in ("extract_number", "norm_date") else "metric", [])]


def _reformat_number(text: str, rng: random.Random) -> str:
    m = _NUMBER.search(text)
    if not m:
        return text
    value = m.group()
    style = rng.randrange(5)
    if style == 0 and "." not in value and len(value) > 3:
        new = f"{int(value):,}"
    elif style == 1:
        new = f"{float(value):.1f}"
    elif style == 2:
        new = f"约{value}"
    elif style == 3:
        new = f"{value} units"
    else:
        new = f"{float(value) * 1.004:g}"  # off by 0.4%
    return text[:m.start()] + new + text[m.end():]


def _reformat_date(text: str, rng: random.Random) -> str:
    parsed = parse_date(text) if text.strip() else None
    if parsed is None:
        return text
    return parsed.strftime(rng.choice(["%B %d, %Y", "%d/%m/%Y", "%Y年%m月%d日", "%Y/%m/%d", "%Y-%m", "%d %b %Y", "%Y"]))


def _render(columns: list[str], rows: list[dict[str, str]], wrap: str) -> str:
    table = render_markdown_table(columns, rows)
    if wrap == "bare":
        return f"Here is the table you asked for.\n\n{table}\n\nSources: my searches."
    return f"```markdown\n{table}\n```"


def perturbed(task: Task, label: str) -> str:
    """The answer ``label`` (one of :data:`PERTURBATIONS`) made from ``task``'s gold table; the same every run."""
    rng = random.Random(f"{task.instance_id}:{label}")
    cols, keys = list(task.required), task.unique_columns
    rows = [dict(r) for r in task.gold]
    non_key = [c for c in cols if c not in keys] or cols
    wrap = "bare" if label in ("gold-bare", "rows-dropped", "cells-empty") else "fence"
    some = lambda share: rng.sample(range(len(rows)), max(1, round(len(rows) * share))) if rows else []  # noqa: E731

    def step(kind: str) -> None:
        nonlocal cols, rows
        if kind == "rows-shuffled":
            rng.shuffle(rows)
        elif kind == "columns-shuffled":
            rng.shuffle(cols)
        elif kind == "header-recased":
            renamed = {c: (c.upper() if i % 2 else " ".join(c)) for i, c in enumerate(cols)}
            rows = [{renamed[c]: r[c] for c in cols} for r in rows]
            cols = [renamed[c] for c in cols]
        elif kind == "rows-dropped":
            dropped = set(some(0.25))
            rows = [r for i, r in enumerate(rows) if i not in dropped]
        elif kind == "rows-added":
            extra = [dict(rows[i]) for i in some(0.15)]
            for r in extra:
                r[keys[0]] = r[keys[0]] + " (II)"
            duplicate = dict(rows[rng.randrange(len(rows))]) if rows else {}
            same_key = {**duplicate, **{c: "something else" for c in non_key}} if duplicate else {}
            rows = rows + extra + ([duplicate, same_key] if duplicate else [])
        elif kind == "keys-recased":
            for i in some(0.5):
                for k in keys:
                    rows[i][k] = rng.choice([str.upper, str.lower, str.title, lambda s: f"**{s}**", lambda s: f" {s}  "])(rows[i][k])
        elif kind == "numbers-reformatted":
            for c in _columns(task, "extract_number") or non_key[:1]:
                for i in some(0.6):
                    rows[i][c] = _reformat_number(rows[i][c], rng)
        elif kind == "numbers-moved":
            for c in _columns(task, "extract_number") or non_key[:1]:
                picked = some(0.4)
                values = [rows[i][c] for i in picked]
                rng.shuffle(values)
                for i, v in zip(picked, values):
                    rows[i][c] = v
        elif kind == "dates-reformatted":
            for c in _columns(task, "norm_date") or non_key[:1]:
                for i in some(0.7):
                    rows[i][c] = _reformat_date(rows[i][c], rng)
        elif kind == "cells-wrong":
            for i in some(0.3):
                c = rng.choice(non_key)
                rows[i][c] = rng.choice(["unknown", rows[rng.randrange(len(rows))][c], rows[i][c] + "x", "0"])
        elif kind == "cells-empty":
            for i in some(0.3):
                rows[i][rng.choice(non_key)] = rng.choice(["", "N/A", "-", "None", "—"])
        elif kind == "extra-column":
            cols = cols + ["source"]
            rows = [{**r, "source": "web"} for r in rows]
        elif kind == "missing-column":
            cols = [c for c in cols if c != non_key[-1]]
        elif kind == "cells-quoted":  # pandas reads "x" as x
            for i in some(0.3):
                c = rng.choice(cols)
                rows[i][c] = f'"{rows[i][c]}"'
        elif kind == "cell-with-pipe":  # the renderer escapes it as \|, which WideSearch splits
            i = rng.randrange(len(rows)) if rows else 0
            if rows:
                rows[i][non_key[0]] = rows[i][non_key[0]] + " | more"
        elif kind == "dash-row":  # a row of "-" cells reads as a separator line
            rows.insert(rng.randrange(len(rows) + 1), {c: "-" for c in cols})

    if label == "mixed":
        for kind in ("rows-dropped", "rows-added", "cells-wrong", "keys-recased", "rows-shuffled"):
            step(kind)
    elif label not in ("gold", "gold-bare"):
        step(label)
    return _render(cols, rows, wrap)


def answers(tasks: dict[str, Task], labels: tuple[str, ...] | None = None, per_task: int | None = None) -> list[tuple[str, str, str]]:
    """``(key, instance_id, answer)`` for every task and perturbation (``labels``, default all); with ``per_task``,
    the gold answer plus ``per_task - 1`` perturbations, rotating through the labels from task to task."""
    labels = labels or PERTURBATIONS
    out = []
    for n, (iid, task) in enumerate(sorted(tasks.items())):
        chosen = labels if per_task is None else ("gold", *[labels[1 + (n * (per_task - 1) + j) % (len(labels) - 1)] for j in range(per_task - 1)])
        out += [(f"{iid}|{label}", iid, perturbed(task, label)) for label in chosen]
    return out
