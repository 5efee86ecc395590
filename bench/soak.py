"""Soak: hours of mixed traffic against real servers, with the servers' resources sampled as it runs.

A real ``worldforge serve search`` (HTTP sessions at ``/sessions``, ``/batch``, MCP at ``/mcp``) and a real
``worldforge serve retrieve`` (Search-R1's ``/retrieve``), each started with setsid on 127.0.0.1 in a temporary
warehouse holding a copy of the world (its episodes stay out of yours) and stopped by PID at the end, on
Ctrl-C and on errors. ``--workers`` clients loop over a mixed cycle until ``--minutes`` are over:

* HTTP sessions: open (every other one on a task of the world), ``web_search``, ``web_extractor`` of a result,
  ``dict_memory``; a task session submits an answer; three of four are closed (``DELETE``), the fourth is left
  to expire (the server runs with ``--idle-timeout``, default 5 s);
* a ``/batch`` of open, steps and close;
* MCP sessions of the official SDK client (``mode="legacy"``, closed by the client's ``DELETE``), and one
  stateless MCP call per cycle under its own ``session_id``, left to expire;
* ``/retrieve`` batches of queries (no session, no episode).

Beside it a ``worldforge catalog build`` of ``--catalog-worlds`` generated worlds runs in a second warehouse
(again every ``--catalog-every`` minutes in a long run, new specs each time).

Every ``--sample-s`` seconds (default 60) each server's RSS (MiB), open file descriptors and threads are read
from ``/proc/<pid>``, with the episodes stored so far (the episode store read back, its log drained first),
the sessions opened and the 5xx answers. At the end, once every session left open has expired:

* **RSS slope** of the search server, MiB/hour, least squares over the samples of the second half;
* **fd and thread drift**: the last sample minus the first of the second half;
* **episodes in = stored**: every HTTP session with a step is stored under its id (closed, expired or
  submitted), and the MCP episodes (agent ``mcp``) equal the MCP sessions with a call;
* **0 5xx** and no request without an answer; **no session left open** (``/health``); every catalog build that
  finished on its own exited 0 (the build in flight at the end is given ``CATALOG_GRACE_S`` to finish, then stopped
  by the bench: reported ``stopped``, not a failure).

Targets of the long run: RSS slope at most ``--max-rss-slope`` MiB/hour (default 10), fd drift at most 8, thread
drift at most 4. ``--short`` (about 75 s, in ``make test``) checks the counts, the 5xx, the expiries and the catalog build: checks
that hold on a busy machine. Its RSS slope and fd and thread drift are printed but not judged (75 s measure the
warm-up: thread pools and connections grow with the load then, which is not a leak).
Exit 1 when a check fails.

Usage: python bench/soak.py [--minutes 120] [--sample-s 60] [--workers 3] [--idle-timeout 5]
       [--warehouse DIR] [--world esports_2031] [--catalog-worlds 2] [--catalog-every 30] [--short]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from load import URL_LINE, copy_world, load_plan  # noqa: E402

from worldforge.net import free_port  # noqa: E402
from worldforge.warehouse import Warehouse  # noqa: E402

CLI = [sys.executable, "-m", "worldforge.cli"]
FD_DRIFT, THREAD_DRIFT = 8, 4
"""The most file descriptors and threads the search server may gain over the second half of a run (long runs)."""
CATALOG_GRACE_S = 60.0
"""How long the end of the soak waits for the catalog build in flight to finish on its own before stopping it."""


def proc_figures(pid: int) -> tuple[float, int, int]:
    """``(RSS MiB, open file descriptors, threads)`` of process ``pid`` (Linux ``/proc``).

    Raises:
        OSError: the process is gone.
    """
    status = {ln.split(":")[0]: ln.split(":", 1)[1].split() for ln in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in ln}
    return int(status["VmRSS"][0]) / 1024, len(os.listdir(f"/proc/{pid}/fd")), int(status["Threads"][0])


def slope_per_hour(points: list[tuple[float, float]]) -> float:
    """The least-squares slope of ``(seconds, value)`` points, per hour (0 with fewer than two points)."""
    if len(points) < 2:
        return 0.0
    n = len(points)
    mx, my = sum(x for x, _ in points) / n, sum(y for _, y in points) / n
    var = sum((x - mx) ** 2 for x, _ in points)
    return 0.0 if var == 0 else sum((x - mx) * (y - my) for x, y in points) / var * 3600


class Served:
    """``worldforge serve <args> --port P`` in its own session (setsid) on 127.0.0.1, stopped by PID."""

    def __init__(self, args: list[str], log: Path, ready_path: str = "/health", timeout: float = 120.0):
        import httpx

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        with log.open("wb") as err:
            self.proc = subprocess.Popen([*CLI, "serve", *args, "--host", "127.0.0.1", "--port", str(self.port)], cwd=ROOT,
                                         start_new_session=True, stdout=subprocess.DEVNULL, stderr=err)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise SystemExit(f"`worldforge serve {args[0]}` exited ({self.proc.returncode}):\n{log.read_text(errors='replace')[-3000:]}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(self.url + ready_path, timeout=2).status_code == 200:
                    return
            time.sleep(0.3)
        self.stop()
        raise SystemExit(f"`worldforge serve {args[0]}` did not answer within {timeout:.0f} s")

    def stop(self) -> None:
        """SIGTERM to its process group, SIGKILL after 20 s; reaped."""
        if self.proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(5)


@dataclass
class Traffic:
    """What the clients did, counted as they go (one event loop: no lock needed)."""

    requests: Counter = field(default_factory=Counter)  # kind -> requests answered
    status5xx: int = 0
    failed: int = 0  # no answer (connection error, timeout)
    errors: Counter = field(default_factory=Counter)  # kind -> unexpected non-5xx status
    http_episodes: set[str] = field(default_factory=set)  # HTTP session ids with at least one step answered
    mcp_episodes: int = 0  # MCP sessions with at least one call answered
    opened: int = 0
    expiring: int = 0  # sessions left open to expire (HTTP and MCP)

    def hook(self, status: int) -> None:
        if status >= 500:
            self.status5xx += 1


async def http_cycle(c, plan, tasks: list[str], t: Traffic, rng: random.Random, n: int) -> None:
    """One HTTP session of ``n``: steps, a submit on a task session, then a close (or left to expire, one in four)."""
    body = {"task_id": tasks[n % len(tasks)]} if tasks and n % 2 == 0 else {}
    r = await c.post("/sessions", json=body)
    t.requests["open"] += 1
    if r.status_code != 201:
        t.errors[f"open {r.status_code}"] += 1
        return
    sid, urls = r.json()["session_id"], []
    t.opened += 1
    for i in range(rng.randint(2, 6)):
        tool, args = plan.call(n, i, urls)
        r = await c.post(f"/sessions/{sid}/step", json={"name": tool, "arguments": args})
        t.requests["step"] += 1
        if r.status_code != 200:
            t.errors[f"step {r.status_code}"] += 1
            continue
        t.http_episodes.add(sid)
        if tool == "web_search":
            urls = URL_LINE.findall(r.json()["observation"]) or urls
    if "task_id" in body:
        r = await c.post(f"/sessions/{sid}/submit", json={"answer": "| a |\n|---|\n| b |"})
        t.requests["submit"] += 1
        if r.status_code != 200:
            t.errors[f"submit {r.status_code}"] += 1
    if n % 4 == 3:
        t.expiring += 1
        return  # left to expire
    r = await c.delete(f"/sessions/{sid}")
    t.requests["close"] += 1
    if r.status_code != 204:
        t.errors[f"close {r.status_code}"] += 1


async def batch_cycle(c, plan, t: Traffic, n: int) -> None:
    """One ``/batch``: open, then (in a second batch) two steps and the close."""
    r = await c.post("/batch", json={"calls": [{"op": "open"}]})
    t.requests["batch"] += 1
    if r.status_code != 200 or r.json()["results"][0]["status"] != 201:
        t.errors[f"batch open {r.status_code}"] += 1
        return
    sid = r.json()["results"][0]["session_id"]
    t.opened += 1
    calls = [{"op": "step", "session_id": sid, "tool_call": {"name": "web_search", "arguments": {"query": plan.query(n, i)}}} for i in range(2)]
    r = await c.post("/batch", json={"calls": [*calls, {"op": "close", "session_id": sid}]})
    t.requests["batch"] += 1
    results = r.json()["results"] if r.status_code == 200 else []
    if [x["status"] for x in results] != [200, 200, 204]:
        t.errors[f"batch {r.status_code} {[x.get('status') for x in results]}"] += 1
    if any(x["status"] == 200 for x in results):
        t.http_episodes.add(sid)


async def mcp_cycle(url: str, plan, t: Traffic, n: int) -> None:
    """One MCP session (legacy: initialize, calls, the client's DELETE), and one stateless call left to expire."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def count(response) -> None:
        t.hook(response.status_code)

    async with httpx2.AsyncClient(timeout=httpx2.Timeout(60.0, read=120.0), event_hooks={"response": [count]}) as http:
        answered = 0
        try:
            async with Client(streamable_http_client(url + "/mcp", http_client=http), mode="legacy") as client:
                urls: list[str] = []
                for i in range(3):
                    tool, args = plan.call(n, i, urls)
                    result = await client.call_tool(tool, args)
                    t.requests["mcp call"] += 1
                    answered += 1
                    if tool == "web_search" and not result.is_error and result.content:
                        urls = URL_LINE.findall(result.content[0].text) or urls
        except Exception as exc:  # noqa: BLE001 - counted, the soak goes on
            t.failed += 1
            t.errors[f"mcp {type(exc).__name__}"] += 1
        t.opened += 1
        t.mcp_episodes += answered > 0
        try:
            async with Client(streamable_http_client(url + "/mcp", http_client=http)) as stateless:
                await stateless.call_tool("web_search", {"query": plan.query(n, 9), "session_id": f"soak-stateless-{n}"})
                t.requests["mcp stateless"] += 1
                t.opened += 1
                t.mcp_episodes += 1
                t.expiring += 1
        except Exception as exc:  # noqa: BLE001
            t.failed += 1
            t.errors[f"mcp stateless {type(exc).__name__}"] += 1


async def retrieve_cycle(c, plan, t: Traffic, n: int) -> None:
    """One Search-R1 ``/retrieve`` batch of four queries, top 3."""
    r = await c.post("/retrieve", json={"queries": [plan.query(n, i) for i in range(4)], "topk": 3, "return_scores": True})
    t.requests["retrieve"] += 1
    if r.status_code != 200 or len(r.json()["result"]) != 4:
        t.errors[f"retrieve {r.status_code}"] += 1


async def client(worker: int, search_url: str, retrieve_url: str, plan, tasks: list[str], t: Traffic, until: float, pause: float) -> None:
    """One client looping over the mixed cycle until ``until`` (monotonic seconds)."""
    import httpx

    async def count(response) -> None:
        t.hook(response.status_code)

    rng = random.Random(worker)
    hooks = {"response": [count]}
    async with httpx.AsyncClient(base_url=search_url, timeout=120, event_hooks=hooks) as c, \
            httpx.AsyncClient(base_url=retrieve_url, timeout=120, event_hooks=hooks) as r:
        n = worker * 1_000_000
        while time.monotonic() < until:
            n += 1
            for step in (lambda: http_cycle(c, plan, tasks, t, rng, n), lambda: batch_cycle(c, plan, t, n),
                         lambda: mcp_cycle(search_url, plan, t, n), lambda: retrieve_cycle(r, plan, t, n)):
                try:
                    await step()
                except (httpx.HTTPError, ValueError, KeyError) as exc:
                    t.failed += 1
                    t.errors[type(exc).__name__] += 1
            await asyncio.sleep(pause)


@dataclass
class Sample:
    """One reading: seconds since the start, per server ``(RSS MiB, fds, threads)``, and the counts so far."""

    at: float
    search: tuple[float, int, int]
    retrieve: tuple[float, int, int]
    opened: int
    stored: int
    status5xx: int


def stored_episodes(wh: Path) -> tuple[set[str], int]:
    """The HTTP episode ids in the store and the count of MCP ones (the episode log drained first)."""
    import polars as pl

    from worldforge.trajectories.episodes import read_episodes

    eps = read_episodes(Warehouse(wh))
    if eps.height == 0:
        return set(), 0
    return set(eps.filter(pl.col("agent") == "http")["episode_id"].to_list()), eps.filter(pl.col("agent") == "mcp").height


def build_source(world: str) -> tempfile.TemporaryDirectory:
    """A temporary warehouse with ``world`` run end to end (world, corpus, index, tasks)."""
    tmp = tempfile.TemporaryDirectory(prefix="worldforge-soak-src-")
    subprocess.run([*CLI, "world", "run", str(ROOT / "world_specs" / f"{world}.yaml"), "--warehouse", tmp.name], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return tmp


class CatalogBeside(threading.Thread):
    """``worldforge catalog build`` of ``n`` generated worlds in a second warehouse, again every ``every_s`` seconds
    (new specs each time) until stopped; each build's exit status, wall time and whether the bench stopped it kept."""

    def __init__(self, root: Path, n: int, every_s: float, until: float):
        super().__init__(daemon=True)
        self.root, self.n, self.every_s, self.until = root, n, every_s, until
        self.builds: list[tuple[int, float, bool]] = []  # (exit status, seconds, stopped by the bench)
        self.proc: subprocess.Popen | None = None
        self.stopping = threading.Event()
        self.lock = threading.Lock()  # a build starts only while not stopping; stop() sees every build started
        self.stopped: set[int] = set()  # pids of the builds stop() sent SIGTERM

    def run(self) -> None:
        from worldforge.catalog.generate import generate_catalog

        round_ = 0
        while not self.stopping.is_set():
            specs = self.root / f"specs-{round_}"
            generate_catalog(self.n, 100 + round_, specs)
            start = time.monotonic()
            with self.lock:
                if self.stopping.is_set():
                    return
                proc = self.proc = subprocess.Popen([*CLI, "catalog", "build", str(specs), "--warehouse", str(self.root / "wh"),
                                                     "--workers", "1"], cwd=ROOT, start_new_session=True,
                                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            rc = proc.wait()
            with self.lock:
                self.builds.append((rc, time.monotonic() - start, proc.pid in self.stopped))
            round_ += 1
            if self.stopping.wait(self.every_s) or time.monotonic() + 60 > self.until:
                return

    def stop(self, grace: float = 0.0) -> None:
        """No build starts after this; the one in flight gets ``grace`` seconds to finish on its own, then SIGTERM
        (its result is then kept as stopped by the bench, not as a failed build)."""
        with self.lock:
            self.stopping.set()
            proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(grace)
        with self.lock:
            if proc.poll() is not None:
                return
            self.stopped.add(proc.pid)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minutes", type=float, default=120.0)
    ap.add_argument("--sample-s", type=float, default=60.0)
    ap.add_argument("--workers", type=int, default=3, help="clients looping over the mixed cycle")
    ap.add_argument("--pause", type=float, default=0.2, help="seconds each client waits between cycles")
    ap.add_argument("--idle-timeout", type=float, default=5.0, help="the servers' session idle timeout (s)")
    ap.add_argument("--world", default="esports_2031")
    ap.add_argument("--warehouse", help="a warehouse holding the world (default: run it end to end in a temporary one)")
    ap.add_argument("--catalog-worlds", type=int, default=2)
    ap.add_argument("--catalog-every", type=float, default=30.0, help="minutes between catalog builds")
    ap.add_argument("--max-rss-slope", type=float, default=10.0, help="MiB/hour the search server's RSS may grow (long runs)")
    ap.add_argument("--short", action="store_true", help="about 75 s, samples every 10 s (make test); the RSS slope is not judged")
    args = ap.parse_args()
    if args.short:
        args.minutes, args.sample_s, args.workers, args.idle_timeout = 1.25, 10.0, 2, 3.0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # the servers are stopped on a kill too

    from rich.console import Console
    from rich.table import Table

    console, started = Console(width=140), time.monotonic()
    source_tmp = None
    if args.warehouse is None:
        source_tmp = build_source(args.world)
        args.warehouse = source_tmp.name
    source = Path(args.warehouse)
    if not Warehouse(source).world(args.world).is_file():
        sys.exit(f"{Warehouse(source).world(args.world)} not found (pass --warehouse DIR holding the world)")
    plan = load_plan(Warehouse(source).world(args.world))
    from worldforge.rl.env import world_tasks

    tasks = sorted(world_tasks(args.world, Warehouse(source)))[:20]
    with tempfile.TemporaryDirectory(prefix="worldforge-soak-") as tmp:
        wh = Path(tmp) / "warehouse"
        wh.mkdir()
        copy_world(source, args.world, wh)
        servers: list[Served] = []
        t, samples = Traffic(), []
        catalog = CatalogBeside(Path(tmp) / "catalog", args.catalog_worlds, args.catalog_every * 60, time.monotonic() + args.minutes * 60)
        try:
            search = Served(["search", "--world", args.world, "--idle-timeout", str(args.idle_timeout), "--warehouse", str(wh)], Path(tmp) / "search.log")
            servers.append(search)
            retrieve = Served(["retrieve", "--world", args.world, "--warehouse", str(wh)], Path(tmp) / "retrieve.log")
            servers.append(retrieve)
            console.print(f"search pid {search.proc.pid} at {search.url}, retrieve pid {retrieve.proc.pid} at {retrieve.url}; "
                          f"{args.workers} clients for {args.minutes:g} min, a sample every {args.sample_s:g} s")
            catalog.start()
            t0 = time.monotonic()
            until = t0 + args.minutes * 60

            async def run() -> None:
                clients = [asyncio.create_task(client(w, search.url, retrieve.url, plan, tasks, t, until, args.pause)) for w in range(args.workers)]
                next_sample = time.monotonic()
                while not all(c.done() for c in clients):
                    if time.monotonic() >= next_sample:
                        stored = await asyncio.to_thread(stored_episodes, wh)
                        samples.append(Sample(time.monotonic() - t0, proc_figures(search.proc.pid), proc_figures(retrieve.proc.pid),
                                              t.opened, len(stored[0]) + stored[1], t.status5xx))
                        next_sample += args.sample_s
                    await asyncio.sleep(0.5)
                for c in clients:
                    c.result()  # a client's own bug is a traceback, not a quiet pass

            asyncio.run(run())
            # every session left open expires: the reaper runs every max(1, idle/2) s
            import httpx

            deadline, health = time.monotonic() + args.idle_timeout * 4 + 30, {}
            while time.monotonic() < deadline:
                health = httpx.get(search.url + "/health", timeout=10).json()
                if health["sessions"] == 0 and health["mcp_sessions"] == 0:
                    break
                time.sleep(1)
            stored = stored_episodes(wh)
            samples.append(Sample(time.monotonic() - t0, proc_figures(search.proc.pid), proc_figures(retrieve.proc.pid),
                                  t.opened, len(stored[0]) + stored[1], t.status5xx))
            catalog.stop(grace=CATALOG_GRACE_S)
            catalog.join(120)
            search_log = (Path(tmp) / "search.log").read_text(errors="replace")
        finally:
            catalog.stop()
            for s in servers:
                s.stop()
            if source_tmp is not None:
                source_tmp.cleanup()

    table = Table(title=f"soak: samples every {args.sample_s:g} s (search server | retrieve server)")
    for col in ("t s", "RSS MiB", "fds", "threads", "| RSS MiB", "fds", "threads", "sessions opened", "episodes stored", "5xx"):
        table.add_column(col, justify="right")
    for s in samples:
        table.add_row(f"{s.at:.0f}", f"{s.search[0]:.1f}", str(s.search[1]), str(s.search[2]), f"{s.retrieve[0]:.1f}", str(s.retrieve[1]),
                      str(s.retrieve[2]), f"{s.opened:,}", f"{s.stored:,}", str(s.status5xx))
    console.print(table)
    console.print("requests: " + ", ".join(f"{k} {v:,}" for k, v in sorted(t.requests.items())) + f"; left to expire {t.expiring:,}")
    if t.errors:
        console.print("unexpected answers: " + ", ".join(f"{k}: {v}" for k, v in t.errors.most_common(10)))

    half = [s for s in samples if s.at >= samples[-1].at / 2] or samples[-1:]
    slope = slope_per_hour([(s.at, s.search[0]) for s in half])
    r_slope = slope_per_hour([(s.at, s.retrieve[0]) for s in half])
    fd_drift, thread_drift = half[-1].search[1] - half[0].search[1], half[-1].search[2] - half[0].search[2]
    r_fd_drift = half[-1].retrieve[1] - half[0].retrieve[1]
    http_ids, mcp_stored = stored
    finished = [rc for rc, _, stopped in catalog.builds if not stopped]  # a build the bench stopped at the end is no failure
    builds_ok = bool(catalog.builds) and all(rc == 0 for rc in finished)
    drift_line = (f"fd drift over the second half: search {fd_drift:+d}, retrieve {r_fd_drift:+d} (at most {FD_DRIFT}); "
                  f"thread drift: search {thread_drift:+d} (at most {THREAD_DRIFT})")
    checks = [
        (t.status5xx == 0 and t.failed == 0 and not t.errors, f"0 5xx and every request answered as expected: {t.status5xx} 5xx, {t.failed} failed, "
                                                             f"{sum(t.errors.values())} unexpected"),
        (http_ids == t.http_episodes, f"HTTP episodes in = stored: {len(t.http_episodes):,} sessions with a step, {len(http_ids):,} stored, "
                                      f"{len(t.http_episodes - http_ids)} missing, {len(http_ids - t.http_episodes)} unknown"),
        (mcp_stored == t.mcp_episodes, f"MCP episodes in = stored: {t.mcp_episodes:,} sessions with a call, {mcp_stored:,} stored"),
        (health.get("sessions") == 0 and health.get("mcp_sessions") == 0,
         f"no session left open after the idle timeout: {health.get('sessions')} HTTP, {health.get('mcp_sessions')} MCP"),
        (builds_ok, f"catalog builds beside: {len(catalog.builds)}, each finished on its own exits 0: "
                    f"{', '.join(('stopped' if stopped else f'exit {rc}') + f' after {s:.0f} s' for rc, s, stopped in catalog.builds)}"),
        (not ("Traceback" in search_log), "no traceback in the search server's log"),
    ]
    rss_line = (f"RSS slope over the second half: search {slope:+.1f} MiB/h ({half[0].search[0]:.1f} -> {half[-1].search[0]:.1f} MiB), "
                f"retrieve {r_slope:+.1f} MiB/h")
    if args.short:
        console.print(f"INFO  {rss_line} (not judged in --short: 75 s measure the warm-up)")
        console.print(f"INFO  {drift_line} (not judged in --short: pools and connections grow with the load in the warm-up)")
    else:
        checks.append((slope <= args.max_rss_slope, f"{rss_line} (at most {args.max_rss_slope:g})"))
        checks.append((fd_drift <= FD_DRIFT and r_fd_drift <= FD_DRIFT and thread_drift <= THREAD_DRIFT, drift_line))
    for ok, line in checks:
        console.print(f"{'PASS' if ok else 'MISS'}  {line}")
    console.print(f"total {time.monotonic() - started:.0f} s")
    if not all(ok for ok, _ in checks):
        sys.exit(1)


if __name__ == "__main__":
    main()
