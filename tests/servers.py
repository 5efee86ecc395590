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
        deadline = time.monotonic() + startup_s
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.2)
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited at start-up: {log.read_text() if log is not None else ''}")
        self.stop()
        raise RuntimeError("server did not start")

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
