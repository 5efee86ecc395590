"""Benchmark: how often ``--rules widesearch`` gives WideSearch's own numbers, against the default rules.

Perturbs every real DeepWideSearch gold table (85 tasks in ``../shared/data/widesearch_tasks``) into 19
answers (the gold table itself, fenced and bare; rows shuffled, dropped, added; columns shuffled,
renamed, extra, missing; keys recased; numbers and dates reformatted or moved; cells wrong, empty,
quoted, holding a ``|``; a row of ``-``; a mix), scores each with WideSearch's own scorer
(ByteDance-Seed/WideSearch at 0e664c3, run offline with its model stubbed by worldforge's default judge:
``tests/tasks/widesearch_official.py``) and with worldforge's two rule sets, and prints the share of
answers where each rule set agrees with it within 0.005 on every figure, in total, per perturbation and
where WideSearch's code does not raise: ``widesearch`` on all seven figures (``score``, the success
rate, and row and item precision, recall, F1), the default rules (the baseline, which has no
``score``) on the six others. Then the disagreements of ``widesearch``, saying which hold a date that
WideSearch's dateparser (its lock pins 1.2.1) reads as another day than worldforge's. Target:
``widesearch`` agrees on at least 99% of answers (exit 1 with a MISS line below it).

Needs ``WORLDFORGE_WIDESEARCH`` set to a WideSearch checkout whose interpreter has pandas 2 (see
``tests/tasks/widesearch_reference.py``); without it, says so and exits 2.

Usage: python bench/widesearch_rules.py [--small] [--tolerance 0.005] [--show 10]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.tasks.widesearch_reference import (  # noqa: E402
    FIGURES,
    PERTURBATIONS,
    TASKS_FILE,
    answers,
    date_cells,
    dateparser_differs,
    differing,
    official_checkout,
    run_official,
)
from worldforge.tasks import load_tasks, score_table  # noqa: E402

TARGET = 0.99


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--small", action="store_true", help="3 answers a task (the gold table and 2 perturbations) instead of all 19")
    ap.add_argument("--tolerance", type=float, default=0.005, help="largest difference on a figure that still agrees")
    ap.add_argument("--show", type=int, default=10, help="disagreements of the widesearch rules to print")
    args = ap.parse_args()
    found = official_checkout()
    if isinstance(found, str):
        print(f"cannot run: {found}")
        return 2
    checkout, python = found
    tasks = load_tasks(TASKS_FILE)
    todo = answers(tasks, per_task=3 if args.small else None)
    started = time.perf_counter()
    theirs = run_official(checkout, python, tasks, todo)
    official_s = time.perf_counter() - started
    cells = {key: date_cells(tasks[iid], text) for key, iid, text in todo}
    drift = dateparser_differs(python, set().union(*cells.values()))
    records = []  # (perturbation, WideSearch's scorer raised, agrees under widesearch, agrees under worldforge)
    shown, explained = [], 0
    started = time.perf_counter()
    for key, iid, text in todo:
        off = {rules: differing(score_table(text, tasks[iid], rules=rules), theirs[key], args.tolerance,
                                FIGURES if rules == "widesearch" else FIGURES[1:]) for rules in ("widesearch", "worldforge")}
        records.append((key.split("|", 1)[1], theirs[key]["msg"].startswith("evaluator error"), not off["widesearch"], not off["worldforge"]))
        if off["widesearch"]:
            explained += bool(cells[key] & drift)
            if len(shown) < args.show:
                why = f"dates read differently: {sorted(cells[key] & drift)[:3]}" if cells[key] & drift else theirs[key]["msg"][:160].replace("\n", " ")
                shown.append((key, off["widesearch"], why))
    ours_s = time.perf_counter() - started

    def row(name: str, picked: list[tuple[str, bool, bool, bool]]) -> str:
        n = len(picked)
        return f"{name:<22}{n:>8}{sum(r[2] for r in picked) / n:>12.1%}{sum(r[3] for r in picked) / n:>12.1%}"

    raised = sum(r[1] for r in records)
    print(f"{len(todo)} answers from {len(tasks)} gold tables; agreeing within {args.tolerance} on {', '.join(FIGURES)} "
          "(the default rules: all but score)")
    print(f"official scorer {official_s:.0f} s, worldforge (both rule sets) {ours_s:.1f} s ({python}); "
          f"the official scorer raised (and scored 0) on {raised} answers\n")
    print(f"{'perturbation':<22}{'answers':>8}{'widesearch':>12}{'worldforge':>12}")
    for label in PERTURBATIONS:
        picked = [r for r in records if r[0] == label]
        if picked:
            print(row(label, picked))
    print(row("all", records))
    if raised < len(records):
        print(row("where it did not raise", [r for r in records if not r[1]]))
    print(f"\nwidesearch disagrees on {sum(not r[2] for r in records)} answers, {explained} of them holding a date cell that "
          f"WideSearch's dateparser reads as another day than worldforge's ({len(drift)} of {len(set().union(*cells.values()))} date cells)")
    for key, off, msg in shown:
        print(f"  differs: {key} on {off}: {msg}")
    agreed = sum(r[2] for r in records) / len(records)
    if agreed < TARGET:
        print(f"MISS: --rules widesearch agrees on {agreed:.1%} of answers (target {TARGET:.0%})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
