"""CPT build speed against the raw `tokenizers` floor, and memory while streaming 1M turns.

1. Throughput. The same trajectories (the real turns of the warehouse, cycled to --turns-speed
   turns) are tokenized twice per round, alternating: (a) the floor, the raw Rust batch encode
   (`tokenizers.Tokenizer.encode_batch`) of the rendered CPT text, nothing else; (b) the whole
   CPT builder (`build_cpt`: rendering, offsets, labels from the loss mask, budget splits,
   Parquet + JSONL writing). Figure: tokens/s of each; ratio = builder / floor (target >= 0.5).
2. Memory. `build_cpt` streams --turns-stream turns (default 1,000,000; the real turns cycled,
   observations cut to 200 characters to keep the run short) in a child process, and the same
   with a tenth of the turns in another; figure: the peak RSS of each (bounded memory: the
   peak does not grow with the turns).

Usage: python bench/datasets.py [--warehouse DIR] [--turns-speed N] [--turns-stream N] [--rounds R]
"""

from __future__ import annotations

import argparse
import itertools
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from worldforge.datasets.config import SplitConfig  # noqa: E402
from worldforge.datasets.cpt import CPTConfig, build_cpt, render_trajectory  # noqa: E402
from worldforge.datasets.sources import DatasetTrajectory, iter_split_trajectories  # noqa: E402
from worldforge.datasets.tokenizer import default_tokenizer, load_tokenizer  # noqa: E402
from worldforge.settings import get_settings  # noqa: E402
from worldforge.trajectories.model import StoredTurn  # noqa: E402
from worldforge.warehouse import Warehouse  # noqa: E402


def real_turns(warehouse: Warehouse) -> list[tuple[str, str, list[StoredTurn]]]:
    if not warehouse.trajectory_store.exists():
        from worldforge.trajectories.store import ingest

        print(f"no trajectory store in {warehouse}: ingesting ../shared/data/trajectories", flush=True)
        ingest([ROOT.parent / "shared" / "data" / "trajectories"], warehouse)
    return [(t.domain, t.task, t.turns) for t in iter_split_trajectories(warehouse, SplitConfig(test_fraction=0.0)) if t.turns]


def synthetic(base, n_turns: int, obs_chars: int | None = None):
    """Trajectories of the real turns, cycled until ``n_turns`` turns (fresh ids, one at a time)."""
    made, i = 0, 0
    for domain, task, turns in itertools.cycle(base):
        if made >= n_turns:
            return
        take = turns[: n_turns - made]
        if obs_chars is not None:
            take = [StoredTurn(t.turn_idx, t.action, t.observation[:obs_chars], t.informative, t.mask_reason) for t in take]
        yield DatasetTrajectory(f"bench{i:08d}", "bench", domain, task, "real", take, split="train")
        made += len(take)
        i += 1


def child(args) -> None:
    """One streaming build; prints its peak RSS (MiB) and the turns built, as JSON."""
    wh = Warehouse(args.warehouse)
    base = real_turns(wh)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        report = build_cpt(wh, Path(tmp) / "cpt", CPTConfig(tokenizer=args.tokenizer, max_tokens=4096, include_pages=False),
                           trajectories=synthetic(base, args.child, obs_chars=200))
        dt = time.perf_counter() - t0
    print(json.dumps({"turns": args.child, "trajectories": report.tally.inputs, "tokens": report.stats["tokens"], "seconds": dt,
                      "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--warehouse", default=str(get_settings().warehouse))
    ap.add_argument("--tokenizer", default=None)
    ap.add_argument("--turns-speed", type=int, default=20_000)
    ap.add_argument("--turns-stream", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--child", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--small", action="store_true", help="a check that the bench runs (seconds, make test), not the figures")
    args = ap.parse_args()
    if args.small:
        args.turns_speed, args.turns_stream, args.rounds = 500, 2_000, 1
    wh = Warehouse(args.warehouse)
    wh.root.mkdir(parents=True, exist_ok=True)
    args.tokenizer = args.tokenizer or str(default_tokenizer(wh))
    if args.child:
        return child(args)

    base = real_turns(wh)
    trajs = list(synthetic(base, args.turns_speed))
    texts = [render_trajectory(t).text for t in trajs]
    backend = load_tokenizer(args.tokenizer).backend_tokenizer
    print(f"throughput: {len(trajs):,} trajectories, {args.turns_speed:,} real turns, {sum(map(len, texts)) / 1e6:.1f} M characters; "
          f"tokenizer {args.tokenizer}", flush=True)
    ratios = []
    for r in range(args.rounds):
        t0 = time.perf_counter()
        tokens = 0
        for i in range(0, len(texts), 64):
            tokens += sum(len(e.ids) for e in backend.encode_batch(texts[i:i + 64], add_special_tokens=False))
        floor_s = time.perf_counter() - t0
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            report = build_cpt(wh, Path(tmp) / "cpt", CPTConfig(tokenizer=args.tokenizer, max_tokens=1 << 20, include_pages=False), trajectories=iter(trajs))
            ours_s = time.perf_counter() - t0
        assert report.stats["tokens"] + 0 <= tokens  # parts without loss are dropped, never tokens added
        floor_tps, ours_tps = tokens / floor_s, tokens / ours_s
        ratios.append(ours_tps / floor_tps)
        print(f"  round {r + 1}: raw encode_batch {floor_tps / 1e6:.2f} M tokens/s ({floor_s:.2f} s); build_cpt with masks + writing "
              f"{ours_tps / 1e6:.2f} M tokens/s ({ours_s:.2f} s); ratio {ratios[-1]:.2f}", flush=True)
    print(f"ratio (build_cpt / raw tokenizers), median of {args.rounds}: {statistics.median(ratios):.2f}  (target >= 0.50)")

    print(f"memory: streaming {args.turns_stream // 10:,} and {args.turns_stream:,} turns through build_cpt (child processes)", flush=True)
    peaks = []
    for n in (args.turns_stream // 10, args.turns_stream):
        out = subprocess.run([sys.executable, __file__, "--warehouse", args.warehouse, "--tokenizer", args.tokenizer, "--child", str(n)],
                             capture_output=True, text=True, check=True)
        res = json.loads(out.stdout.strip().splitlines()[-1])
        peaks.append(res["peak_rss_mib"])
        print(f"  {res['turns']:,} turns ({res['trajectories']:,} trajectories, {res['tokens'] / 1e6:.1f} M tokens) in {res['seconds']:.0f} s: "
              f"peak RSS {res['peak_rss_mib']:.0f} MiB", flush=True)
    print(f"peak RSS ratio ({args.turns_stream:,} / {args.turns_stream // 10:,} turns): {peaks[1] / peaks[0]:.2f}  (bounded: close to 1, not 10)")


if __name__ == "__main__":
    main()
