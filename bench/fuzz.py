"""Benchmark: the fuzz suite (tests/fuzz/) with a longer budget than ``make test`` gives it.

Runs the same Hypothesis properties over spec YAML, expressions, trajectory files and HTTP
requests, in this process through pytest, with ``WORLDFORGE_FUZZ_EXAMPLES`` examples per
property of weight 1 (``make test``: 100) and the seed ``WORLDFORGE_FUZZ_SEED`` (a new seed
explores new inputs; the same seed repeats a run). Prints, per target, the properties, the
examples run, the failures and the time, and the budget as a multiple of ``make test``'s (the
baseline). Exits 1 when a property fails: pytest prints the smallest failing input and a
``@reproduce_failure`` blob above the table.

Usage: python bench/fuzz.py [--examples 1000] [--seed 19] [--target spec,expr,trajectories,http]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TARGETS = ("spec", "expr", "trajectories", "http")
CI_EXAMPLES = 100  # tests/fuzz/budget.py's default: what make test runs


class Recorder:
    """A pytest plugin: outcome and time of each property, by target (the test file's suffix)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.properties: dict[str, set[str]] = defaultdict(set)
        self.failed: dict[str, list[str]] = defaultdict(list)

    def pytest_runtest_logreport(self, report) -> None:
        """Add one phase (setup, call, teardown) of one test."""
        target = Path(report.fspath).stem.removeprefix("test_fuzz_")
        self.seconds[target] += report.duration
        self.properties[target].add(report.nodeid)
        if report.failed:
            self.failed[target].append(report.nodeid.split("::")[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--examples", type=int, default=1000, help="examples per property of weight 1 (make test: 100)")
    ap.add_argument("--seed", type=int, default=19)
    ap.add_argument("--target", default=",".join(TARGETS), help="comma-separated: " + ", ".join(TARGETS))
    ap.add_argument("--small", action="store_true", help="a check that the bench runs (seconds, make test), not the figures")
    args = ap.parse_args()
    if args.small:
        args.examples = 5
    targets = [t.strip() for t in args.target.split(",") if t.strip()]
    if unknown := set(targets) - set(TARGETS):
        sys.exit(f"unknown target(s) {sorted(unknown)}; choose from {', '.join(TARGETS)}")
    os.environ["WORLDFORGE_FUZZ_EXAMPLES"] = str(args.examples)  # read when tests.fuzz.budget is imported, below
    os.environ["WORLDFORGE_FUZZ_SEED"] = str(args.seed)

    import pytest

    recorder = Recorder()
    files = [str(ROOT / "tests" / "fuzz" / f"test_fuzz_{t}.py") for t in targets]
    start = time.perf_counter()
    code = pytest.main([*files, "-q", "--no-header", "-p", "no:cacheprovider", "--timeout=0"], plugins=[recorder])
    wall = time.perf_counter() - start
    from tests.fuzz.budget import COUNTS

    print(f"\nfuzz: {args.examples} examples per property of weight 1 ({args.examples / CI_EXAMPLES:g}x make test's {CI_EXAMPLES}), seed {args.seed}")
    print(f"{'target':<14}{'tests':>11}{'examples':>10}{'failures':>10}{'seconds':>9}{'examples/s':>12}")
    for t in targets:
        n, s = COUNTS[t], recorder.seconds[t]
        print(f"{t:<14}{len(recorder.properties[t]):>11}{n:>10,}{len(recorder.failed[t]):>10}{s:>9.1f}{n / s if s else 0:>12,.0f}"
              + (f"   FAILED: {', '.join(recorder.failed[t])}" if recorder.failed[t] else ""))
    total = sum(COUNTS[t] for t in targets)
    failures = sum(len(recorder.failed[t]) for t in targets)
    print(f"{'all':<14}{sum(len(recorder.properties[t]) for t in targets):>11}{total:>10,}{failures:>10}{wall:>9.1f}{total / wall:>12,.0f}")
    print("PASS" if code == 0 and not failures else "FAIL")
    sys.exit(0 if code == 0 and not failures else 1)


if __name__ == "__main__":
    main()
