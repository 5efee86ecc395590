"""Benchmark: RL episodes through SearchWorldEnv, in-process and over HTTP, against the raw index query.

A scripted policy plays every episode the same way, so the figures measure the environment,
not a model: 4 ``web_search`` calls, 2 ``web_extractor`` calls on URLs it found, 1
``dict_memory`` call and a ``submit`` of a table that names two of the task's rows (scored
against the gold table) — 8 tool steps an episode. Tasks are drawn across every world of the
warehouse (their scenarios included), so worlds open lazily through the bounded caches.

* **in-process**: 64 :class:`~worldforge.rl.env.SearchWorldEnv` stepped round-robin (a
  vectorised rollout: each tick steps every environment once), episodes recorded to the episode
  log as in training (``record=True``).
* **floor**: the raw tantivy query (parse + top-10 + stored fields) of the same ``web_search``
  queries on the same indexes, timed in the same run; the ratio says what the environment adds.
* **HTTP**: a real ``worldforge serve search`` (setsid, stopped by PID) playing the same episodes
  two ways: 64 concurrent aiohttp sessions, a request per call (``/sessions``, ``/step``,
  ``/submit``, ``DELETE``); and a vectorised rollout of 64 sessions sending one ``POST /batch`` a
  tick with every session's next call. Each is timed after the in-process warm-up's 256 episodes
  (:data:`WARM`: the worlds open, the pages read dressed), with the server's CPU seconds per tool
  step against in-process; then the server is stopped and the episodes it stored are counted against the
  sessions it closed.
* **OpenEnv**: a real ``worldforge serve openenv`` and 64 concurrent ``SearchWorldClient`` WebSocket
  connections playing the same episodes, a message per call (the protocol has no batch), after
  the same warm-up.
* **/retrieve**: Search-R1's retrieval protocol on one world, the same batches of 64 queries
  answered in-process by ``Retriever`` (in a new process, as fresh as the server's) and over HTTP
  by a real ``worldforge serve retrieve``: each side warmed with the queries the in-process
  episodes sent, then timed on new ones.
* **memory**: 10,000 episodes in-process with the resident set size (RSS) sampled after 1,000
  and at the end: flat means the final RSS is within 1.10x of the first sample.

Episodes are recorded in a scratch warehouse (symbolic links to the worlds and their indexes),
never in yours. Targets: at least 1,000 tool steps/s in-process; memory flat over 10,000 episodes;
over HTTP (``/batch``, ``/retrieve``) and OpenEnv at least 0.5x the in-process rate measured in the same run,
0 5xx, and every closed session's episode stored (issue 31).

Usage: python bench/rl.py [--warehouse warehouse] [--episodes 10000] [--http-episodes 640]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from worldforge.corpus import open_index  # noqa: E402
from worldforge.errors import WarehouseError  # noqa: E402
from worldforge.net import free_port  # noqa: E402
from worldforge.rl import SearchWorldEnv, world_tasks  # noqa: E402
from worldforge.serving.episodes import world_names  # noqa: E402
from worldforge.settings import get_settings  # noqa: E402
from worldforge.tasks.scorer import render_markdown_table  # noqa: E402
from worldforge.warehouse import Warehouse  # noqa: E402

ENVS = 64
WARM = 256
"""Episodes of the warm-up before every timed run, in-process and on each server alike: it opens the worlds and
dresses the pages the episodes read (a page is rendered on first access), so no side is timed colder than another."""
WORDS = ("price", "release", "rank", "date", "launch", "total", "team", "model", "population", "wins")


def rss_mib() -> float:
    """The current resident set size (Linux /proc), MiB."""
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def scratch_warehouse(source: Path) -> Path:
    """A temporary warehouse whose worlds and indexes are links to ``source``'s."""
    tmp = Path(tempfile.mkdtemp(prefix="wf-bench-rl-"))
    for p in source.iterdir():
        if p.name.endswith((".duckdb", ".index")) and not p.name.startswith("episodes"):
            (tmp / p.name).symlink_to(p.resolve())
    return tmp


class Policy:
    """The scripted policy of one episode: a fixed plan of 8 tool calls built from the task."""

    def __init__(self, task, rng: random.Random):
        words = task.question.replace("*", " ").split()
        self.queries = [" ".join(rng.sample(words, min(3, len(words)))) + " " + rng.choice(WORDS) for _ in range(4)]
        gold = task.gold[:2]
        self.answer = render_markdown_table(task.required, gold)
        self.urls: list[str] = []

    def actions(self):
        for q in self.queries:
            yield "web_search", {"query": q}
        for i in range(2):
            yield "web_extractor", {"url": self.urls[i] if i < len(self.urls) else "https://example.invalid/missing"}
        yield "dict_memory", {"operation": "add", "dict": {"seen": len(self.urls)}}

    def observe(self, text: str) -> None:
        self.urls += [line.split(" ", 1)[1] for line in text.splitlines() if line.startswith("[") and "] http" in line][:2]


@contextlib.contextmanager
def served(*args: str, timeout: float = 120.0):
    """A real ``worldforge serve <args> --port P`` (setsid), ready on ``/health``: yields ``(port, pid)``;
    stopped by PID afterwards (SIGTERM: a search server closes its sessions and records them)."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "worldforge.cli", "serve", *args, "--port", str(port)],
                            cwd=ROOT, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        asyncio.run(wait_ready(port, timeout))
        yield port, proc.pid
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)


def episodes_in_process(wh: Path, tasks: list[tuple[str, object]], n: int, rss_at: int = 1000, seed: int = 0):
    """Play ``n`` episodes with 64 environments stepped round-robin.

    Returns:
        ``(seconds, tool steps, rewards, queries sent, rss samples {episodes: MiB})``.
    """
    rng = random.Random(seed)
    envs = [SearchWorldEnv(wh, agent="bench-rl") for _ in range(ENVS)]
    live: list[tuple[SearchWorldEnv, Policy, object] | None] = [None] * ENVS
    started = done = steps = 0
    rewards: list[float] = []
    queries: list[tuple[str, str | None, str]] = []
    rss = {}
    t0 = time.perf_counter()
    while done < n:
        for i, env in enumerate(envs):
            if live[i] is None:
                if started >= n:
                    continue
                world, task = tasks[started % len(tasks)]
                env.reset(world=world, task=task.instance_id, seed=started)
                policy = Policy(task, rng)
                live[i] = (env, policy, policy.actions())
                started += 1
            env, policy, plan = live[i]
            action = next(plan, None)
            if action is None:
                rewards.append(env.submit(policy.answer))
                steps += 1
                done += 1
                live[i] = None
                if done == rss_at:
                    rss[done] = rss_mib()
                continue
            name, args = action
            text = env.step(name, args).text
            steps += 1
            if name == "web_search":
                policy.observe(text)
                queries.append((env.session.world, env.session.scenario, args["query"]))
    rss[done] = rss_mib()
    return time.perf_counter() - t0, steps, rewards, queries, rss


def raw_floor(wh: Path, queries: list[tuple[str, str | None, str]]) -> float:
    """Seconds for the raw tantivy queries (parse + top-10 + stored url) of ``queries`` (world, scenario, query)."""
    opened = {(w, s): open_index(Warehouse(wh).world(w), s) for w, s in {(w, s) for w, s, _ in queries}}
    searchers = {key: i.searcher() for key, i in opened.items()}
    t0 = time.perf_counter()
    for w, s, q in queries:
        parsed, _ = opened[w, s].parse_query_lenient(q, ["title", "lead", "body"], field_boosts={"title": 2.0})
        [searchers[w, s].doc(a)["url"][0] for _, a in searchers[w, s].search(parsed, 10).hits]
    return time.perf_counter() - t0


async def wait_ready(port: int, timeout: float = 60.0) -> None:
    """Wait until the server at ``port`` answers ``/health`` (raises TimeoutError after ``timeout`` s)."""
    import aiohttp

    deadline = time.monotonic() + timeout
    async with aiohttp.ClientSession(f"http://127.0.0.1:{port}") as c:
        while True:
            try:
                async with c.get("/health") as r:
                    if r.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"the search server on port {port} did not answer /health in {timeout:.0f} s")
            await asyncio.sleep(0.2)


async def episodes_http(port: int, tasks: list[tuple[str, object]], n: int, seed: int = 0):
    """Play ``n`` episodes over HTTP with 64 concurrent sessions; returns ``(seconds, steps, rewards, 5xx)``."""
    import aiohttp

    rng = random.Random(seed)
    async with aiohttp.ClientSession(f"http://127.0.0.1:{port}", connector=aiohttp.TCPConnector(limit=ENVS)) as c:
        counter = iter(range(n))
        steps, rewards, errors = [0], [], [0]

        async def post(path: str, body: dict) -> dict:
            async with c.post(path, json=body) as r:
                errors[0] += r.status >= 500
                out = await r.json()
                if r.status >= 300:
                    raise RuntimeError(f"POST {path}: {r.status} {out}")
                return out

        async def worker() -> None:
            for k in counter:
                world, task = tasks[k % len(tasks)]
                policy = Policy(task, rng)
                sid = (await post("/sessions", {"world": world, "task_id": task.instance_id, "seed": k}))["session_id"]
                for name, args in policy.actions():
                    out = await post(f"/sessions/{sid}/step", {"name": name, "arguments": args})
                    steps[0] += 1
                    if name == "web_search":
                        policy.observe(out["observation"])
                rewards.append((await post(f"/sessions/{sid}/submit", {"answer": policy.answer}))["reward"])
                steps[0] += 1
                async with c.delete(f"/sessions/{sid}") as r:
                    errors[0] += r.status >= 500

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(ENVS)))
        return time.perf_counter() - t0, steps[0], rewards, errors[0]


async def episodes_http_batched(port: int, tasks: list[tuple[str, object]], n: int, seed: int = 0):
    """Play ``n`` episodes over HTTP as a vectorised rollout: 64 sessions, one ``POST /batch`` per tick
    carrying every session's next call (open, step, or submit and close), as :func:`episodes_in_process`
    steps its 64 environments. Returns ``(seconds, steps, rewards, 5xx, requests)``."""
    import aiohttp

    rng = random.Random(seed)
    async with aiohttp.ClientSession(f"http://127.0.0.1:{port}") as c:
        slots: list[list | None] = [None] * ENVS  # [session id, policy, plan, pending action]
        started = steps = requests = errors = 0
        rewards: list[float] = []
        t0 = time.perf_counter()
        while len(rewards) < n:
            calls, owners = [], []
            for i in range(ENVS):
                if slots[i] is None:
                    if started >= n:
                        continue
                    world, task = tasks[started % len(tasks)]
                    policy = Policy(task, rng)
                    slots[i] = [None, policy, policy.actions(), None]
                    calls.append({"op": "open", "world": world, "task_id": task.instance_id, "seed": started})
                    owners.append((i, "open"))
                    started += 1
                    continue
                sid, policy, plan, _ = slots[i]
                action = next(plan, None)
                if action is None:
                    calls += [{"op": "submit", "session_id": sid, "answer": policy.answer}, {"op": "close", "session_id": sid}]
                    owners += [(i, "submit"), (i, "close")]
                else:
                    slots[i][3] = action[0]
                    calls.append({"op": "step", "session_id": sid, "name": action[0], "arguments": action[1]})
                    owners.append((i, "step"))
            async with c.post("/batch", json={"calls": calls}) as r:
                requests += 1
                errors += r.status >= 500
                out = await r.json()
                if r.status != 200:
                    raise RuntimeError(f"POST /batch: {r.status} {out}")
            for (i, op), res in zip(owners, out["results"], strict=True):
                errors += res["status"] >= 500
                if res["status"] >= 300:
                    raise RuntimeError(f"{op} in a batch: {res}")
                if op == "open":
                    slots[i][0] = res["session_id"]
                elif op == "step":
                    steps += 1
                    if slots[i][3] == "web_search":
                        slots[i][1].observe(res["observation"])
                elif op == "submit":
                    steps += 1
                    rewards.append(res["reward"])
                else:
                    slots[i] = None
        return time.perf_counter() - t0, steps, rewards, errors, requests


async def episodes_openenv(port: int, tasks: list[tuple[str, object]], n: int, seed: int = 0):
    """Play ``n`` episodes through OpenEnv's WebSocket protocol: 64 concurrent :class:`SearchWorldClient`
    connections (one environment each, as OpenEnv trainers hold them), a message per call.
    Returns ``(seconds, steps, rewards)``."""
    from worldforge.rl.openenv import SearchAction, SearchWorldClient

    rng = random.Random(seed)
    counter = iter(range(n))
    steps, rewards = [0], []

    async def worker() -> None:
        client = SearchWorldClient(base_url=f"http://127.0.0.1:{port}")
        await client.connect()
        try:
            for k in counter:
                world, task = tasks[k % len(tasks)]
                policy = Policy(task, rng)
                await client.reset(world=world, task=task.instance_id, seed=k)
                for name, args in policy.actions():
                    out = await client.step(SearchAction(tool=name, arguments=args))
                    steps[0] += 1
                    if name == "web_search":
                        policy.observe(out.observation.text)
                result = await client.step(SearchAction(tool="submit", arguments={"answer": policy.answer}))
                steps[0] += 1
                rewards.append(result.reward)
        finally:
            await client.close()

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(ENVS)))
    return time.perf_counter() - t0, steps[0], rewards


def openenv_rate(wh: Path, tasks: list[tuple[str, object]], n: int) -> tuple[float, int, float, float]:
    """Tool steps/s of ``n`` episodes through a real ``worldforge serve openenv`` (after :data:`WARM`
    episodes, as in-process). Returns ``(steps/s, steps, server CPU ms a step, mean reward)``."""
    with served("openenv", "--warehouse", str(wh), "--max-sessions", str(ENVS)) as (port, pid):
        asyncio.run(episodes_openenv(port, tasks, WARM, seed=0))
        c0 = cpu_seconds(pid)
        dt, steps, rewards = asyncio.run(episodes_openenv(port, tasks, n, seed=1))
        c1 = cpu_seconds(pid)
    return steps / dt, steps, 1000 * (c1 - c0) / steps, sum(rewards) / max(1, len(rewards))


def retrieve_locally(wh: Path, world: str, warm: list[dict], batches: list[dict]) -> float:
    """Seconds for :class:`~worldforge.rl.retrieve.Retriever` to answer ``batches`` in this process, after ``warm``."""
    from worldforge.rl.retrieve import Retriever

    retriever = Retriever(world, wh)
    for body in warm:
        retriever.retrieve(retriever.request(body))
    t0 = time.perf_counter()
    for body in batches:
        retriever.retrieve(retriever.request(body))
    return time.perf_counter() - t0


def retrieve_rates(wh: Path, world: str, warm: list[str], queries: list[str], batch: int = ENVS) -> tuple[float, float, int, int, int]:
    """Search-R1's ``/retrieve`` on ``world``: the same batches of ``batch`` queries (topk 3, whole pages,
    as Search-R1's rollout sends every active trajectory's query at once) answered in-process by
    :class:`~worldforge.rl.retrieve.Retriever` (:func:`retrieve_locally`, in a new process, as fresh as the
    server's) and over HTTP by a real ``worldforge serve retrieve``, one batch after another. Each side first
    answers the ``warm`` queries (the pages they find are dressed and kept, as in a long-running server), then
    is timed on ``queries``, which neither has seen (a trainer's model writes new queries).
    Returns ``(in-process queries/s, HTTP queries/s, 5xx, queries, batch size)``."""
    import httpx

    def batched(qs: list[str]) -> list[dict]:
        return [{"queries": qs[i:i + batch], "topk": 3} for i in range(0, len(qs) - batch + 1, batch)]

    batch = min(batch, len(queries), len(warm))
    warm_batches, batches = batched(warm), batched(queries)
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as fresh:  # as fresh as the server's process
        seconds = fresh.submit(retrieve_locally, wh, world, warm_batches, batches).result()
    local = len(batches) * batch / seconds
    with served("retrieve", "--world", world, "--warehouse", str(wh)) as (port, _), httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as c:
        for body in warm_batches:
            c.post("/retrieve", json=body)
        errors, t0 = 0, time.perf_counter()
        for body in batches:
            r = c.post("/retrieve", json=body)
            errors += r.status_code >= 500
            if r.status_code != 200 or len(r.json()["result"]) != batch:
                raise RuntimeError(f"POST /retrieve: {r.status_code} {r.text[:200]}")
        remote = len(batches) * batch / (time.perf_counter() - t0)
    return local, remote, errors, len(batches) * batch, batch


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--warehouse", default=str(get_settings().warehouse))
    ap.add_argument("--episodes", type=int, default=10_000, help="in-process episodes (memory run; at least 2,000)")
    ap.add_argument("--http-episodes", type=int, default=640)
    ap.add_argument("--small", action="store_true", help="a check that the bench runs (make test): 2,000 episodes, 32 over HTTP")
    args = ap.parse_args()
    if args.small:
        args.episodes, args.http_episodes = 2000, 32
    if args.episodes < 2000:
        ap.error("--episodes must be at least 2,000 (RSS is compared after 1,000 and at the end)")
    source = Path(args.warehouse)
    tasks: list[tuple[str, object]] = []
    for w in sorted(world_names(Warehouse(source))):
        try:
            tasks += [(w, t) for _, t in sorted(world_tasks(w, Warehouse(source)).items())]
        except WarehouseError:  # a world without tasks: not part of the bench
            continue
    if not tasks:
        sys.exit(f"no world with tasks in {source}: run `make demo` first (or pass --warehouse)")
    random.Random(0).shuffle(tasks)
    wh = scratch_warehouse(source)
    print(f"{len(tasks)} tasks over {len({w for w, _ in tasks})} worlds; {ENVS} environments; scratch warehouse {wh}")
    try:
        episodes_in_process(wh, tasks, WARM, rss_at=10**9)  # warm: every world's caches open
        cpu0 = resource.getrusage(resource.RUSAGE_SELF)
        dt, steps, rewards, queries, _ = episodes_in_process(wh, tasks, 1000, rss_at=10**9, seed=1)
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
        env_cpu = cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime
        floor = raw_floor(wh, queries)
        env_rate, raw_rate = steps / dt, len(queries) / floor
        print(f"in-process: 1,000 episodes, {steps:,} tool steps in {dt:.2f} s = {1000 / dt:,.0f} episodes/s, {env_rate:,.0f} tool steps/s "
              f"(mean reward {sum(rewards) / len(rewards):.3f})   [target: >= 1,000 tool steps/s]")
        print(f"raw tantivy query (floor): {len(queries):,} queries in {floor:.2f} s = {raw_rate:,.0f} q/s; "
              f"environment tool steps/s / raw q/s = {env_rate / raw_rate:.2f}x")

        with served("search", "--world", tasks[0][0], "--warehouse", str(wh)) as (port, pid):  # stopped: its sessions are recorded
            warm = asyncio.run(episodes_http_batched(port, tasks, WARM, seed=0))  # the server's warm-up, as the in-process one
            c0 = cpu_seconds(pid)
            hdt, hsteps, hrewards, h5xx = asyncio.run(episodes_http(port, tasks, args.http_episodes, seed=1))
            c1 = cpu_seconds(pid)
            bdt, bsteps, brewards, b5xx, breqs = asyncio.run(episodes_http_batched(port, tasks, args.http_episodes, seed=1))
            c2 = cpu_seconds(pid)
        from worldforge.trajectories.episodes import read_episodes

        closed = len(warm[2]) + len(hrewards) + len(brewards)
        stored = int((read_episodes(Warehouse(wh))["agent"] == "http").sum())
        rate, brate = hsteps / hdt, bsteps / bdt
        print(f"HTTP, a request per call: {len(hrewards)} episodes, {hsteps:,} tool steps in {hdt:.2f} s = {rate:,.0f} tool steps/s; "
              f"HTTP / in-process = {rate / env_rate:.2f}x; server CPU {1000 * (c1 - c0) / hsteps:.2f} ms a step "
              f"(in-process {1000 * env_cpu / steps:.2f}); 5xx: {h5xx}; mean reward {sum(hrewards) / max(1, len(hrewards)):.3f}")
        print(f"HTTP, a /batch per tick of {ENVS} sessions: {len(brewards)} episodes, {bsteps:,} tool steps in {bdt:.2f} s over {breqs:,} requests = "
              f"{brate:,.0f} tool steps/s; HTTP / in-process = {brate / env_rate:.2f}x   [target: >= 0.50x]; server CPU "
              f"{1000 * (c2 - c1) / bsteps:.2f} ms a step; 5xx: {b5xx}; mean reward {sum(brewards) / max(1, len(brewards)):.3f}")
        print(f"HTTP episodes: {closed:,} sessions closed, {stored:,} episodes stored (agent http)   [target: equal]")

        orate, osteps, ocpu, oreward = openenv_rate(wh, tasks, args.http_episodes)
        print(f"OpenEnv, a WebSocket message per call ({ENVS} connections): {osteps:,} tool steps = {orate:,.0f} tool steps/s; "
              f"OpenEnv / in-process = {orate / env_rate:.2f}x   [target: >= 0.50x]; server CPU {ocpu:.2f} ms a step; mean reward {oreward:.3f}")

        from collections import Counter

        world = Counter(w for w, sc, _ in queries if sc is None).most_common(1)[0][0]  # the world searched most
        asked = [q for w, sc, q in queries if w == world and sc is None]
        if not asked:
            sys.exit(f"no search of {world}'s own corpus in the in-process run: nothing to retrieve")
        rng, seen, fresh = random.Random(3), set(asked), []
        own = [t for w, t in tasks if w == world]
        for k in range(100 * len(asked)):  # queries no side has answered: new words of the same tasks
            fresh += [q for q in Policy(own[k % len(own)], rng).queries if q not in seen]
            if len(fresh) >= len(asked):
                break
        if not fresh:
            sys.exit(f"no query of {world}'s tasks that the episodes did not send: nothing new to retrieve")
        local, remote, r5xx, answered, size = retrieve_rates(wh, world, asked, fresh)
        print(f"Search-R1 /retrieve ({world}, {answered:,} queries in batches of {size}, top 3 whole pages): in-process "
              f"{local:,.0f} queries/s, HTTP {remote:,.0f} queries/s; HTTP / in-process = {remote / local:.2f}x   [target: >= 0.50x]; 5xx: {r5xx}")

        mdt, msteps, mrewards, _, rss = episodes_in_process(wh, tasks, args.episodes, seed=2)
        first, last = rss[min(rss)], rss[max(rss)]
        print(f"memory: {args.episodes:,} episodes ({msteps:,} tool steps, {args.episodes / mdt:,.0f} episodes/s) — RSS {first:,.0f} MiB after "
              f"{min(rss):,}, {last:,.0f} MiB after {max(rss):,}: {last / first:.2f}x   [target: <= 1.10x]; "
              f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MiB")
        ok = env_rate >= 1000 and last / first <= 1.10 and h5xx == 0 and b5xx == 0 and brate >= 0.5 * env_rate and stored == closed and remote >= 0.5 * local and r5xx == 0 and orate >= 0.5 * env_rate
        print("PASS" if ok else "MISS")
    finally:
        shutil.rmtree(wh, ignore_errors=True)


if __name__ == "__main__":
    main()
