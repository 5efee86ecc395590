import json

import pytest

from tests.conftest import TRAJECTORIES
from worldforge.agentworldbench import (
    SYSTEM_PROMPTS,
    AgentWorldBenchRecord,
    ParseFailure,
    Prediction,
    build_messages,
    format_prediction,
    parse_prediction,
    read_records,
    records_from_turns,
    write_records,
)
from worldforge.trajectories.readers import read_path


@pytest.fixture(scope="module")
def tau_trajectory():
    from worldforge.trajectories.model import Trajectory

    return next(t for t in read_path([TRAJECTORIES / "tau-bench"]) if isinstance(t, Trajectory) and len(t.turns) >= 3
                and t.turns[2].observation not in (t.turns[0].observation + t.turns[1].observation))


def test_records_follow_the_agentworldbench_contract(tau_trajectory):
    t = tau_trajectory
    recs = records_from_turns(t.trajectory_id, t.domain, t.task, [(x.action, x.observation) for x in t.turns])
    assert len(recs) == len(t.turns) and [r.turn_idx for r in recs] == list(range(1, len(t.turns) + 1))
    r = recs[2]
    assert r.total_turns == len(t.turns) and r.current_prompt == r.prompt[2]
    assert r.prompt[0].startswith("### Turn 1\n**Action:**\n```json\n") and json.loads(r.prompt[0].split("```json\n")[1].split("\n```")[0])["name"]
    assert all(x.startswith("**Environment Observation:**\n") for x in r.response)
    assert r.reference() == t.turns[2].observation.strip()
    msgs = build_messages(r)
    assert msgs[0] == {"role": "system", "content": SYSTEM_PROMPTS[t.domain]}
    # task exchange, then turns 1 and 2 as user/assistant pairs, then the current action
    assert [m["role"] for m in msgs[3:]] == ["user", "assistant", "user", "assistant", "user"]
    assert msgs[-1]["content"] == r.prompt[2] and msgs[-2]["content"] == r.response[1]
    assert t.turns[2].observation not in "".join(m["content"] for m in msgs)  # the answer is not in the prompt


def test_records_round_trip_and_malformed_lines_get_reasons(tau_trajectory, tmp_path):
    t = tau_trajectory
    recs = records_from_turns(t.trajectory_id, t.domain, t.task, [(x.action, x.observation) for x in t.turns])
    path = write_records(tmp_path / "tool_test.jsonl", recs)
    with open(path, "a") as fh:
        fh.write('{"id": "x", "turn_idx": 0}\n\n')
    read = list(read_records(path))
    assert [r for _, r in read[:-1]] == recs
    n, bad = read[-1]
    assert n == len(recs) + 1 and isinstance(bad, str) and "not an AgentWorldBench record" in bad


@pytest.mark.parametrize("text,think,obs", [
    ("<think>look up</think>\n<predicted_observation>\n**Environment Observation:**\nok: 3 rows\n</predicted_observation>", "look up", "ok: 3 rows"),
    ("<predicted_observation>plain</predicted_observation>", None, "plain"),
    ("<think>a <predicted_observation>draft</predicted_observation></think><predicted_observation>final</predicted_observation>", None, "final"),
    ('{"think": "t", "predicted_observation": "from json"}', "t", "from json"),
])
def test_parse_prediction(text, think, obs):
    p = parse_prediction(text)
    assert isinstance(p, Prediction) and p.observation == obs
    if think is not None:
        assert p.think == think


@pytest.mark.parametrize("text,reason", [
    ("", "empty reply"),
    ("the file has 3 lines", "missing <predicted_observation> tag"),
    ("<think>x</think><predicted_observation>cut off here", "unclosed <predicted_observation> tag (truncated reply?)"),
    ("<think>never closed <predicted_observation>x</predicted_observation>", "unclosed <think> tag"),
    ("<predicted_observation> \n </predicted_observation>", "empty <predicted_observation>"),
])
def test_parse_failures_have_reasons(text, reason):
    p = parse_prediction(text)
    assert isinstance(p, ParseFailure) and p.reason == reason


def test_format_and_parse_are_inverse():
    p = parse_prediction(format_prediction("line 1\nline 2", "why"))
    assert p == Prediction("why", "line 1\nline 2")


def test_record_model_rejects_bad_turn_index():
    with pytest.raises(ValueError):
        AgentWorldBenchRecord(task="", id="a", prompt=["x"], response=["y"], current_prompt="x", system_str="s", turn_idx=0, total_turns=1)
