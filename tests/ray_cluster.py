"""A real Ray head on 127.0.0.1 for a test (``ray start --head`` under setsid), stopped by PID afterwards.

``ray start`` launches the cluster's processes (GCS, raylet, the job server ...) and exits; they keep the
session it was started in, so every process of that session is the cluster, and stopping means
signalling exactly those PIDs (SIGTERM, then SIGKILL): nothing is left running, and no other Ray on
the machine is touched (``ray stop`` would stop every Ray of the user).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from worldforge.net import free_port

RAY = Path(sys.executable).parent / "ray"

PATIENT = {"RAY_py_gcs_connect_timeout_s": "300", "RAY_gcs_rpc_server_connect_timeout_s": "120",
           "RAY_gcs_rpc_server_reconnect_timeout_s": "300", "RAY_gcs_server_request_timeout_seconds": "300"}
"""Ray's timeouts for reaching its GCS, raised from seconds to minutes for the cluster and every driver: on two busy
cores the GCS can take longer than the default 30 s to answer, and ``ray start`` then failed with "Timed out while
waiting for GCS to become available" (a test that fails when the machine is busy is a bug). Each is a ``RAY_<name>``
override of Ray's config (``ray_config_def.h``)."""

AUTH = {"RAY_AUTH_MODE": "disabled", **PATIENT}
"""The test cluster's authentication, set for the cluster and every driver that joins it: explicit, so the
test does not depend on the user's ``~/.ray/auth_token`` (whose mere presence turns Ray's token
authentication on, and the job server then answers 401 to a client without it). The cluster listens on
127.0.0.1 only. With it, :data:`PATIENT`'s timeouts (the whole of what a cluster and its drivers are given)."""


def _session_pids(sid: int) -> list[int]:
    out = subprocess.run(["ps", "-eo", "pid=,sid="], capture_output=True, text=True, check=True).stdout
    return [int(p) for p, s in (line.split() for line in out.splitlines() if line.strip()) if int(s) == sid and int(p) != os.getpid()]


class RayHead:
    """``with RayHead() as head:`` a one-node cluster; ``head.address`` (GCS ``HOST:PORT``), ``head.jobs_url``
    (the job server, for dagster-ray's executor) and ``head.env`` (what a driver process needs)."""

    def __init__(self, num_cpus: int = 2, dashboard: bool = True):
        self.num_cpus, self.dashboard = num_cpus, dashboard
        self.port, self.dashboard_port = free_port(), free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.jobs_url = f"http://127.0.0.1:{self.dashboard_port}"
        self.temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # short: Ray's Unix sockets live under it (108-byte limit)
        self.sid: int | None = None

    @property
    def env(self) -> dict[str, str]:
        """The environment of a process that joins this cluster (and of nothing else)."""
        return {**os.environ, **AUTH, "RAY_ADDRESS": self.address, "RAY_USAGE_STATS_ENABLED": "0"}

    def __enter__(self) -> RayHead:
        argv = [str(RAY), "start", "--head", "--node-ip-address=127.0.0.1", f"--port={self.port}", f"--num-cpus={self.num_cpus}",
                "--object-store-memory=200000000", f"--temp-dir={self.temp}", "--disable-usage-stats",
                *(["--include-dashboard=true", "--dashboard-host=127.0.0.1", f"--dashboard-port={self.dashboard_port}"]
                  if self.dashboard else ["--include-dashboard=false"])]
        # the nodes run this environment: its python for workers, its `dagster` on PATH for the executor's step jobs
        env = {**os.environ, **AUTH, "RAY_USAGE_STATS_ENABLED": "0", "PATH": f"{RAY.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
        proc = subprocess.Popen(argv, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        self.sid = proc.pid
        out, _ = proc.communicate(timeout=180)
        if proc.returncode != 0:
            self.stop()
            raise RuntimeError(f"ray start failed ({proc.returncode}):\n{out[-3000:]}")
        if self.dashboard:
            self._wait_for_jobs()
        return self

    def _wait_for_jobs(self, timeout: float = 120.0) -> None:
        from tests.servers import wait_http

        problem = wait_http(f"{self.jobs_url}/api/version", timeout)
        if problem is not None:
            self.stop()
            raise RuntimeError(f"the Ray job server at {self.jobs_url} {problem}")

    def stop(self) -> None:
        """Signal every process of the cluster's session, SIGTERM then SIGKILL; remove its temp folder."""
        if self.sid is not None:
            for sig, grace in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
                pids = _session_pids(self.sid)
                for pid in pids:
                    try:
                        os.kill(pid, sig)
                    except ProcessLookupError:
                        pass
                end = time.monotonic() + grace
                while _session_pids(self.sid) and time.monotonic() < end:
                    time.sleep(0.2)
                if not _session_pids(self.sid):
                    break
        shutil.rmtree(self.temp, ignore_errors=True)

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def alive(self) -> list[int]:
        """PIDs of the cluster still running (empty once stopped)."""
        return _session_pids(self.sid) if self.sid is not None else []
