"""Benchmark: fuzzed world specs built end to end, as ``worldforge world run SPEC`` builds them.

Draws N valid specs over the whole spec language (tests/fuzz/specs.py: every column kind, 2–7 tables, roles, junctions,
hierarchies, optional references, scenarios, labels with and without units, no hints; 300–500 rows each), each from a
seed of its own derived from ``--seed`` (:func:`~tests.fuzz.specs.draw_specs`), so a run repeats, and builds each one: every step of :func:`worldforge.pipeline.run_world`, then its world and corpus again in
another warehouse to compare the corpus hash. A spec is *built* when no step raises or fails a check, no fact is
contradicted, the oracle solves every task and deep question at item-F1 1.0, no page, task or answer writes a float with
its noise, and both builds record the same ``corpus_hash``. Prints the specs, the built ones, the failures by step and
class (with the first spec of each class written to ``--out``), the contradictions, the oracle's lowest F1, the seconds
per spec and the ratio built/specs. Exits 1 when a spec failed.

Usage: python bench/specs_fuzz.py [--n 300] [--seed 19] [--minutes 15] [--no-optional] [--no-hierarchies] [--out DIR]
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def failure_class(why: str) -> str:
    """A failure's class: its step and message with names, numbers and quoted values taken out; a contradicted fact's
    class is its problem, an oracle's the kinds of the tasks it missed."""
    if "no_contradicted_fact" in why and (problem := re.search(r"'problem': '([^']*)'", why)):
        return f"search_corpus: no_contradicted_fact: {problem.group(1)}"
    if "oracle_solves_every_task" in why:
        kinds = sorted(set(re.findall(r"'[a-z0-9_]+?_\d{4}_([a-z_]+?)_\d+'", why.split("perturbed")[0])))
        return f"oracle_episodes: oracle_solves_every_task: F1 below 1 on {', '.join(kinds) or '?'} tasks"
    why = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", why)
    why = re.sub(r"\d+(\.\d+)?", "N", why)
    return why[:110]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=300, help="specs to draw and build")
    ap.add_argument("--seed", type=int, default=19, help="the draws' seed (spec i is drawn from its own seed derived from it)")
    ap.add_argument("--minutes", type=float, default=0, help="stop drawing after this many minutes (0: no limit)")
    ap.add_argument("--no-optional", action="store_true", help="no optional references (null_share)")
    ap.add_argument("--no-hierarchies", action="store_true", help="no self-references")
    ap.add_argument("--once", action="store_true", help="build each spec once (no corpus-hash comparison): faster")
    ap.add_argument("--out", type=Path, default=None, help="write the first failing spec of each class here (YAML)")
    ap.add_argument("--small", action="store_true", help="a check that the bench runs (seconds, make test), not the figures")
    args = ap.parse_args()
    if args.small:
        args.n, args.no_optional, args.no_hierarchies = 2, True, True

    import yaml

    from tests.fuzz.specs import build_end_to_end, draw_specs

    built: list = []
    names: list[str] = []
    classes: dict[str, list[str]] = defaultdict(list)
    by_step: Counter[str] = Counter()
    start = time.perf_counter()
    deadline = start + args.minutes * 60 if args.minutes else None
    work = Path(tempfile.mkdtemp(prefix="specs_fuzz_"))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)

    for doc in draw_specs(args.n, args.seed, optional=not args.no_optional, hierarchies=not args.no_hierarchies):
        if deadline is not None and time.perf_counter() > deadline:
            break
        i = len(built)
        got = build_end_to_end(doc, work / f"{i:04d}", twice=not args.once)
        built.append(got)
        names.append(doc["world"])
        if not got.ok:
            why = got.why()
            step = why.split(":", 1)[0]
            by_step[step] += 1
            cls = failure_class(why)
            if not classes[cls] and args.out:
                (args.out / f"{len(classes):02d}_{step}.yaml").write_text(
                    f"# {why[:300]}\n" + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
            classes[cls].append(doc["world"])
        print(f"  {i + 1} {doc['world']} {len(doc['tables'])} tables {got.seconds:.1f} s {'built' if got.ok else got.why()[:150]}", flush=True)
        shutil.rmtree(work / f"{i:04d}", ignore_errors=True)
    wall = time.perf_counter() - start
    n = len(built)
    ok = sum(b.ok for b in built)
    contradicted = [b.contradictions for b in built if b.contradictions]
    f1s = [b.oracle_f1_min for b in built if b.oracle_f1_min is not None]
    print(f"\nspecs_fuzz: {n} specs ({len(set(names))} distinct world names) drawn with seed {args.seed} (optional references {'off' if args.no_optional else 'on'}, "
          f"hierarchies {'off' if args.no_hierarchies else 'on'}{', once' if args.once else ', built twice'})")
    print(f"built: {ok} of {n}; failed: {n - ok}")
    print("failed by step: " + (", ".join(f"{s} {c}" for s, c in by_step.most_common()) or "none"))
    for cls, worlds in sorted(classes.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(worlds):>4}  {cls}   (e.g. {worlds[0]})")
    print(f"contradictions: {sum(contradicted)} in {len(contradicted)} specs")
    print(f"oracle min F1: {min(f1s):.3f} over {len(f1s)} specs that reached the oracle" if f1s else "oracle min F1: no spec reached the oracle")
    print(f"seconds per spec: {wall / max(n, 1):.1f} (wall {wall:.0f} s)")
    print(f"ratio built/specs: {ok / max(n, 1):.2f}")
    sys.exit(0 if ok == n else 1)


if __name__ == "__main__":
    main()
