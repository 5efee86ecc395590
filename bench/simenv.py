"""Benchmark: web_search steps in-process and over HTTP, against the raw tantivy query.

In-process: ``SearchEnv.step`` for ``web_search`` (search, numbering, snippet, revealed-fact
logging, leakage control and perturbation decisions) against the raw tantivy query on the
same index (parse + top-10 search + stored-field fetch), both timed per call in the same run.
Targets: p50 under 2 ms and within 3x the raw query.

Over HTTP: a real ``worldforge serve search`` on loopback (started with setsid, stopped by
PID) driven by an aiohttp client with 64 connections, sessions of 20 steps. Target: at least
1,000 steps/s on 2 cores (the client runs on the same cores).

Usage: python bench/simenv.py [--world esports_2031] [--warehouse warehouse] [--steps 3000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from worldforge.corpus import open_index, read_corpus  # noqa: E402
from worldforge.net import free_port  # noqa: E402
from worldforge.settings import get_settings  # noqa: E402
from worldforge.simenv import SearchEnv  # noqa: E402
from worldforge.warehouse import Warehouse  # noqa: E402


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--world", default="esports_2031")
    ap.add_argument("--warehouse", default=str(get_settings().warehouse))
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--small", action="store_true", help="a check that the bench runs (seconds, make test), not the figures")
    args = ap.parse_args()
    if args.small:
        args.steps = 100
    path = Warehouse(args.warehouse).world(args.world)
    if not path.is_file():
        sys.exit(f"{path} not found: run `make demo` first (or pass --warehouse)")

    _, facts = read_corpus(path)
    labels = facts.filter(facts["section"] == "lead")["value_text"].unique().sort().to_list()
    queries = [f"{labels[i % len(labels)]} {['points', 'rank', 'date', 'wins'][i % 4]}" for i in range(args.steps)]

    env = SearchEnv(args.world, warehouse=Warehouse(args.warehouse))
    index = open_index(path)
    searcher = index.searcher()

    def raw(q: str) -> None:
        parsed, _ = index.parse_query_lenient(q, ["title", "lead", "body"], field_boosts={"title": 2.0})
        [searcher.doc(a)["url"][0] for _, a in searcher.search(parsed, 10).hits]

    for q in queries[:200]:  # warm
        raw(q)
        env.step({"name": "web_search", "arguments": {"query": q}})
    raw_t, env_t = [], []
    for q in queries:
        t = time.perf_counter()
        raw(q)
        raw_t.append(time.perf_counter() - t)
        t = time.perf_counter()
        env.step({"name": "web_search", "arguments": {"query": q}})
        env_t.append(time.perf_counter() - t)
    p50_env, p50_raw = statistics.median(env_t) * 1000, statistics.median(raw_t) * 1000
    print(f"in-process web_search: {1 / statistics.mean(env_t):,.0f} steps/s, p50 {p50_env:.3f} ms, p99 {pct(env_t, 0.99) * 1000:.3f} ms   [target: p50 < 2 ms]")
    print(f"raw tantivy query:     {1 / statistics.mean(raw_t):,.0f} q/s, p50 {p50_raw:.3f} ms, p99 {pct(raw_t, 0.99) * 1000:.3f} ms")
    print(f"ratio in-process/raw (p50): {p50_env / p50_raw:.2f}x   [target: <= 3x]")

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "worldforge.cli", "serve", "search", "--world", args.world, "--port", str(port),
         "--no-record", "--warehouse", args.warehouse],
        cwd=ROOT, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        http = asyncio.run(_http(port, queries))
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(15)
    n, dt, lat, codes = http
    print(f"HTTP web_search: {n} steps in {dt:.1f} s = {n / dt:,.0f} steps/s, p50 {statistics.median(lat) * 1000:.2f} ms, "
          f"p99 {pct(lat, 0.99) * 1000:.2f} ms (64 connections), 5xx: {sum(c >= 500 for c in codes)}   [target: >= 1,000 steps/s]")
    ok = p50_env < 2 and p50_env / p50_raw <= 3 and n / dt >= 1000
    print("PASS" if ok else "MISS")


async def _http(port: int, queries: list[str]):
    import aiohttp

    url = f"http://127.0.0.1:{port}"
    async with aiohttp.ClientSession(url, connector=aiohttp.TCPConnector(limit=64)) as c:
        for _ in range(100):
            try:
                async with c.get("/health") as r:
                    if r.status == 200:
                        break
            except aiohttp.ClientError:
                await asyncio.sleep(0.2)
        lat, codes = [], []

        async def session(chunk: list[str]) -> None:
            async with c.post("/sessions", json={}) as r:
                sid = (await r.json())["session_id"]
            for q in chunk:
                t = time.perf_counter()
                async with c.post(f"/sessions/{sid}/step", json={"name": "web_search", "arguments": {"query": q}}) as r:
                    await r.read()
                    codes.append(r.status)
                lat.append(time.perf_counter() - t)
            async with c.delete(f"/sessions/{sid}"):
                pass

        chunks = [queries[i:i + 20] for i in range(0, len(queries), 20)]
        t = time.perf_counter()
        await asyncio.gather(*(session(ch) for ch in chunks))
        return len(lat), time.perf_counter() - t, lat, codes


if __name__ == "__main__":
    main()
