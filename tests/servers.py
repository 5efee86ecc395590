"""A ``worldforge serve ...`` command started for real on loopback for a test (setsid), stopped by PID."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from tests.conftest import ROOT
from worldforge.net import free_port


def wait_http(url: str, timeout_s: float, proc: subprocess.Popen | None = None, interval_s: float = 0.5) -> str | None:
    """Poll ``GET url`` until it answers 200: ``None`` then, else why not (``proc`` exited, or no answer in
    ``timeout_s``). The readiness wait of every server a test starts (worldforge, ``dagster dev``, Ray's job server)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            return f"exited with {proc.returncode}"
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return None
        except httpx.HTTPError:
            pass
        time.sleep(interval_s)
    return f"did not answer within {timeout_s:.0f} s"


class ProcessServer:
    """A server process started for real in its own session on a free 127.0.0.1 port.

    ``argv(port)`` gives its command line. Waits until ``GET /health`` answers 200 (``startup_s``
    at most); stderr goes to ``log`` (a file, never a pipe nobody reads) or nowhere. :meth:`stop`
    sends SIGTERM to the process group, SIGKILL if it lingers, and reaps it.

    Raises:
        RuntimeError: the server exited during start-up (with its stderr) or never answered.
    """

    def __init__(self, argv: Callable[[int], list[str]], log: Path | None = None, startup_s: float = 60.0):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        with open(log, "w") if log is not None else open(os.devnull, "w") as err:
            self.proc = subprocess.Popen(argv(self.port), cwd=ROOT, start_new_session=True, stdout=subprocess.DEVNULL, stderr=err)
        problem = wait_http(self.url + "/health", startup_s, self.proc, interval_s=0.2)
        if problem is None:
            return
        self.stop()
        raise RuntimeError(f"server {problem} at start-up: {log.read_text() if log is not None else ''}")

    def stop(self) -> None:
        """SIGTERM the server's process group (SIGKILL if it lingers) and reap it."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)


class CliServer(ProcessServer):
    """``worldforge serve <args> --port P`` as a :class:`ProcessServer`."""

    def __init__(self, *args: str, log: Path | None = None, startup_s: float = 60.0):
        super().__init__(lambda port: [sys.executable, "-m", "worldforge.cli", "serve", *args, "--port", str(port)], log, startup_s)


class SearchServer(CliServer):
    """``worldforge serve search`` of esports_2031 over ``warehouse`` (the simenv tests' server)."""

    def __init__(self, warehouse, idle_timeout=600.0, record=True):
        super().__init__("search", "--world", "esports_2031", "--idle-timeout", str(idle_timeout), "--warehouse", str(warehouse),
                         "--record" if record else "--no-record")

    def rss_mb(self) -> int:
        """The server's resident set size (Linux /proc), MiB."""
        with open(f"/proc/{self.proc.pid}/status") as fh:
            return int(next(line for line in fh if line.startswith("VmRSS")).split()[1]) // 1024
