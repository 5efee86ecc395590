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

Then **the largest record** (issue 33): one file of three trajectories, the middle one holding a
single observation of distinct words, ingested in a fresh process; its peak RSS is compared with
the same file whose middle observation is one line (the baseline, same run):

- a record just under the size cap (``max_record_mb``, 16 MiB): it is read; target: peak RSS at
  most 16× the record above the baseline;
- a record of ``--large-mb`` MiB (100): it is quarantined with its size, never held whole; target:
  peak RSS at most 2× the cap above the baseline.

    python bench/ingest.py [--mb 1024] [--seed 0] [--keep DIR] [--large-mb 100]
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
from worldforge.warehouse import Warehouse
t = time.perf_counter()
r = ingest([{folder!r}], Warehouse({wh!r}))
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


CHILD_ONE = """
import sys, time
sys.path.insert(0, {root!r})
from worldforge.trajectories import ingest
from worldforge.warehouse import Warehouse
r = ingest([{folder!r}], Warehouse({wh!r}), max_record_mb={cap!r})
print(r.tally.inputs, r.tally.kept, sum(r.tally.dropped.values()), r.tally.balanced)
"""


def one_large(path: Path, mib: float) -> int:
    """Write three chat trajectories to ``path``, the middle one with an observation of ``mib`` MiB
    of distinct words (12 a line), streamed (this process never holds it, so the child process that
    ingests it does not inherit it); returns the observation's size in bytes."""
    rng = random.Random(mib)

    def chat(q: str, text: str) -> str:
        return json.dumps({"messages": [
            {"role": "user", "content": f"Find {q}."},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "web_search", "arguments": json.dumps({"query": q})}}]},
            {"role": "tool", "tool_call_id": "c1", "content": text}, {"role": "assistant", "content": "done"}]}) + "\n"
    head, tail = chat("b", "@@").split("@@")
    n = i = 0
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(chat("a", "result one\nresult two"))
        fh.write(head)
        while n < mib * (1 << 20):
            w = f"w{i:x}q{rng.randrange(10**6)}"
            fh.write(w + ("\\n" if i % 12 == 11 else " "))  # the JSON escape of a line break
            n += len(w) + 1
            i += 1
        fh.write(tail)
        fh.write(chat("c", "result three"))
    return n


def largest_record(tmp: Path, cap: float, large: float, small: bool) -> None:
    """The largest-record figures (see the module docstring); ``small``: figures only (fixed costs
    dominate records of a few MiB, so the targets are judged on the full run)."""
    rows = []
    for label, mib in (("baseline", 0.0), ("under the cap", cap * 0.9), ("over the cap", large)):
        folder = tmp / f"one-{mib}"
        folder.mkdir()
        size = one_large(folder / "one.jsonl", mib)
        (_, kept, dropped, ok), rss = run_child(CHILD_ONE.format(root=str(ROOT), folder=str(folder), wh=str(tmp / f"wh-{mib}"), cap=cap))
        rows.append((label, size / (1 << 20), int(kept), int(dropped), rss))
        shutil.rmtree(folder)
    base = rows[0][4]
    print(f"largest record (cap {cap:g} MiB): baseline peak RSS {base:,.0f} MiB")
    for label, mib, kept, dropped, rss in rows[1:]:
        above = rss - base
        if label == "under the cap":
            ratio, target = above / mib, 16
            verdict = f"{ratio:.1f}x the record (target <= {target}x): {'met' if ratio <= target else 'MISSED'}"
        else:
            ratio, target = above / cap, 2
            verdict = f"{ratio:.1f}x the cap (target <= {target}x): {'met' if ratio <= target else 'MISSED'}"
        print(f"  a {mib:,.1f} MiB record {label}: kept {kept}, quarantined {dropped}; peak RSS {rss:,.0f} MiB, "
              f"+{above:,.0f} MiB over the baseline" + ("" if small else f" = {verdict}"))


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
    ap.add_argument("--mb", type=int, default=256, help="input size in MB (1024 for the figure in docs/benchmarks.md)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", type=Path, help="generate into this folder and keep it")
    ap.add_argument("--large-mb", type=float, default=100.0, help="the over-the-cap record's size in MiB")
    ap.add_argument("--small", action="store_true", help="a check that the bench runs (seconds, make test), not the figures")
    args = ap.parse_args()
    cap = None
    if args.small:
        args.mb, args.large_mb, cap = 2, 3.0, 1.0
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
        if cap is None:
            from worldforge.settings import get_settings

            cap = float(get_settings().max_record_mb)
        largest_record(tmp, cap, args.large_mb, args.small)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
