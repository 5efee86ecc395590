"""Shared fixtures for the dataset and evaluation tests (registered in tests/conftest.py): a warehouse
of real trajectories and a tokenizer trained here."""

from __future__ import annotations

import pytest

from tests.conftest import TRAJECTORIES

SOURCES = ("swe-agent", "intercode", "toolbench", "webvoyager")


@pytest.fixture(scope="session")
def traj_wh(tmp_path_factory):
    """A warehouse holding the real trajectories of four sources (ingested with their loss masks)."""
    from worldforge.trajectories.store import ingest
    from worldforge.warehouse import Warehouse

    wh = Warehouse(tmp_path_factory.mktemp("ds-wh"))
    report = ingest([TRAJECTORIES / s for s in SOURCES], wh)
    assert report.tally.balanced and report.tally.kept > 200
    return wh


@pytest.fixture(scope="session")
def tokenizer(tmp_path_factory) -> str:
    """A byte-level BPE tokenizer with a ChatML template (no hub download here)."""
    from worldforge.llm.tiny import build_tiny_tokenizer

    path = tmp_path_factory.mktemp("tok") / "tokenizer"
    build_tiny_tokenizer(path, vocab_size=2048)
    return str(path)


@pytest.fixture(scope="session")
def plain_tokenizer(tmp_path_factory, tokenizer) -> str:
    """The same tokenizer without a chat template."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tokenizer)
    tok.chat_template = None
    path = tmp_path_factory.mktemp("tok-plain") / "tokenizer"
    tok.save_pretrained(path)
    (path / "chat_template.jinja").unlink(missing_ok=True)
    return str(path)
