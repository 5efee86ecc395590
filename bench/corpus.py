"""Benchmark: corpus + index + tasks for 100 worlds, and search latency against raw tantivy.

For each world (3 bundled specs × varying seeds, with their scenarios): generate and store
the corpus (pages + provenance for the world and each scenario), build the tantivy
indexes, generate and check the tasks. Prints pages/s and the slowest world's corpus time
(target: a whole world's corpus in under 1 s).

Then, on one world's index, runs the same queries through ``worldforge.corpus.search``
(lenient parsing, BM25, stored-field fetch, lead snippet) and through raw tantivy
(parse + search + stored-field fetch, the floor), in the same run. Target: ``search()``
within 2x of the raw query time.

With ``--baseline REF`` (for example the commit before a change to the corpus), the same worlds' corpora are built
again, by this checkout and by the code at git ``REF`` (a temporary worktree), each in a fresh subprocess, the two
alternating for ``--rounds`` rounds (default 3); each world's time is its fastest of the rounds, and the ratio of the
two sums is printed with each round's own ratio. A single run of each side is not enough on a shared machine: the
same build varies by a third from one run to the next, and alternating rounds see the same load. The task build of
each world (wide tasks and deep questions, checked) is timed the same way, in the same subprocesses. Targets: the
derived-claims corpus <= 1.5x its baseline; the task build <= 1.5x its baseline (the commit before the nine deep
patterns and the wide tasks sized to the world: 7225124).

Usage: python bench/corpus.py [--worlds 100] [--queries 2000] [--baseline REF [--rounds 3]]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from worldforge.corpus import build_index, generate_corpus, open_index, read_corpus, search, write_corpus  # noqa: E402
from worldforge.scenarios import build_scenarios  # noqa: E402
from worldforge.spec import load_spec  # noqa: E402
from worldforge.synth import build_world  # noqa: E402
from worldforge.tasks.store import build_tasks  # noqa: E402
from worldforge.warehouse import Warehouse, write_world  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--worlds", type=int, default=100)
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--small", action="store_true", help="a check that the bench runs (seconds, make test), not the figures")
    ap.add_argument("--baseline", metavar="REF", help="also time the corpus build with the code at this git ref, in the same run")
    ap.add_argument("--rounds", type=int, default=3, help="with --baseline: alternating rounds of both builds (each world's fastest counts)")
    args = ap.parse_args()
    if args.small:
        args.worlds, args.queries = 2, 50
    specs = [load_spec(p) for p in sorted((ROOT / "world_specs").glob("*.yaml"))]

    with tempfile.TemporaryDirectory() as tmp:
        corpus_s, index_s, task_s, pages, tasks, unsolvable = [], [], [], 0, 0, 0
        names: list[str] = []
        warm = write_world(specs[0], build_world(specs[0], 0), Warehouse(Path(tmp) / "warm"), 0, {})
        write_corpus(warm, generate_corpus(warm))  # warm-up, untimed: imports, Faker instances, DuckDB start-up
        for i in range(args.worlds):
            spec = specs[i % len(specs)]
            wh = Warehouse(Path(tmp) / f"w{i}")
            tables = build_world(spec, i)
            path = write_world(spec, tables, wh, i, build_scenarios(spec, tables))
            t = time.perf_counter()
            report = write_corpus(path, generate_corpus(path))
            corpus_s.append(time.perf_counter() - t)
            names.append(f"{spec.world} seed {i} ({len(report.pages)} corpora)")
            pages += sum(report.pages.values())
            t = time.perf_counter()
            for scen in report.pages:
                build_index(path, scen)
            index_s.append(time.perf_counter() - t)
            t = time.perf_counter()
            built = build_tasks(path)
            task_s.append(time.perf_counter() - t)
            tasks += len(built.tasks)
            unsolvable += len(built.unsolvable)

        # queries: entity labels and attribute words from the last world's corpus
        world = spec.world
        _, facts = read_corpus(path)
        labels = facts.filter(facts["section"] == "lead")["value_text"].unique().sort().to_list()
        queries = [f"{labels[j % len(labels)]} {['price', 'date', 'rank', 'wins', 'population'][j % 5]}" for j in range(args.queries)]
        search(world, queries[0], 10, wh)  # open + warm
        index = open_index(path)
        searcher = index.searcher()

        def raw(q: str):
            parsed, _ = index.parse_query_lenient(q, ["title", "lead", "body"], field_boosts={"title": 2.0})
            return [(d["url"][0], d["title"][0], d["lead"][0]) for d in (searcher.doc(a) for _, a in searcher.search(parsed, 10).hits)]

        best_raw, best_wf = [], []
        for _ in range(3):
            t = time.perf_counter()
            for q in queries:
                raw(q)
            best_raw.append(time.perf_counter() - t)
            t = time.perf_counter()
            for q in queries:
                search(world, q, 10, wh)
            best_wf.append(time.perf_counter() - t)
        raw_s, wf_s = min(best_raw), min(best_wf)

    n = args.worlds
    print(f"corpus: {n} worlds (+ scenarios), {pages} pages in {sum(corpus_s):.1f} s = {pages / sum(corpus_s):,.0f} pages/s; "
          f"per world mean {statistics.mean(corpus_s) * 1000:.0f} ms, max {max(corpus_s) * 1000:.0f} ms "
          f"({names[corpus_s.index(max(corpus_s))]})   [target: < 1 s per world]")
    print(f"index: mean {statistics.mean(index_s) * 1000:.0f} ms per world; tasks: {tasks} generated and checked, "
          f"mean {statistics.mean(task_s) * 1000:.0f} ms per world, unsolvable {unsolvable}")
    print(f"queries ({args.queries}, k=10, best of 3): search() {args.queries / wf_s:,.0f} q/s ({wf_s / args.queries * 1e6:.0f} us/query), "
          f"raw tantivy {args.queries / raw_s:,.0f} q/s ({raw_s / args.queries * 1e6:.0f} us/query)")
    ratio = wf_s / raw_s
    print(f"ratio search()/raw: {ratio:.2f}x   [target: <= 2x]")
    slower = task_slower = None
    if args.baseline:
        both = compare_builds(args.baseline, args.worlds, args.rounds, "both")
        for what, (here, base, rounds) in both.items():
            x = sum(here) / sum(base)
            slower, task_slower = (x, task_slower) if what == "corpus" else (slower, x)
            print(f"{what} per world, fastest of {args.rounds} alternating rounds: {statistics.mean(here) * 1000:.0f} ms here, "
                  f"{statistics.mean(base) * 1000:.0f} ms at {args.baseline} (same worlds, this run): {x:.2f}x   [target: <= 1.5x]; "
                  f"each round: {', '.join(f'{r:.2f}x' for r in rounds)}")
    ok = ratio <= 2 and max(corpus_s) < 1 and unsolvable == 0 and all(x is None or x <= 1.5 for x in (slower, task_slower))
    print("PASS" if ok else "MISS")


_BASELINE = """
import json, sys, tempfile, time
from pathlib import Path
try:
    from worldforge.corpus import generate_corpus, write_corpus
    def build_corpus(path): write_corpus(path, generate_corpus(path))
except ImportError:  # a ref before the corpus steps' names: its build_corpus generated and wrote the pages, unchecked
    from worldforge.corpus import build_corpus
from worldforge.scenarios import build_scenarios
from worldforge.spec import load_spec
from worldforge.synth import build_world
from worldforge.tasks.store import build_tasks
from worldforge.warehouse import write_world
try:
    from worldforge.warehouse import Warehouse
except ImportError:  # a ref from before the Warehouse object: its write_world takes the folder
    Warehouse = Path
specs = [load_spec(p) for p in sorted(Path(sys.argv[1]).glob("*.yaml"))]
out, tasks = [], []
with tempfile.TemporaryDirectory() as tmp:
    warm = write_world(specs[0], build_world(specs[0], 0), Warehouse(Path(tmp) / "warm"), 0, {})
    build_corpus(warm)
    build_tasks(warm)
    for i in range(int(sys.argv[2])):
        spec = specs[i % len(specs)]
        tables = build_world(spec, i)
        path = write_world(spec, tables, Warehouse(Path(tmp) / f"w{i}"), i, build_scenarios(spec, tables))
        t = time.perf_counter()
        build_corpus(path)
        out.append(time.perf_counter() - t)
        t = time.perf_counter()
        build_tasks(path)
        tasks.append(time.perf_counter() - t)
print(json.dumps({"corpus": out, "tasks": tasks}))
"""


def _build_times(tree: Path, worlds: int) -> dict[str, list[float]]:
    """``{"corpus": [...], "tasks": [...]}``: per-world corpus and task build seconds of the bundled specs (seeds
    0..worlds-1, as :func:`main` builds them) by the code in ``tree``, in a fresh subprocess."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-c", _BASELINE, str(ROOT / "world_specs"), str(worlds)], env=env, cwd=tree,
                          check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def compare_builds(ref: str, worlds: int, rounds: int, what: str = "corpus") -> tuple[list[float], list[float], list[float]]:
    """``(this checkout's, ref's, each round's ratio)``: per-world build seconds of ``what`` (``corpus`` or ``tasks``),
    each world's fastest of ``rounds`` alternating rounds (this checkout first in odd rounds, ``ref`` first in even
    ones), ``ref`` checked out in a temporary ``git worktree`` removed afterwards. With ``what="both"``: a dict of the
    two triples, from the same rounds."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "baseline"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(tree), ref], check=True)
        try:
            runs: dict[Path, list[dict[str, list[float]]]] = {ROOT: [], tree: []}
            for r in range(max(1, rounds)):
                for side in ((ROOT, tree) if r % 2 == 0 else (tree, ROOT)):
                    runs[side].append(_build_times(side, worlds))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)

    def triple(key: str) -> tuple[list[float], list[float], list[float]]:
        here = [min(run[key][i] for run in runs[ROOT]) for i in range(worlds)]
        base = [min(run[key][i] for run in runs[tree]) for i in range(worlds)]
        return here, base, [sum(a[key]) / sum(b[key]) for a, b in zip(runs[ROOT], runs[tree])]

    return {"corpus": triple("corpus"), "tasks": triple("tasks")} if what == "both" else triple(what)


if __name__ == "__main__":
    main()
