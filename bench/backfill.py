"""Benchmark: a partitioned backfill of 1,000 world partitions, with its time and memory.

Defines, for this run, an asset partitioned by ``<spec>@<seed>`` (1,000 partitions over the
bundled specs) whose body is the same library call chain as ``world_tables`` (build, check,
write to DuckDB), and materializes every partition as its own run on one Dagster instance
(a backfill: one run per partition). Prints the wall time, runs/s, and the process's
resident memory after 100, 500 and 1,000 partitions, so memory that grew with the number of
partitions would show (target: bounded).

Usage: python bench/backfill.py [--partitions 1000]
"""

from __future__ import annotations

import argparse
import logging
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dagster import DagsterInstance, StaticPartitionsDefinition, asset, materialize  # noqa: E402

from worldforge.spec import load_spec  # noqa: E402
from worldforge.synth import build_world, check_world  # noqa: E402
from worldforge.warehouse import Warehouse, write_world  # noqa: E402


def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        return int(next(line for line in fh if line.startswith("VmRSS")).split()[1]) / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--partitions", type=int, default=1000)
    ap.add_argument("--small", action="store_true", help="a check that the bench runs (seconds, make test), not the figures")
    args = ap.parse_args()
    if args.small:
        args.partitions = 5
    logging.getLogger("dagster").setLevel(logging.WARNING)
    specs = {p.stem: load_spec(p) for p in sorted((ROOT / "world_specs").glob("*.yaml"))}
    names = sorted(specs)
    keys = [f"{names[i % len(names)]}@{i}" for i in range(args.partitions)]
    partitions = StaticPartitionsDefinition(keys)

    with tempfile.TemporaryDirectory() as tmp:
        @asset(partitions_def=partitions)
        def seeded_world(context) -> None:
            name, seed = context.partition_key.split("@")
            spec = specs[name]
            tables = build_world(spec, int(seed))
            assert not check_world(spec, tables)
            write_world(spec, tables, Warehouse(Path(tmp) / seed), int(seed))

        instance = DagsterInstance.ephemeral()
        marks = {}
        first = min(100, max(1, len(keys) // 5))  # the mark growth is measured from (partition 100 of a full run)
        t = time.perf_counter()
        for i, key in enumerate(keys, start=1):
            result = materialize([seeded_world], partition_key=key, instance=instance, raise_on_error=True,
                                 run_config={"loggers": {"console": {"config": {"log_level": "WARNING"}}}})
            assert result.success
            if i in (first, len(keys) // 2, len(keys)):
                marks[i] = rss_mb()
        wall = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"backfill: {len(keys)} partitions (one run each) in {wall:.1f} s = {len(keys) / wall:.1f} runs/s")
    print("resident memory after " + ", ".join(f"{n} partitions: {mb:.0f} MB" for n, mb in marks.items()) + f"; peak {peak:.0f} MB")
    growth = marks[len(keys)] - marks[first]
    print(f"growth from partition {first} to {len(keys)}: {growth:+.0f} MB   [target: bounded]")


if __name__ == "__main__":
    main()
