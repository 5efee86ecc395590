"""The SFT builder: the non-thinking variant, rejection sampling, the budget, every export shape."""

from __future__ import annotations

import json

import duckdb
import pyarrow.parquet as pq
import pytest

from worldforge.datasets.sft import SFTConfig, build_sft
from worldforge.llm.base import Completion, Failure, GenerationResult, WorldModelBackend, record
from worldforge.trajectories.model import DOMAINS
from worldforge.worldmodel.parsing import format_prediction, parse_prediction
from worldforge.worldmodel.prompts import system_prompt


class ScriptedWorldModel(WorldModelBackend):
    """A stand-in world model whose candidates are written by the test: for each request it
    proposes a wrong observation first, then (``right``) the real one, each with its own
    reasoning, so the test knows which candidate rejection sampling must keep. ``fail`` makes
    one request fail; ``untagged`` answers without tags."""

    kind = "scripted"
    model: str = "script"
    references: dict = {}
    right: bool = True
    untagged: bool = False
    fail: str = ""

    def _generate(self, requests, n, params, on_result):
        result = GenerationResult()
        for req in requests:
            if req.id == self.fail:
                record(result, req, Failure(request_id=req.id, reason="HTTP 500: scripted failure"), on_result)
                continue
            ref = self.references[req.id]
            texts = [format_prediction("Nothing happened. 42 errors in Zzyzx.", "a wrong guess")]
            texts += [format_prediction(ref, "the right reasoning") if self.right else format_prediction("no", "still wrong")] * (n - 1)
            if self.untagged:
                texts = ["I think the output is: " + ref] * n
            record(result, req, [Completion(request_id=req.id, index=i, text=t) for i, t in enumerate(texts)], on_result)
        return result


@pytest.fixture(scope="module")
def references(traj_wh) -> dict:
    con = duckdb.connect(str(traj_wh.trajectory_store), read_only=True)
    refs = {f"{t}:{i + 1}": o for t, i, o in con.execute("SELECT trajectory_id, turn_idx, observation FROM turns").fetchall()}
    con.close()
    return refs


def _lines(path):
    return [json.loads(x) for x in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def plain(traj_wh, tokenizer, tmp_path_factory):
    out = tmp_path_factory.mktemp("sft") / "sft"
    return out, build_sft(traj_wh, out, SFTConfig(tokenizer=tokenizer))


def test_without_a_backend_the_target_is_the_real_observation(plain, references):
    out, report = plain
    assert report.tally.balanced and report.tally.kept > 100 and report.stats["variant"] == "non-thinking"
    assert any("non-thinking variant" in n for n in report.notes)
    assert "non-thinking" in (out / "README.md").read_text()
    rows = pq.read_table(out / "sft.parquet").to_pylist()
    for r in rows[:200]:
        target = r["messages"][-1]
        assert target["role"] == "assistant"
        parsed = parse_prediction(target["content"])
        assert parsed.think is None and parsed.observation == references[r["sample_id"]].strip()
        assert r["messages"][0]["role"] == "system" and r["messages"][-2]["content"].startswith(f"### Turn {r['turn_idx']}\n")


def test_every_export_shape(plain):
    out, report = plain
    n = report.samples
    msgs, pc, swift, share = (_lines(out / f) for f in ("trl_messages.jsonl", "trl_prompt_completion.jsonl", "swift.jsonl", "sharegpt.jsonl"))
    assert len(msgs) == len(pc) == len(swift) == len(share) == n
    m, p, s, g = msgs[5], pc[5], swift[5], share[5]
    assert p["prompt"] + p["completion"] == m["messages"] and p["completion"][0]["role"] == "assistant"
    assistants = [x for x in s["messages"] if x["role"] == "assistant"]
    assert all(x["loss"] is False for x in assistants[:-1]) and "loss" not in assistants[-1]
    assert [c["loss"] for c in g["conversations"]] == [False] * (len(g["conversations"]) - 1) + [True]
    assert g["conversations"][-1] == {"from": "gpt", "value": m["messages"][-1]["content"], "loss": True}
    assert g["system"] == m["messages"][0]["content"]
    info = json.loads((out / "dataset_info.json").read_text())
    assert info["worldforge_sft"]["file_name"] == "sharegpt.jsonl" and info["worldforge_sft"]["formatting"] == "sharegpt"


def test_rejection_sampling_keeps_the_best_candidates_reasoning(traj_wh, tokenizer, tmp_path, references):
    backend = ScriptedWorldModel(references=references)
    # a budget with room for every sample: this test is about which candidate is kept, not about the budget
    report = build_sft(traj_wh, tmp_path / "sft", SFTConfig(tokenizer=tokenizer, k=3, max_context_tokens=16384), backend)
    assert report.tally.balanced and report.stats["variant"] == "thinking"
    rows = pq.read_table(tmp_path / "sft" / "sft.parquet").to_pylist()
    assert rows and all(r["candidates"] == 3 for r in rows)
    for r in rows[:100]:
        parsed = parse_prediction(r["messages"][-1]["content"])
        assert parsed.think == "the right reasoning"  # not the wrong guess's
        assert parsed.observation == references[r["sample_id"]].strip()
    by_verifier = report.stats["acceptance_by_verifier"]
    assert by_verifier["exact_match"]["scored"] == 3 * report.tally.kept + sum(v for k, v in report.tally.dropped.items() if k.startswith("rejected")) * 3
    assert 0.5 < by_verifier["exact_match"]["rate"] < 0.8  # 2 of 3 candidates are the real observation
    assert all(a["rate"] > 0.9 for a in report.stats["acceptance_by_domain"].values())


def test_rejected_and_failed_samples_are_counted_by_reason(traj_wh, tokenizer, tmp_path, references):
    wrong = build_sft(traj_wh, tmp_path / "a", SFTConfig(tokenizer=tokenizer, k=2, threshold=0.9), ScriptedWorldModel(references=references, right=False))
    assert wrong.tally.balanced and wrong.tally.kept == 0
    assert wrong.tally.dropped["rejected: best candidate below the threshold"] > 100
    assert all(a["rate"] == 0 for a in wrong.stats["acceptance_by_domain"].values())
    untagged = build_sft(traj_wh, tmp_path / "b", SFTConfig(tokenizer=tokenizer, k=2), ScriptedWorldModel(references=references, untagged=True))
    others = untagged.tally.dropped["held out for evaluation (test split)"] + untagged.tally.dropped["longer than the context budget even without context turns"]
    assert untagged.tally.balanced and untagged.tally.dropped["rejected: no candidate parsed with reasoning"] == untagged.tally.inputs - others
    assert untagged.stats["candidate_failures"] == {"missing <predicted_observation> tag": 2 * untagged.tally.dropped["rejected: no candidate parsed with reasoning"]}


def test_a_failed_request_fails_alone(plain, traj_wh, tokenizer, tmp_path, references):
    out, _ = plain
    victim = pq.read_table(out / "sft.parquet", columns=["sample_id"]).column("sample_id")[0].as_py()
    config = SFTConfig(tokenizer=tokenizer, k=2)
    report = build_sft(traj_wh, tmp_path / "sft", config, ScriptedWorldModel(references=references, fail=victim))
    assert report.tally.balanced and report.tally.dropped["generation failed: HTTP 500"] == 1
    healthy = build_sft(traj_wh, tmp_path / "healthy", config, ScriptedWorldModel(references=references))  # same budget and reasoning allowance
    assert report.tally.kept == healthy.tally.kept - 1


def test_the_budget_drops_old_context_then_skips(traj_wh, tokenizer, tmp_path):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tokenizer)
    budget = max(len(tok(system_prompt(d))["input_ids"]) for d in DOMAINS) + 400  # the system prompt and about 400 tokens more
    report = build_sft(traj_wh, tmp_path / "sft", SFTConfig(tokenizer=tokenizer, max_context_tokens=budget))
    rows = pq.read_table(tmp_path / "sft" / "sft.parquet").to_pylist()
    assert report.tally.balanced
    assert any(r["dropped_turns"] > 0 for r in rows)
    assert max(r["n_tokens"] for r in rows) <= budget
    assert report.tally.dropped["longer than the context budget even without context turns"] > 0
    kept = next(r for r in rows if r["dropped_turns"] > 0)
    first_context = next(m["content"] for m in kept["messages"][1:] if m["role"] == "user")
    assert first_context.startswith(f"### Turn {kept['dropped_turns'] + 1}\n")  # turn numbers stay the original ones


def test_a_tokenizer_without_a_chat_template_is_reported_not_fatal(traj_wh, plain_tokenizer, tmp_path):
    report = build_sft(traj_wh, tmp_path / "sft", SFTConfig(tokenizer=plain_tokenizer))
    assert report.tally.balanced and report.tally.kept > 100
    assert any("has no chat template" in n for n in report.notes)
    assert "has no chat template" in (tmp_path / "sft" / "README.md").read_text()


def test_deterministic(traj_wh, tokenizer, tmp_path):
    for name in ("a", "b"):
        build_sft(traj_wh, tmp_path / name, SFTConfig(tokenizer=tokenizer, max_context_tokens=2048))
    for f in sorted(p.name for p in (tmp_path / "a").iterdir()):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes(), f
