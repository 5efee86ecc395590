import json

import pytest

from tests.conftest import TRAJECTORIES
from worldforge.agentworldbench import AgentWorldBenchRecord, build_messages, read_records, records_from_turns, write_records
from worldforge.trajectories.readers import read_path
from worldforge.worldmodel import system_prompt


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
    assert r.task == r.bench_domain() == "mcp" and t.domain == "tool"  # the reference's domain name for tool data
    assert r.instruction() == t.task and r.model_extra["instruction"] == t.task
    msgs = build_messages(r)
    assert msgs[0] == {"role": "system", "content": system_prompt("mcp")}
    # the reference's construction: turns 1 and 2 as user/assistant pairs, then the current action; no instruction
    assert [m["role"] for m in msgs[1:]] == ["user", "assistant", "user", "assistant", "user"]
    assert msgs[-1]["content"] == r.prompt[2] and msgs[-2]["content"] == r.response[1]
    assert t.task not in "".join(m["content"] for m in msgs)
    assert t.turns[2].observation not in "".join(m["content"] for m in msgs)  # the answer is not in the prompt
    ours = build_messages(r, style="worldforge")  # the instruction as a first exchange
    assert ours[1] == {"role": "user", "content": f"The agent's task: {t.task}"} and ours[3:] == msgs[1:]
    with pytest.raises(ValueError, match="message style"):
        build_messages(r, style="chatml")


def test_the_reference_records_are_read_as_they_are(tmp_path):
    """Integer ids, no current_prompt/system_str/total_turns, a string prompt: the reference's eval.py accepts these."""
    lines = [
        {"task": "terminal", "id": 7, "prompt": ["### Turn 1\n**Action:**\nls", "### Turn 2\n**Action:**\ntrue"],
         "response": ["**Environment Observation:**\na.txt", "**Environment Observation:**\n"], "turn_idx": 2},
        {"task": "agentworldbench/search", "id": "s-1", "prompt": "### Turn 1\n**Action:**\nq", "response": "**Environment Observation:**\nr", "turn_idx": 1},
        {"id": 9, "prompt": ["p"], "turn_idx": 1},
        {"id": 1.5, "prompt": ["p"], "turn_idx": 1},
        {"id": 3, "prompt": ["p"], "turn_idx": 2},
    ]
    (tmp_path / "x_test.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    got = [r for _, r in read_records(tmp_path / "x_test.jsonl")]
    term, search, bare = got[:3]
    assert term.id == 7 and term.current_prompt == term.prompt[1] and term.total_turns == 2 and term.system_str == ""
    assert term.reference() == "" and term.bench_domain() == "terminal"  # an empty next state is a next state
    assert build_messages(term) == [{"role": "user", "content": term.prompt[0]}, {"role": "assistant", "content": term.response[0]},
                                    {"role": "user", "content": term.prompt[1]}]
    assert search.prompt == ["### Turn 1\n**Action:**\nq"] and search.bench_domain() == "search" and search.reference() == "r"
    assert bare.task == "mcp" and bare.bench_domain() == "mcp" and bare.reference() == ""  # the reference's default domain
    assert isinstance(got[3], str) and "id" in got[3]
    assert isinstance(got[4], str) and "past the last of 1 prompts" in got[4]


def test_older_exports_keep_their_domain():
    rec = AgentWorldBenchRecord(task="Book me a flight", id="t:1", prompt=["p"], response=["r"], turn_idx=1, domain="tool")
    assert rec.bench_domain() == "mcp" and rec.instruction() == "Book me a flight"


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


def test_a_line_that_is_not_utf8_fails_alone(tau_trajectory, tmp_path):
    t = tau_trajectory
    recs = records_from_turns(t.trajectory_id, t.domain, t.task, [(x.action, x.observation) for x in t.turns])
    lines = write_records(tmp_path / "a.jsonl", recs).read_bytes().splitlines(keepends=True)
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(lines[0] + b'{"id": "latin-1", "task": "caf\xe9"}\n' + b"".join(lines[1:]))
    read = list(read_records(path))
    assert [r for _, r in read if not isinstance(r, str)] == recs  # every other line is read
    assert [(n, r) for n, r in read if isinstance(r, str)] == [(2, "not UTF-8 text (byte 31 of the line: invalid continuation byte)")]


def test_record_model_rejects_bad_turn_index():
    with pytest.raises(ValueError):
        AgentWorldBenchRecord(task="", id="a", prompt=["x"], response=["y"], current_prompt="x", system_str="s", turn_idx=0, total_turns=1)
