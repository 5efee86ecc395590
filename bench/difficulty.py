"""Benchmark: how hard the generated tasks are, per kind — the oracle against two naive baselines.

For every bundled world (and its scenarios): build the world, its corpus and its tasks, then
run, per task and through the simulated environment, the oracle agent (executes the task's
plan: item-F1 must be 1.0) and the two naive baselines of :mod:`worldforge.agents.baselines`
(one search with the question, answer from the snippets; the same search, then read the top 3
pages). Prints, per task kind: tasks, median gold rows x columns, hops (:func:`~worldforge.tasks.plans.plan_hops`),
the oracle's median number of tool calls, and the mean item-F1 of each agent, with the oracle's as the ceiling
(the baselines' ratio to it is the figure to watch: the real benchmarks' best agents reach item-F1 ≈ 0.3–0.5).
Hops and calls are a curriculum's axes: the task records carry both (``hops``, ``oracle_calls``).

Deep questions (:mod:`worldforge.tasks.deep`, one answer each) get the same three agents: the oracle answers in
BrowseComp's format (:func:`~worldforge.agents.oracle.answer_deep`), each baseline fills the question's one-cell
table (its item-F1 is then 1 for the right answer, else 0); per pattern: questions, hops, the oracle's median
tool calls and each agent's accuracy (BrowseComp's best agents reach about 0.5; a search engine alone, near 0).

Usage: python bench/difficulty.py [--specs world_specs] [--perturbed]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from worldforge.agents.baselines import BASELINES, run_baseline  # noqa: E402
from worldforge.agents.oracle import answer_deep, solve  # noqa: E402
from worldforge.corpus import build_corpus  # noqa: E402
from worldforge.simenv.env import SearchEnv  # noqa: E402
from worldforge.simenv.perturbations import DEFAULT_MIX  # noqa: E402
from worldforge.spec import discover_specs  # noqa: E402
from worldforge.tasks.deep import as_task  # noqa: E402
from worldforge.tasks.plans import plan_hops  # noqa: E402
from worldforge.tasks.store import build_tasks  # noqa: E402
from worldforge.warehouse import Warehouse  # noqa: E402
from worldforge.world import build_world_file  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--specs", default=str(ROOT / "world_specs"))
    ap.add_argument("--perturbed", action="store_true", help="run every agent under the default perturbation mix")
    args = ap.parse_args()
    scores: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    sizes: dict[str, list[tuple[int, int]]] = defaultdict(list)
    deep: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    deep_sizes: dict[str, int] = defaultdict(int)
    calls: dict[str, list[int]] = defaultdict(list)  # per wide kind / deep pattern: the oracle's tool calls
    hops: dict[str, list[int]] = defaultdict(list)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        wh = Warehouse(tmp)
        for name, path in sorted(discover_specs(args.specs).items()):
            built = build_world_file(path, wh)
            if built.path is None:
                raise SystemExit(f"{name}: the world breaks an invariant")
            world_file = built.path
            build_corpus(world_file)
            built_tasks = build_tasks(world_file)
            tasks = built_tasks.tasks
            for i, q in enumerate(built_tasks.deep):
                group = q.pattern
                deep_sizes[group] += 1
                hops[f"deep:{group}"].append(q.hops)

                def deep_env(seed: int) -> SearchEnv:
                    return SearchEnv(name, q.scenario, as_task(q), perturbations=DEFAULT_MIX if args.perturbed else None, seed=seed, warehouse=wh)

                run = answer_deep(deep_env(i), q)
                deep[group]["oracle"].append(float(run.grade.correct))
                calls[f"deep:{group}"].append(len(run.steps))
                plain = dataclasses.replace(as_task(q), question=q.question)  # the question without the answer format: the baselines' query
                for b in BASELINES:
                    deep[group][b].append(run_baseline(deep_env(i), plain, b).score.f1_by_item or 0.0)
            for i, task in enumerate(tasks):
                kind = task.extra["kind"]
                sizes[kind].append((len(task.gold), len(task.required)))

                def env(seed: int) -> SearchEnv:
                    return SearchEnv(name, task.extra["scenario"], task, perturbations=DEFAULT_MIX if args.perturbed else None,
                                     seed=seed, warehouse=wh)

                run = solve(env(i), task)
                scores[kind]["oracle"].append(run.score.f1_by_item)
                calls[kind].append(len(run.steps))
                hops[kind].append(plan_hops(task.extra["plan"]))
                for b in BASELINES:
                    scores[kind][b].append(run_baseline(env(i), task, b).score.f1_by_item)
            print(f"{name}: {len(tasks)} tasks", file=sys.stderr)
    elapsed = time.perf_counter() - started
    agents = ["oracle", *BASELINES]
    print(f"item-F1 per task kind, mean over tasks ({'perturbed' if args.perturbed else 'clean'} environment); {elapsed:.0f} s\n")
    print("| kind | tasks | median rows x cols | hops | oracle calls | " + " | ".join(agents) + " |")
    print("|---|---|---|---|---|" + "---|" * len(agents))
    total: dict[str, list[float]] = defaultdict(list)
    for kind in sorted(scores):
        rows = statistics.median(r for r, _ in sizes[kind])
        cols = statistics.median(c for _, c in sizes[kind])
        cells = []
        for a in agents:
            total[a] += scores[kind][a]
            cells.append(f"{statistics.mean(scores[kind][a]):.2f}")
        print(f"| {kind} | {len(sizes[kind])} | {rows:g} x {cols:g} | {_span(hops[kind])} | {statistics.median(calls[kind]):g} | "
              + " | ".join(cells) + " |")
    n = sum(len(v) for v in sizes.values())
    all_rows = statistics.median(r for v in sizes.values() for r, _ in v)
    all_cols = statistics.median(c for v in sizes.values() for _, c in v)
    every_calls = [c for k, v in calls.items() if not k.startswith("deep:") for c in v]
    every_hops = [h for k, v in hops.items() if not k.startswith("deep:") for h in v]
    print(f"| **all** | {n} | {all_rows:g} x {all_cols:g} | {_span(every_hops)} | {statistics.median(every_calls):g} | "
          + " | ".join(f"{statistics.mean(total[a]):.2f}" for a in agents) + " |")
    oracle = statistics.mean(total["oracle"])
    for b in BASELINES:
        print(f"\n{b}: item-F1 {statistics.mean(total[b]):.3f} = {statistics.mean(total[b]) / oracle:.2f} x the oracle's", end="")
    print()
    if deep_sizes:
        print("\ndeep questions: accuracy per pattern, mean over questions\n")
        print("| pattern | questions | hops | oracle calls | " + " | ".join(agents) + " |")
        print("|---|---|---|---|" + "---|" * len(agents))
        every: dict[str, list[float]] = defaultdict(list)
        for group in sorted(deep):
            for a in agents:
                every[a] += deep[group][a]
            print(f"| {group} | {deep_sizes[group]} | {_span(hops['deep:' + group])} | {statistics.median(calls['deep:' + group]):g} | "
                  + " | ".join(f"{statistics.mean(deep[group][a]):.2f}" for a in agents) + " |")
        deep_calls = [c for k, v in calls.items() if k.startswith("deep:") for c in v]
        deep_hops = [h for k, v in hops.items() if k.startswith("deep:") for h in v]
        print(f"| **all** | {sum(deep_sizes.values())} | {_span(deep_hops)} | {statistics.median(deep_calls):g} | "
              + " | ".join(f"{statistics.mean(every[a]):.2f}" for a in agents) + " |")


def _span(values: list[int]) -> str:
    """``2-5``, or ``3`` when every value is the same."""
    lo, hi = min(values), max(values)
    return f"{lo}" if lo == hi else f"{lo}-{hi}"


if __name__ == "__main__":
    main()
