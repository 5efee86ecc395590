"""Benchmark: a server's memory after a burst of sessions closes (hardening round 4, item 5).

Starts a real ``worldforge serve search`` on loopback (setsid, stopped by PID), samples its RSS
(``/proc``), opens ``--sessions`` sessions that each store about ``--mib`` MiB in ``dict_memory``
(three writes of a third each: a request body is at most 1 MiB), closes them all, and samples
the RSS until it settles. With ``--burn`` CPU burner processes run beside it (a busy machine).

Each kind (``mcp``: official ``mcp`` SDK client, legacy streamable HTTP, closed by its DELETE;
``http``: ``POST /sessions`` … ``DELETE``; ``openenv``: ``worldforge serve openenv`` and OpenEnv's
WebSocket client, reset … close) is measured twice in the same run: this tree's server,
and the server of ``--baseline-rev`` (default ``4bc33ca``, before the fix: its ``worldforge``
package taken with ``git archive`` into a temporary folder, nothing else of the repository
touched). Sessions are recorded (``--no-record`` to leave the episode log out). Target: RSS after
the closes under +100 MiB over the RSS at rest.

Usage: python bench/memory.py [--warehouse DIR] [--sessions 300] [--mib 2] [--burn 1] [--kinds mcp,http,openenv] [--baseline-rev REV]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from worldforge.net import free_port  # noqa: E402

WORLD = "esports_2031"


def rss_mib(pid: int) -> float:
    """A process's resident set size (Linux ``/proc``), MiB."""
    with open(f"/proc/{pid}/status") as fh:
        return int(next(line for line in fh if line.startswith("VmRSS")).split()[1]) / 1024


def burner() -> None:
    """Spin forever (a CPU burner: the busy machine)."""
    x = 0
    while True:
        x = (x * 31 + 7) % 1_000_003


def ensure_world(warehouse: Path) -> None:
    """Build esports_2031 with its corpus and tasks (OpenEnv serves a world's tasks) in ``warehouse`` unless
    they are there (about 10 s)."""
    from worldforge.tasks.store import build_tasks

    path = warehouse / f"{WORLD}.duckdb"
    if not path.is_file():
        from worldforge.corpus import generate_corpus, write_corpus
        from worldforge.scenarios import build_scenarios
        from worldforge.spec import load_spec
        from worldforge.synth import build_world
        from worldforge.warehouse import Warehouse, write_world

        spec = load_spec(ROOT / "world_specs" / f"{WORLD}.yaml")
        tables = build_world(spec, None)
        path = write_world(spec, tables, Warehouse(warehouse), None, build_scenarios(spec, tables))
        write_corpus(path, generate_corpus(path))
    build_tasks(path)


def baseline_tree(rev: str, into: Path) -> Path:
    """The ``worldforge`` package of commit ``rev`` extracted under ``into`` (``git archive``)."""
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "archive", rev, "worldforge"], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def start(warehouse: Path, tree: Path, record: bool, server: str = "search") -> tuple[subprocess.Popen, str]:
    """``worldforge serve <server>`` (``search`` or ``openenv``) of ``tree`` on a free loopback port, once it answers."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(tree)}
    argv = [sys.executable, "-m", "worldforge.cli", "serve", server, "--world", WORLD, "--warehouse", str(warehouse),
            "--idle-timeout", "600", "--record" if record else "--no-record", "--port", str(port)]
    if server == "openenv":  # its default bound (64) is below the burst
        argv += ["--max-sessions", "1000"]
    proc = subprocess.Popen(argv, cwd=tree, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}")
        try:
            if httpx.get(url + "/health", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    stop(proc)
    raise RuntimeError("the server did not answer")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


def payloads(mib: float, n: int) -> list[dict]:
    """``dict_memory`` writes of about ``mib`` MiB in all, in three parts (distinct text per session)."""
    part = int(mib * (1 << 20) / 3)
    return [{"operation": "add", "dict": {f"k{i}": f"{n}-{i}-" + "x" * part}} for i in range(3)]


async def mcp_sessions(url: str, count: int, mib: float, concurrency: int) -> None:
    from mcp import Client

    gate = asyncio.Semaphore(concurrency)

    async def one(n: int) -> None:
        async with gate, Client(url + "/mcp", mode="legacy", read_timeout_seconds=120) as c:
            for args in payloads(mib, n):
                await c.call_tool("dict_memory", args)

    await asyncio.gather(*(one(n) for n in range(count)))


async def openenv_sessions(url: str, count: int, mib: float, concurrency: int) -> None:
    """OpenEnv sessions (``SearchWorldClient``: one WebSocket each): reset, three ``dict_memory`` writes, close."""
    from worldforge.rl.openenv import SearchAction, SearchWorldClient

    gate = asyncio.Semaphore(concurrency)

    async def one(n: int) -> None:
        async with gate:
            client = SearchWorldClient(base_url=url, message_timeout_s=120)
            await client.connect()
            try:
                await client.reset(seed=n)
                for args in payloads(mib, n):
                    await client.step(SearchAction(tool="dict_memory", arguments=args))
            finally:
                await client.close()

    await asyncio.gather(*(one(n) for n in range(count)))


async def http_sessions(url: str, count: int, mib: float, concurrency: int) -> None:
    gate = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(base_url=url, timeout=120) as c:
        async def one(n: int) -> None:
            async with gate:
                sid = (await c.post("/sessions", json={"seed": n})).json()["session_id"]
                for args in payloads(mib, n):
                    r = await c.post(f"/sessions/{sid}/step", json={"name": "dict_memory", "arguments": args})
                    r.raise_for_status()
                assert (await c.delete(f"/sessions/{sid}")).status_code == 204

        await asyncio.gather(*(one(n) for n in range(count)))


def measure(warehouse: Path, kind: str, tree: Path, args: argparse.Namespace) -> dict:
    """One server (the ``worldforge`` of ``tree``): its RSS at rest, at the peak of the burst, and
    after the closes settle (MiB)."""
    proc, url = start(warehouse, tree, args.record, "openenv" if kind == "openenv" else "search")
    try:
        time.sleep(1.5)
        base = rss_mib(proc.pid)
        peak = base
        run = {"mcp": mcp_sessions, "http": http_sessions, "openenv": openenv_sessions}[kind]
        t0 = time.monotonic()

        async def burst() -> None:
            nonlocal peak
            job = asyncio.create_task(run(url, args.sessions, args.mib, args.concurrency))
            while not job.done():
                peak = max(peak, rss_mib(proc.pid))
                await asyncio.sleep(0.2)
            await job

        asyncio.run(burst())
        burst_s = time.monotonic() - t0
        health = httpx.get(url + "/health", timeout=10).json() if kind != "openenv" else {}
        samples = []
        for _ in range(int(args.settle / 0.5)):  # the RSS over the next seconds
            time.sleep(0.5)
            samples.append(rss_mib(proc.pid))
        if args.timeline:
            print("  rss every 5 s after the closes:", " ".join(f"{x:.0f}" for x in samples[::10]), flush=True)
        return {"kind": kind, "base": base, "peak": peak, "after_1s": samples[1], "after": samples[-1],
                "min": min(samples), "burst_s": burst_s, "open": health.get("sessions", 0) + health.get("mcp_sessions", 0)}
    finally:
        stop(proc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--warehouse", help="a warehouse with esports_2031 (default: one built in a temporary folder)")
    ap.add_argument("--sessions", type=int, default=300)
    ap.add_argument("--mib", type=float, default=2.0)
    ap.add_argument("--concurrency", type=int, default=300, help="sessions open at once (default: all)")
    ap.add_argument("--burn", type=int, default=1, help="CPU burner processes beside the server")
    ap.add_argument("--settle", type=float, default=120.0, help="seconds sampled after the closes")
    ap.add_argument("--kinds", default="mcp,http,openenv")
    ap.add_argument("--baseline-rev", default="4bc33ca", help="the commit to compare with ('' : this tree only)")
    ap.add_argument("--record", action=argparse.BooleanOptionalAction, default=True,
                    help="record the episodes (2 MiB each into the episode log and store)")
    ap.add_argument("--timeline", action="store_true", help="print the RSS every 5 s after the closes")
    ap.add_argument("--small", action="store_true", help="a check that the bench runs (20 sessions), not the figures")
    args = ap.parse_args()
    if args.small:  # a check that it runs: this tree only (a clone may lack the baseline's commit), no burner
        args.sessions, args.settle, args.baseline_rev, args.burn = 20, 3.0, "", 0
    with tempfile.TemporaryDirectory() as tmp:
        warehouse = Path(args.warehouse) if args.warehouse else Path(tmp)
        ensure_world(warehouse)
        burners = [multiprocessing.Process(target=burner, daemon=True) for _ in range(args.burn)]
        for b in burners:
            b.start()
        try:
            variants = [("this tree", ROOT)] + ([(args.baseline_rev, baseline_tree(args.baseline_rev, Path(tmp) / "baseline"))]
                                                if args.baseline_rev else [])
            print(f"{args.sessions} sessions x {args.mib} MiB, {args.burn} CPU burner(s), {os.cpu_count()} cores")
            print(f"{'kind':5} {'server':10} {'base':>6} {'peak':>6} {'+1s':>6} {'+' + str(int(args.settle)) + 's':>6} {'growth':>7} {'burst':>7}")
            for kind in args.kinds.split(","):
                for name, tree in variants:
                    r = measure(warehouse, kind, tree, args)
                    print(f"{kind:5} {name:10} {r['base']:6.0f} {r['peak']:6.0f} {r['after_1s']:6.0f} {r['after']:6.0f} "
                          f"{r['after'] - r['base']:+7.0f} {r['burst_s']:6.1f}s  (MiB; open after: {r['open']})", flush=True)
        finally:
            for b in burners:
                b.terminate()
                b.join()


if __name__ == "__main__":
    main()
