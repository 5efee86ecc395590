"""Benchmark: build, validate and write 1,000 worlds from the bundled specs.

worldforge path, per world: ``build_world`` (seeded, columnar) → ``check_world`` (every
invariant) → ``write_world`` (DuckDB file with PRIMARY/FOREIGN KEY constraints, atomic).
The whole run is spread over ``--workers`` processes (2 = this machine's cores).

Baseline, measured in the same run: what a user would write instead — a per-row loop that
asks Faker (and ``random``) for every value, appends dicts, and inserts them into DuckDB
row by row (same tables, same row counts, no invariants checked, derived columns filled
with placeholders, so the baseline does *less* work than worldforge).

The speed ratio compares one process with one process. Targets (issue 2): all 1,000
worlds in under 60 s on 2 cores, and at least 5x the baseline.

Usage: python bench/worlds.py [--worlds 1000] [--workers 2] [--baseline-worlds 30]
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from functools import lru_cache
from pathlib import Path

import duckdb
from faker import Faker

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from worldforge.spec import load_spec, validate_spec  # noqa: E402
from worldforge.spec import models as M  # noqa: E402
from worldforge.spec.dates import resolve_date  # noqa: E402
from worldforge.synth import build_world, check_world  # noqa: E402
from worldforge.warehouse import Warehouse, write_world  # noqa: E402

SPECS = sorted((ROOT / "world_specs").glob("*.yaml"))


@lru_cache(maxsize=None)
def _spec(path: str):
    return load_spec(path)


def worldforge_world(job: tuple[str, int, str]) -> tuple[float, float, float, int]:
    """Build, check and write one world; returns (build s, check s, write s, violations)."""
    path, seed, warehouse = job
    spec = _spec(path)
    t0 = time.perf_counter()
    tables = build_world(spec, seed)
    t1 = time.perf_counter()
    violations = check_world(spec, tables)
    t2 = time.perf_counter()
    write_world(spec, tables, Warehouse(warehouse), seed)
    t3 = time.perf_counter()
    return t1 - t0, t2 - t1, t3 - t2, len(violations)


def baseline_world(spec: M.WorldSpec, seed: int, out: Path) -> int:
    """The naive way: Faker per value, dicts per row, one INSERT per row. Returns rows."""
    fake = Faker()
    fake.seed_instance(seed)
    rnd = random.Random(seed)
    con = duckdb.connect(str(out))
    keys: dict[str, list] = {}
    total = 0
    for tname in validate_spec(spec).table_order:
        table = spec.tables[tname]
        driving = table.driving_reference
        if driving is None:
            parents = [None] * (table.rows or 0)
        else:
            ref = driving[1]
            parents = [k for k in keys[ref.parent] for _ in range(rnd.randint(ref.cardinality.min, ref.cardinality.max))]
        rows = []
        for i, parent in enumerate(parents):
            row = {}
            for cname, col in table.columns.items():
                if isinstance(col, M.SequenceColumn):
                    v = col.start + i * col.step
                elif isinstance(col, M.FakerColumn):
                    v = str(fake.parse(col.template) if col.template else getattr(fake, col.provider)(**col.args))
                elif isinstance(col, M.ChoiceColumn):
                    v = str(fake.random_element(col.values))
                elif isinstance(col, M.NumberColumn):
                    v = fake.pyfloat(min_value=col.min, max_value=col.max) if col.min < col.max else col.min
                elif isinstance(col, M.DateColumn):
                    v = str(fake.date_between_dates(resolve_date(col.start, spec.target_year), resolve_date(col.end, spec.target_year)))
                elif isinstance(col, M.ReferenceColumn):
                    v = parent if driving and cname == driving[0] else rnd.choice(keys[col.parent])
                elif isinstance(col, M.FormatColumn):
                    v = f"{tname[:3].upper()}-{i:04d}"
                else:  # derive / rank / share / aggregate: a placeholder, no consistency
                    v = str(rnd.random())
                row[cname] = v
            rows.append(row)
        cols = list(table.columns)
        con.execute(f"CREATE TABLE {tname} (" + ", ".join(f"{c} VARCHAR" for c in cols) + ")")
        placeholders = ", ".join("?" for _ in cols)
        for row in rows:
            con.execute(f"INSERT INTO {tname} VALUES ({placeholders})", [None if row[c] is None else str(row[c]) for c in cols])
        keys[tname] = [r[table.primary_key] for r in rows]
        total += len(rows)
    con.close()
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--worlds", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--baseline-worlds", type=int, default=30)
    ap.add_argument("--serial-worlds", type=int, default=90, help="worlds timed in one process for the ratio")
    ap.add_argument("--small", action="store_true", help="a check that the bench runs (seconds, make test), not the figures")
    args = ap.parse_args()
    if args.small:
        args.worlds, args.workers, args.baseline_worlds, args.serial_worlds = 4, 2, 2, 2

    with tempfile.TemporaryDirectory() as tmp:
        tmpd = Path(tmp)
        for p in SPECS:  # warm: spec validation, Faker instances, DuckDB
            worldforge_world((str(p), 0, str(tmpd / "warm")))

        # 1) the whole run, spread over worker processes
        jobs = [(str(SPECS[i % len(SPECS)]), i // len(SPECS), str(tmpd / f"w{i % args.workers}")) for i in range(args.worlds)]
        t = time.perf_counter()
        # spawn, not fork: polars' and DuckDB's thread pools do not survive a fork
        with ProcessPoolExecutor(args.workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            results = list(pool.map(worldforge_world, jobs, chunksize=8))
        wall = time.perf_counter() - t
        bad = sum(r[3] for r in results)

        # 2) one process, for the ratio and the per-step breakdown
        serial_jobs = [(str(SPECS[i % len(SPECS)]), 10_000 + i, str(tmpd / "serial")) for i in range(args.serial_worlds)]
        t = time.perf_counter()
        serial = [worldforge_world(j) for j in serial_jobs]
        wf_rate = len(serial) / (time.perf_counter() - t)

        # 3) the baseline, one process
        specs = [_spec(str(p)) for p in SPECS]
        t = time.perf_counter()
        base_rows = 0
        for i in range(args.baseline_worlds):
            base_rows += baseline_world(specs[i % len(specs)], i, tmpd / f"baseline{i}.duckdb")
        base_rate = args.baseline_worlds / (time.perf_counter() - t)

    ms = lambda k: 1000 * statistics.mean(r[k] for r in serial)  # noqa: E731
    ratio = wf_rate / base_rate
    print(f"worldforge: {args.worlds} worlds ({len(SPECS)} specs, varying seeds) built, checked and written in {wall:.1f} s "
          f"on {args.workers} workers = {args.worlds / wall:.1f} worlds/s; violations: {bad}   [target: < 60 s]")
    print(f"  one process: {wf_rate:.1f} worlds/s (build {ms(0):.1f} ms + check {ms(1):.1f} ms + DuckDB write {ms(2):.1f} ms per world)")
    print(f"baseline (per-row Faker loop, dicts, row-by-row DuckDB INSERT; no checks), one process, "
          f"{args.baseline_worlds} worlds ({base_rows} rows): {base_rate:.2f} worlds/s")
    print(f"ratio worldforge/baseline (one process each): {ratio:.1f}x   [target: >= 5x]")
    ok = wall < 60 and ratio >= 5 and bad == 0
    print("PASS" if ok else "MISS")


if __name__ == "__main__":
    main()
