"""Benchmark: the worldforge modules one agent step passes through, per entry point (HTTP, MCP, verifiers).

What it measures: a real search server (``create_app``, served by uvicorn in a thread of this
process) and the ``verifiers`` tool server (``WorldToolset``, in-process in the verifiers venv) answer
one ``web_search`` step of an episode that is already open. A profiler (``threading.setprofile``)
notes the module of every Python function called on the serving threads while that step is in
flight, and the figure is the number of distinct ``worldforge.*`` modules among them: how many
files a maintainer reads to follow a step. Each step is measured three times (:data:`RUNS`) and the figure is
the intersection (a background flush that ran during one of them does not count).

It runs against whatever checkout it lives in, so the same file measures an older commit (copy it
into a worktree of that commit; the imports it needs are tried in both layouts) and prints the
figures beside the baseline given with ``--baseline`` (a JSON file an earlier run wrote with
``--json``), with their ratio.

Usage: python bench/step_path.py --warehouse WH [--world esports_2031] [--json OUT] [--baseline OLD.json] [--small]
(the verifiers figure needs ``.venv-verifiers``: ``make verifiers``; it is skipped with a line otherwise)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from worldforge.net import free_port  # noqa: E402

_SEEN: set[str] = set()
_ON = threading.Event()


def _profile(frame, event, arg):  # noqa: ANN001 - the profiler's signature
    if event == "call" and _ON.is_set():
        name = frame.f_globals.get("__name__", "")
        if name.startswith("worldforge"):
            _SEEN.add(name)


RUNS = 3
"""Steps measured per entry point; a module counts when every one of them ran it."""


@contextlib.contextmanager
def _recording() -> Iterator[None]:
    """Note the worldforge modules called on the profiled threads for the block (into :data:`_SEEN`)."""
    _SEEN.clear()
    _ON.set()
    try:
        yield
    finally:
        _ON.clear()


def _measure(call) -> list[str]:
    """The worldforge modules seen while ``call()`` runs, intersected over :data:`RUNS` runs."""
    runs = []
    for _ in range(RUNS):
        with _recording():
            call()
        runs.append(set(_SEEN))
    return sorted(set.intersection(*runs))


def _create_app():
    try:
        from worldforge.serving.search import create_app
    except ImportError:  # the layout before the episode service
        from worldforge.simenv.server import create_app  # type: ignore[no-redef]
    return create_app


def _serve(world: str, warehouse: Path):
    """A real server in a thread of this process (profiled from its start); returns ``(url, stop)``."""
    import uvicorn

    threading.setprofile(_profile)
    app = _create_app()(world, warehouse, record=False)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)

    def stop() -> None:
        server.should_exit = True
        thread.join(30)
        threading.setprofile(None)  # type: ignore[arg-type]

    return f"http://127.0.0.1:{port}", stop


def http_and_mcp(world: str, warehouse: Path) -> dict[str, list[str]]:
    """The modules of one HTTP ``/step`` and of one MCP ``tools/call`` on open sessions."""
    import httpx

    url, stop = _serve(world, warehouse)
    try:
        with httpx.Client(base_url=url, timeout=60) as c:
            sid = c.post("/sessions", json={"world": world}).json()["session_id"]
            body = {"name": "web_search", "arguments": {"query": "tournament prize pool"}}
            c.post(f"/sessions/{sid}/step", json=body)  # warm: the world and its index open
            http = _measure(lambda: c.post(f"/sessions/{sid}/step", json=body).raise_for_status())
        mcp = asyncio.run(_mcp(url))
    finally:
        stop()
    return {"http": http, "mcp": mcp}


async def _mcp(url: str) -> list[str]:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with Client(streamable_http_client(url + "/mcp"), mode="legacy") as client:
        await client.call_tool("web_search", {"query": "tournament prize pool"})  # the session's episode opens
        runs = []
        for _ in range(RUNS):  # as _measure, each call awaited on this loop (the server runs in its own thread)
            with _recording():
                await client.call_tool("web_search", {"query": "tournament prize pool"})
            runs.append(set(_SEEN))
        return sorted(set.intersection(*runs))


def verifiers_step(world: str, warehouse: Path) -> list[str]:
    """The modules of one ``verifiers`` tool call on an open rollout (run in the verifiers venv)."""
    from worldforge.rl.env import world_tasks
    from worldforge.rl.verifiers import EpisodeState, WorldToolset, WorldToolsetConfig
    from worldforge.warehouse.layout import Warehouse

    task = sorted(world_tasks(world, Warehouse.of(warehouse)))[0]
    toolset = WorldToolset(WorldToolsetConfig(warehouse=str(warehouse)))

    loop = asyncio.new_event_loop()
    loop.run_until_complete(toolset.setup())
    state = EpisodeState(session="bench", world=world, task=task)
    args = {"query": "tournament prize pool"}
    toolset.answer(state, "web_search", args)  # the rollout's episode opens
    sys.setprofile(_profile)
    try:
        return _measure(lambda: toolset.answer(state, "web_search", args))
    finally:
        sys.setprofile(None)
        loop.close()


def main() -> int:
    """Print the figures (and, with ``--baseline``, the ratio against it); 0 always (a measure, not a target)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--warehouse", type=Path, required=True)
    ap.add_argument("--world", default="esports_2031")
    ap.add_argument("--json", type=Path, help="write the figures and module lists here")
    ap.add_argument("--baseline", type=Path, help="an earlier run's --json, printed beside this one")
    ap.add_argument("--small", action="store_true", help="the same measure (it is small already); for the bench test")
    ap.add_argument("--verifiers-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    wh = args.warehouse.resolve()
    if args.verifiers_only:
        print(json.dumps(verifiers_step(args.world, wh)))
        return 0
    figures = http_and_mcp(args.world, wh)
    vf_python = ROOT / ".venv-verifiers" / "bin" / "python"
    if vf_python.exists():
        out = subprocess.run([str(vf_python), __file__, "--warehouse", str(wh), "--world", args.world, "--verifiers-only"],
                             capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=600)
        if out.returncode == 0:
            figures["verifiers"] = json.loads(out.stdout.strip().splitlines()[-1])
        else:
            print(f"verifiers: not measured ({out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode})")
    else:
        print("verifiers: not measured (no .venv-verifiers here: `make verifiers`)")
    base = json.loads(args.baseline.read_text()) if args.baseline else {}
    print(f"{'entry point':<12} {'modules':>8}" + (f" {'baseline':>9} {'ratio':>6}" if base else ""))
    for kind, modules in figures.items():
        line = f"{kind:<12} {len(modules):>8}"
        if kind in base:
            line += f" {len(base[kind]):>9} {len(modules) / max(1, len(base[kind])):>6.2f}"
        print(line)
        print("  " + ", ".join(m.removeprefix("worldforge.") for m in modules))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
