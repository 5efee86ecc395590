"""Benchmark: loss-mask statistics over every visible real trajectory.

Reads ``../shared/data/trajectories`` once (the read is timed on its own), then computes
the four statistics of DESIGN.md §5 and the mask decision over all turns with
``worldforge.trajectories.mask_turns`` and prints turns/s.

Baseline, in the same run: the same four statistics written the way one would first write
them — one pass per turn in plain Python, a dict of line document frequencies — and the
results are compared value by value, so the benchmark doubles as a cross-check.

Usage: python bench/turns.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import zlib
from collections import Counter
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from worldforge.trajectories import Trajectory, mask_turns, read_path  # noqa: E402

TRAJECTORIES = ROOT.parent / "shared" / "data" / "trajectories"


def baseline(trajs: list[Trajectory]) -> list[tuple[int, float, float, float]]:
    def lines(text):
        return {" ".join(line.split()) for line in text.split("\n")} - {""}

    df: Counter = Counter()
    for tr in trajs:
        seen = set()
        for t in tr.turns:
            seen |= lines(t.observation)
        df.update(seen)
    n = sum(1 for tr in trajs if tr.turns)  # N: trajectories that have turns
    out = []
    for tr in trajs:
        context: set = set()
        for t in tr.turns:
            words = t.observation.lower().split()
            raw = t.observation.encode()
            ratio = len(zlib.compress(raw, 6)) / len(raw) if raw else 0.0
            a = t.action.lower().split()
            context |= {tuple(a[i:i + 3]) for i in range(len(a) - 2)} if len(a) >= 3 else ({tuple(a)} if a else set())
            grams = [tuple(words[i:i + 3]) for i in range(len(words) - 2)] if len(words) >= 3 else ([tuple(words)] if words else [])
            new = 0
            for g in grams:
                if g not in context:
                    new += 1
                    context.add(g)
            novelty = new / len(grams) if grams else 0.0
            ls = [" ".join(line.split()) for line in t.observation.split("\n")]
            ls = [line for line in ls if line]
            surprisal = sum(-math.log2(df[line] / n) for line in ls) / len(ls) if ls else 0.0
            out.append((len(words), ratio, novelty, surprisal))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--small", action="store_true", help="a check that the bench runs (seconds, make test), not the figures")
    args = ap.parse_args()
    if args.small:
        args.repeat = 1

    t = time.perf_counter()
    trajs = [r for r in read_path([TRAJECTORIES]) if isinstance(r, Trajectory)]
    read_s = time.perf_counter() - t
    rows = [(tr.trajectory_id, i, tr.domain, turn.action, turn.observation) for tr in trajs for i, turn in enumerate(tr.turns)]
    turns = pl.DataFrame(rows, schema=["trajectory_id", "turn_idx", "domain", "action", "observation"], orient="row")
    n = turns.height

    wf_times, base_times = [], []
    for _ in range(args.repeat):
        t = time.perf_counter()
        masked, _ = mask_turns(turns)
        wf_times.append(time.perf_counter() - t)
        t = time.perf_counter()
        ref = baseline(trajs)
        base_times.append(time.perf_counter() - t)

    # cross-check: same statistics, turn by turn (both in trajectory order)
    order = {tid: k for k, tid in enumerate(tr.trajectory_id for tr in trajs)}
    got = masked.with_columns(pl.col("trajectory_id").replace_strict(order).alias("_o")).sort("_o", "turn_idx")
    mism = sum(
        1 for (tok, cr, nov, ls), row in zip(ref, got.iter_rows(named=True))
        if tok != row["obs_tokens"] or abs(cr - row["compression_ratio"]) > 1e-12 or abs(nov - row["novelty"]) > 1e-12 or abs(ls - row["line_surprisal"]) > 1e-9
    )
    wf, base = min(wf_times), min(base_times)
    print(f"read: {len(trajs)} trajectories, {n} turns from {TRAJECTORIES} in {read_s:.2f} s ({n / read_s:,.0f} turns/s)")
    print(f"worldforge mask_turns (4 statistics + per-domain thresholds + decision): {wf * 1000:.0f} ms = {n / wf:,.0f} turns/s (best of {args.repeat})")
    print(f"baseline (plain-Python loop, statistics only): {base * 1000:.0f} ms = {n / base:,.0f} turns/s")
    print(f"ratio worldforge/baseline: {base / wf:.2f}x; statistics that differ: {mism} of {n}; informative share {masked['informative'].mean():.1%}")


if __name__ == "__main__":
    main()
