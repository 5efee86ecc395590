"""Faults between worldforge and a real vLLM server: nothing is lost, nothing is generated twice."""

import json
import time

import pytest

from tests.conftest import TRAJECTORIES
from tests.llm.proxy import FaultProxy
from worldforge.agentworldbench.infer import infer_file
from worldforge.agentworldbench.records import records_from_turns, write_records
from worldforge.llm import BackendError, GenerationParams, OpenAIBackend
from worldforge.net import free_port
from worldforge.trajectories.model import Trajectory
from worldforge.trajectories.readers import read_path

pytestmark = pytest.mark.vllm

PARAMS = GenerationParams(max_tokens=8, temperature=0.8, seed=1)


@pytest.fixture(scope="module")
def awb_file(tmp_path_factory):
    """An AgentWorldBench file built from real ToolBench and τ-bench trajectories (24 records)."""
    records = []
    for t in read_path([TRAJECTORIES / "toolbench", TRAJECTORIES / "tau-bench"]):
        if isinstance(t, Trajectory) and 2 <= len(t.turns) <= 4:
            records += records_from_turns(t.trajectory_id, t.domain, t.task[:500], [(x.action[:400], x.observation[:400]) for x in t.turns])
        if len(records) >= 24:
            break
    return write_records(tmp_path_factory.mktemp("awb") / "tool_test.jsonl", records[:24])


def test_an_unreachable_server_is_a_clear_error():
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(BackendError, match=f"cannot reach the world-model server at {url}"):
        OpenAIBackend(base_url=url, max_retries=0).load()


def test_a_model_the_server_lacks_is_a_clear_error(vllm_server):
    with pytest.raises(BackendError, match="does not serve 'nope'"):
        OpenAIBackend(base_url=vllm_server.base_url, model="nope").load()


def test_5xx_and_429_are_retried_until_they_pass(vllm_server, awb_file, tmp_path):
    for status in (500, 429):
        with FaultProxy(vllm_server.base_url, fail_first=5, status=status) as proxy:
            b = OpenAIBackend(base_url=proxy.base_url, max_retries=3, concurrency=4)
            report = infer_file(awb_file, tmp_path / f"out{status}.jsonl", b, PARAMS)
        assert report.tally.balanced and report.tally.dropped.get(f"HTTP {status}", 0) == 0
        assert proxy.injected == 5 and proxy.seen == report.tally.inputs + 5  # each injected fault was retried once


def test_persistent_errors_and_timeouts_are_recorded_with_reasons(vllm_server, awb_file, tmp_path):
    with FaultProxy(vllm_server.base_url, fail_first=10_000, status=503) as proxy:
        report = infer_file(awb_file, tmp_path / "o.jsonl", OpenAIBackend(base_url=proxy.base_url, max_retries=1), PARAMS)
    assert report.tally.kept == 0 and report.tally.dropped == {"HTTP 503": report.tally.inputs} and proxy.seen == 2 * report.tally.inputs
    rows = [json.loads(x) for x in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert len(rows) == report.tally.inputs and all(r["status"] == "failed" and r["reason"].startswith("HTTP 503") for r in rows)
    with FaultProxy(vllm_server.base_url, delay_s=3) as proxy:
        t0 = time.monotonic()
        report = infer_file(awb_file, tmp_path / "t.jsonl", OpenAIBackend(base_url=proxy.base_url, max_retries=0, timeout_s=0.5, concurrency=24), PARAMS)
    assert report.tally.dropped == {"timeout": report.tally.inputs} and time.monotonic() - t0 < 30


def test_a_server_lost_mid_batch_resumes_from_the_cache_without_generating_twice(vllm_server, awb_file, tmp_path):
    out, cache = tmp_path / "pred.jsonl", tmp_path / "cache.sqlite"
    before = vllm_server.metrics().get("vllm:request_success_total", 0)
    with FaultProxy(vllm_server.base_url, die_after=9) as proxy:
        first = infer_file(awb_file, out, OpenAIBackend(base_url=proxy.base_url, max_retries=1, concurrency=1), PARAMS, cache)
    # 9 replies came back (a random model's replies have no tags: parse failures, but generated);
    # the other 15 requests lost their server: recorded as connection errors (a dropped
    # connection can surface as either, depending on the HTTP transport)
    lost = first.tally.dropped["connection error"] + first.tally.dropped["timeout"]
    assert first.tally.balanced and first.generated == 9 and lost == first.tally.inputs - 9
    with FaultProxy(vllm_server.base_url) as proxy:
        second = infer_file(awb_file, out, OpenAIBackend(base_url=proxy.base_url, concurrency=8), PARAMS, cache)
    assert second.tally.balanced and second.cached == 9 and second.generated == second.tally.inputs - 9
    assert proxy.seen == second.tally.inputs - 9  # only the missing requests went out
    served = vllm_server.metrics()["vllm:request_success_total"] - before
    assert served == second.tally.inputs  # every request generated exactly once over both runs
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["line"] for r in rows] == list(range(1, second.tally.inputs + 1))


def test_tagless_and_truncated_replies_are_recorded_failures(vllm_server, awb_file, tmp_path):
    report = infer_file(awb_file, tmp_path / "p.jsonl", OpenAIBackend(base_url=vllm_server.base_url), PARAMS)
    # a random model writes no tags: every line is a parse failure with its reason, none lost
    assert report.tally.balanced and report.tally.kept + report.tally.dropped_total == report.tally.inputs
    assert set(report.tally.dropped) <= {"missing <predicted_observation> tag", "unclosed <predicted_observation> tag", "empty reply"}
    rows = [json.loads(x) for x in (tmp_path / "p.jsonl").read_text().splitlines()]
    assert all("gen" in r and r["finish_reason"] in ("length", "stop") for r in rows if r["status"] == "failed")
