"""Peak memory of a streaming ingest: ``worldforge.trajectories.ingest`` of a generated input of N MB.

Generates (seeded) JSONL files of OpenAI-chat trajectories — 4–40 tool calls each, observations of
a few hundred bytes to 20 KB with boilerplate lines shared across trajectories — totalling
``--mb`` megabytes, then, each in a fresh child process (peak RSS from ``wait4``):

1. **worldforge** — ``ingest(folder, warehouse)``: records streamed into the store in chunks,
   trajectory-local statistics per chunk, line surprisal / thresholds / decision in DuckDB SQL;
2. **baseline** — holding the input: every trajectory read into a Python list
   (``list(read_path(folder))``), what an ingest that keeps its input in memory needs at least.

Prints input size, the largest trajectory, turns, time, turns/s and peak RSS of each, and the
ratio baseline RSS / worldforge RSS.

    python bench/ingest.py [--mb 1024] [--seed 0] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BOILER = ["Command executed successfully.", "Warning: output truncated to 20000 characters.", "(venv) root@sandbox:/repo#",
          "HTTP/1.1 200 OK", "Content-Type: application/json", "Traceback (most recent call last):"]
TOOLS = ["bash", "web_search", "web_extractor", "str_replace_editor", "python", "sql"]


def trajectory(rng: random.Random, i: int) -> dict:
    """One OpenAI-chat trajectory with tool calls and their results."""
    msgs: list[dict] = [{"role": "system", "content": "You are an agent."}, {"role": "user", "content": f"Task {i}: find item {rng.randrange(10**6)}"}]
    for k in range(rng.randint(4, 40)):
        tool = rng.choice(TOOLS)
        cid = f"c{k}"
        msgs.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": tool, "arguments": json.dumps({"q": f"query {i}.{k} {rng.random():.6f}"})}}]})
        lines = [rng.choice(BOILER) if rng.random() < 0.2 else
                 " ".join(f"w{rng.randrange(5000)}" for _ in range(rng.randint(3, 14))) for _ in range(int(rng.paretovariate(1.2) * 8))]
        msgs.append({"role": "tool", "tool_call_id": cid, "content": "\n".join(lines)[:20_000]})
    return {"messages": msgs}


def generate(folder: Path, mb: int, seed: int) -> tuple[int, int, int]:
    """Write ``mb`` MB of JSONL into ``folder`` (64 MB per file); returns (bytes, trajectories, largest line)."""
    rng = random.Random(seed)
    target, written, n, largest, part = mb * 1_000_000, 0, 0, 0, 0
    while written < target:
        with open(folder / f"part-{part:04d}.jsonl", "w", encoding="utf-8") as fh:
            size = 0
            while size < 64_000_000 and written + size < target:
                line = json.dumps(trajectory(rng, n)) + "\n"
                fh.write(line)
                size += len(line)
                largest = max(largest, len(line))
                n += 1
        written += size
        part += 1
    return written, n, largest


CHILD_WF = """
import sys, time
sys.path.insert(0, {root!r})
from worldforge.trajectories import ingest
t = time.perf_counter()
r = ingest([{folder!r}], {wh!r})
print(r.tally.inputs, r.turns, time.perf_counter() - t, r.tally.balanced)
"""
CHILD_BASE = """
import sys, time
sys.path.insert(0, {root!r})
from worldforge.trajectories import read_path
t = time.perf_counter()
held = list(read_path([{folder!r}]))
print(len(held), sum(len(getattr(r, "turns", ())) for r in held), time.perf_counter() - t, True)
"""


def run_child(code: str) -> tuple[list[str], float]:
    """Run ``code`` in a fresh interpreter; its stdout fields and its peak RSS in MiB."""
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"child failed ({proc.returncode})")
    return out.split(), usage.ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=int, default=256, help="input size in MB (1024 for the README figure)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", type=Path, help="generate into this folder and keep it")
    ap.add_argument("--small", action="store_true", help="a check that the bench runs (seconds, make test), not the figures")
    args = ap.parse_args()
    if args.small:
        args.mb = 2
    tmp = Path(tempfile.mkdtemp(prefix="wf_bench_ingest_"))
    folder = args.keep or tmp / "input"
    folder.mkdir(parents=True, exist_ok=True)
    try:
        t = time.perf_counter()
        size, n, largest = generate(folder, args.mb, args.seed)
        print(f"input: {size / 1e6:,.0f} MB in {len(list(folder.glob('*.jsonl')))} JSONL files, {n:,} trajectories, "
              f"largest {largest / 1e6:.2f} MB (generated in {time.perf_counter() - t:.0f} s)")
        (recs, turns, secs, ok), rss = run_child(CHILD_WF.format(root=str(ROOT), folder=str(folder), wh=str(tmp / "wh")))
        store = (tmp / "wh" / "trajectories.duckdb").stat().st_size
        print(f"worldforge ingest: {int(recs):,} records, {int(turns):,} turns in {float(secs):.0f} s ({int(turns) / float(secs):,.0f} turns/s), "
              f"balanced {ok}; store {store / 1e6:,.0f} MB; peak RSS {rss:,.0f} MiB")
        (_, bturns, bsecs, _), brss = run_child(CHILD_BASE.format(root=str(ROOT), folder=str(folder)))
        print(f"baseline (the input's trajectories held in a list): {int(bturns):,} turns read in {float(bsecs):.0f} s; peak RSS {brss:,.0f} MiB")
        print(f"ratio baseline/worldforge peak RSS: {brss / rss:.2f}x; worldforge RSS / input size: {rss * 1.048576 / (size / 1e6):.2f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
