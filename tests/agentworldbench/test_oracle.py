"""The oracle server itself, driven with the ``openai`` client: the world oracle answers each record's
gold observation to exactly the messages the reference evaluation builds, and nothing else; the judge
oracle's verdicts parse in the reference's ``<final_evaluation>`` format."""

from __future__ import annotations

import json
import re

import openai
import pytest

from tests.agentworldbench.oracle import DIMENSIONS, OracleServer, judge_blocks, reference_messages
from tests.agentworldbench.reference_samples import GOLD, MCP_SYSTEM, RECORDS, sample_records, write_data_dir


def client(server: OracleServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="EMPTY", max_retries=0, timeout=10)


def ask(server: OracleServer, messages: list[dict]):
    with client(server) as c:
        return c.chat.completions.create(model=server.model, messages=messages, max_tokens=64, temperature=0.6)


def predicted(content: str) -> str:
    m = re.fullmatch(r"<think>\n.*?\n</think>\n<predicted_observation>\n(.*)\n</predicted_observation>", content, re.S)
    assert m, content
    return m.group(1)


def evaluation(content: str) -> dict:
    """The json of a judge reply's ``<final_evaluation>`` block, read the way the reference's format is written."""
    m = re.search(r"<final_evaluation>\s*```json\s*(.*?)\s*```\s*</final_evaluation>", content, re.S)
    assert m, content
    return json.loads(m.group(1))


def test_reference_messages_of_a_later_turn():
    rec = next(r for r in RECORDS if r["id"] == 145256090131921)  # turn 3 of 3
    assert reference_messages(rec) == [
        {"role": "system", "content": MCP_SYSTEM},
        {"role": "user", "content": rec["prompt"][0]}, {"role": "assistant", "content": rec["response"][0]},
        {"role": "user", "content": rec["prompt"][1]}, {"role": "assistant", "content": rec["response"][1]},
        {"role": "user", "content": rec["prompt"][2]},
    ]
    first_search = next(r for r in RECORDS if r["id"] == 7)  # empty system_str: no system message
    assert reference_messages(first_search) == [{"role": "user", "content": first_search["prompt"][0]}]


@pytest.mark.parametrize("source", ["list", "folder"])
def test_the_world_oracle_answers_every_record_with_its_gold(source, tmp_path):
    records = sample_records() if source == "list" else write_data_dir(tmp_path / "data")
    with OracleServer("world", records=records) as server:
        with client(server) as c:
            assert [m.id for m in c.models.list().data] == ["oracle-world"]
        for rec in RECORDS:
            res = ask(server, reference_messages(rec))
            assert res.object == "chat.completion" and res.choices[0].finish_reason == "stop"
            assert predicted(res.choices[0].message.content) == GOLD[rec["id"]], rec["id"]
            u = res.usage
            assert u.prompt_tokens > 0 and u.completion_tokens > 0 and u.total_tokens == u.prompt_tokens + u.completion_tokens
    assert server.unmatched == 0 and server.ambiguous == 0 and len(server.requests) == len(RECORDS)
    assert server.answered == [str(r["id"]) for r in RECORDS]


def test_an_empty_gold_is_an_empty_block():
    rec = next(r for r in RECORDS if r["id"] == "term-7:1")
    with OracleServer("world", records=[rec]) as server:
        content = ask(server, reference_messages(rec)).choices[0].message.content
    assert content.endswith("<predicted_observation>\n\n</predicted_observation>")


def test_messages_that_match_no_record_are_404_and_counted():
    rec = next(r for r in RECORDS if r["id"] == 8)  # turn 2, empty system_str
    near_misses = [
        [{"role": "system", "content": ""}, *reference_messages(rec)],  # an empty system message is not the reference's
        reference_messages(rec)[-1:],  # the history left out
        [*reference_messages(rec)[:-1], {"role": "user", "content": rec["prompt"][1] + " "}],  # one space more
        [{"role": "user", "content": "### Turn 1\n**Action:**\nsomething else"}],
    ]
    with OracleServer("world", records=RECORDS) as server:
        for messages in near_misses:
            with pytest.raises(openai.NotFoundError) as err:
                ask(server, messages)
            assert err.value.status_code == 404 and "no record" in err.value.message
        assert predicted(ask(server, reference_messages(rec)).choices[0].message.content) == GOLD[8]
    assert server.unmatched == len(near_misses) and server.requests[: len(near_misses)] == near_misses and server.answered == ["8"]


def test_corrupted_records_get_a_wrong_observation():
    with OracleServer("world", records=RECORDS, corrupt={"7", "term-7:2"}) as server:
        got = {r["id"]: predicted(ask(server, reference_messages(r)).choices[0].message.content) for r in RECORDS}
    assert got == GOLD | {7: "wrong", "term-7:2": "wrong"}


def test_records_with_the_same_messages_are_answered_in_load_order():
    a = sample_records()[0]
    b = a | {"id": "twin", "response": ["**Environment Observation:**\nsomething else", *a["response"][1:]]}
    with OracleServer("world", records=[a, b]) as server:
        got = [predicted(ask(server, reference_messages(a)).choices[0].message.content) for _ in range(3)]
    assert server.ambiguous == 1 and got == [GOLD[a["id"]], "something else", GOLD[a["id"]]]
    assert server.answered == [str(a["id"]), "twin", str(a["id"])]


def reference_style(sim: str, gt: str) -> str:
    """A judge user message laid out as the reference's template: context, current turn, the two blocks, instructions."""
    context = ("# Context (Historical Interactions):\n\n### Turn 1\n**Action:**\n```json\n"
               '{"name": "web_search", "arguments": {"query": "simulated annealing"}}\n```\n'
               "**Environment Observation:**\nGround truth: simulated annealing\n\n")
    return (f"{context}\n\n# Current Turn:\n\n### Turn 2\n**Action:**\n```json\n{{}}\n```\n\n"
            f"**World Model Output (Simulated):**\n```\n{sim}\n```\n\n**Ground Truth (Real Output):**\n```\n{gt}\n```\n\n"
            "Please evaluate the simulated response against the ground truth ...\n<final_evaluation>\n```json\n"
            '{\n    "scores": {"format": <integer 1-5>}\n}\n```\n</final_evaluation>')


def worldforge_style(sim: str, gt: str) -> str:
    return (f"## Action\n\nls\n\n**Simulated observation (world model):**\n```\n{sim}\n```\n\n"
            f"**Ground Truth observation (real environment):**\n```\n{gt}\n```\n\nScore it.")


def judge(server: OracleServer, user: str) -> dict:
    return evaluation(ask(server, [{"role": "system", "content": "rubric"}, {"role": "user", "content": user}]).choices[0].message.content)


@pytest.mark.parametrize("style", [reference_style, worldforge_style])
def test_the_best_judge_gives_five_on_every_dimension(style):
    with OracleServer("judge", verdict="best") as server:
        for sim, gt in [("a", "a"), ("a", "b"), ("", "x")]:
            ev = judge(server, style(sim, gt))
            assert ev["scores"] == dict.fromkeys(DIMENSIONS, 5)
            assert isinstance(ev["strengths"], list) and isinstance(ev["weaknesses"], list)
    assert server.blocks == [("a", "a"), ("a", "b"), ("", "x")] and server.unreadable == 0


@pytest.mark.parametrize("style", [reference_style, worldforge_style])
def test_the_match_judge_gives_five_for_equal_blocks_and_one_otherwise(style):
    fenced = 'README.md:\n```python\nprint("hello")\n```\nEnd of file.'
    cases = [("same", "same", 5), ("  same\n", "same", 5), ("", "", 5), (fenced, fenced, 5),
             ("same", "other", 1), ("", "x", 1), (fenced, fenced.replace("End", "Start"), 1)]  # the difference is after a nested fence
    with OracleServer("judge", verdict="match") as server:
        for sim, gt, score in cases:
            assert judge(server, style(sim, gt))["scores"] == dict.fromkeys(DIMENSIONS, score), (sim, gt)
    assert [b for b, _ in server.blocks] == [s for s, _, _ in cases] and server.unreadable == 0


def test_a_judge_request_without_both_blocks_is_400_and_counted():
    bad = ["no blocks here", "**World Model Output (Simulated):**\n```\nonly one\n```\n", "**Ground Truth (Real Output):**\n```\nx\n```"]
    with OracleServer("judge", verdict="best") as server:
        for user in bad:
            with pytest.raises(openai.BadRequestError):
                judge(server, user)
    assert server.unreadable == len(bad) and len(server.requests) == len(bad) and not server.blocks


def test_judge_blocks_ignore_the_words_outside_labels():
    text = reference_style("sim", "gt")
    assert judge_blocks(text) == ("sim", "gt")
    assert judge_blocks(text.replace("(Simulated):**", "(Simulated)**")) is None


def test_bad_arguments_and_routes():
    with pytest.raises(ValueError):
        OracleServer("world")
    with pytest.raises(ValueError):
        OracleServer("judge", verdict="lenient")
    with OracleServer("judge") as server:
        with client(server) as c:
            with pytest.raises(openai.NotFoundError):
                c.post("/embeddings", body={}, cast_to=object)
            with pytest.raises(openai.BadRequestError):
                c.post("/chat/completions", body={"messages": "hi"}, cast_to=object)
    assert not server.requests
