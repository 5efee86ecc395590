"""llm_judge columns scored by a language model: batched, cached, and a clear fallback when the judge
gives no verdict; against a scripted model and against a real `vllm serve` of the tiny model."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import SHARED_DATA
from worldforge.llm.base import Completion, GenerationResult, WorldModelBackend, record
from worldforge.tasks import load_tasks, render_markdown_table, score_table
from worldforge.tasks.judge import LLMJudge, parse_scores

TASKS_FILE = SHARED_DATA / "widesearch_tasks" / "deepwidesearch" / "tasks.jsonl"


class ScriptedJudge(WorldModelBackend):
    """Says 1 when the agent's cell contains the word ``right``, else 0; or replies ``garbage`` for every batch of more than one pair."""

    kind = "scripted-judge"
    model: str = "scripted"
    garbage_batches: bool = False
    requests: int = 0

    def _generate(self, requests, n, params, on_result):
        result = GenerationResult()
        for req in requests:
            self.requests += 1
            user = req.messages[-1]["content"]
            agents = re.findall(r"^\d+\. agent: (.*) \| reference:", user, re.M)
            text = "garbage" if self.garbage_batches and len(agents) > 1 else json.dumps({"scores": [int("right" in a) for a in agents]})
            record(result, req, [Completion(request_id=req.id, index=0, text=text)], on_result)
        return result


@pytest.fixture(scope="module")
def judged_task():
    tasks = load_tasks(TASKS_FILE)
    return next(t for t in tasks.values() if len(t.gold) >= 25 and any(
        "llm_judge" in p["metric"] for c, p in t.evaluation["eval_pipeline"].items() if c not in t.unique_columns))


def _answer(task, value: str) -> str:
    cols = [c for c in task.required if c not in task.unique_columns and "llm_judge" in task.evaluation["eval_pipeline"][c]["metric"]]
    rows = [{**r, **{c: value for c in cols}} for r in task.gold]
    return render_markdown_table(task.required, rows)


def test_the_judge_decides_llm_judge_columns_in_batches_and_caches(judged_task, tmp_path):
    backend = ScriptedJudge()
    judge = LLMJudge(backend, tmp_path / "judge.sqlite", batch_size=10)
    right = score_table(_answer(judged_task, "the right one"), judged_task, judge)
    assert right.f1_by_item == 1.0 and not any("judge" in n for n in right.notes)  # wrong text, judged right: the judge decided
    wrong = score_table(_answer(judged_task, "nope"), judged_task, judge)
    assert wrong.f1_by_row == 0.0
    from worldforge.tasks.scorer import clean_cell

    pairs = len({tuple(clean_cell(r[k]) for k in judged_task.unique_columns) for r in judged_task.gold})  # matched rows
    columns = [c for c in judged_task.required if c not in judged_task.unique_columns and "llm_judge" in judged_task.evaluation["eval_pipeline"][c]["metric"]]
    assert backend.requests == 2 * len(columns) * -(-pairs // 10)  # two answers, one request per column and batch of 10
    before = backend.requests
    again = score_table(_answer(judged_task, "the right one"), judged_task, LLMJudge(backend, tmp_path / "judge.sqlite", batch_size=10))
    assert again.f1_by_item == 1.0 and backend.requests == before  # answered from the cache


def test_unreadable_batches_are_retried_pair_by_pair(judged_task, tmp_path):
    backend = ScriptedJudge(garbage_batches=True)
    judge = LLMJudge(backend, tmp_path / "judge.sqlite", batch_size=8)
    s = score_table(_answer(judged_task, "the right one"), judged_task, judge)
    assert s.f1_by_item == 1.0 and judge.unjudged == 0 and backend.requests > len(judged_task.gold)


def test_pairs_without_a_verdict_fall_back_to_exact_match_and_say_so(judged_task):
    s = score_table(_answer(judged_task, "nope"), judged_task, lambda rs, ts, c: [None] * len(rs))
    assert s.f1_by_row == 0.0 and any("gave no verdict" in n for n in s.notes)
    gold = score_table(render_markdown_table(judged_task.required, judged_task.gold), judged_task, lambda rs, ts, c: [None] * len(rs))
    assert gold.f1_by_item == 1.0


def test_parse_scores():
    assert parse_scores('I think {"scores": [1, 0, 1]}', 3) == [1.0, 0.0, 1.0]
    assert parse_scores('{"scores": [1, 0]}', 3) is None
    assert parse_scores('{"scores": [true, 0]}', 2) is None
    assert parse_scores("no json", 1) is None


@pytest.mark.vllm
def test_a_served_model_judges_with_schema_valid_replies(judged_task, vllm_server, tmp_path):
    from worldforge.llm import OpenAIBackend

    judge = LLMJudge(OpenAIBackend(base_url=vllm_server.base_url), tmp_path / "judge.sqlite", batch_size=5, max_tokens=64)
    s = score_table(_answer(judged_task, "whatever"), judged_task, judge)
    judge.close()
    # a random model's verdicts are noise, but every batch came back as the schema's 0/1 list
    assert judge.calls > 0 and judge.unjudged == 0 and 0.0 <= s.f1_by_item <= 1.0
