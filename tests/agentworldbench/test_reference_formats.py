"""The reference evaluation's judge replies and judged files (QwenLM/Qwen-AgentWorld eval/eval.py),
read by our parser and scorer: the same figures as its `aggregate_scores`, computed here by hand."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from worldforge.agentworldbench.judge import JUDGE_DIMENSIONS, Judgement, judge_input, parse_judgement, reference_extraction
from worldforge.agentworldbench.score import agreement, bootstrap_ci, quadratic_kappa, reference_report, score_file, score_lines
from worldforge.cli import app
from worldforge.errors import WorldforgeError

runner = CliRunner()

VERDICT = {"strengths": ["same rows"], "weaknesses": [], "scores": {"format": 5, "factuality": 4, "consistency": 5, "realism": 4, "quality": 3}}


def fenced(obj: dict) -> str:
    return "```json\n" + json.dumps(obj, indent=4) + "\n```"


@pytest.mark.parametrize("reply", [
    f"Format matches.\nFactuality: one number differs.\n<final_evaluation>\n{fenced(VERDICT)}\n</final_evaluation>",
    f"<final_evaluation>{json.dumps(VERDICT)}</final_evaluation>",  # bare json in the tag
    f"reasoning\n<final_evaluation>\n{fenced(VERDICT)}",  # unclosed tag (cut after the block)
    # a draft verdict inside <think> and the prompt's own example echoed first: the final block wins
    "<think>maybe <final_evaluation>{\"scores\": {\"format\": 1}}</final_evaluation></think>"
    f"Example: {{\"scores\": {{\"format\": 2}}}}\n<final_evaluation>{fenced(VERDICT)}</final_evaluation>",
    fenced(VERDICT),  # no tag at all: the last object with scores
    "<final_evaluation>{\"strengths\": [\"same rows\"], \"weaknesses\": [], \"scores\": "
    "{\"format\": \"5/5\", \"factuality\": 4.2, \"consistency\": 5, \"realism\": \"4\", \"quality\": 3,},}</final_evaluation>",  # strings, floats, trailing commas
])
def test_reference_verdicts_parse(reply):
    j = parse_judgement(reply)
    assert isinstance(j, Judgement), j
    assert j.scores == VERDICT["scores"] and j.total == pytest.approx(4.2) and j.strengths == ["same rows"]


def test_reference_verdict_edge_cases():
    j = parse_judgement('<final_evaluation>{"scores": {"format": 9, "factuality": 0, "consistency": -2, "realism": true, "quality": 2}}</final_evaluation>')
    assert j.scores == {"format": 5, "factuality": None, "consistency": None, "realism": None, "quality": 2} and j.total == 3.5
    assert parse_judgement('<final_evaluation>{"scores": {"format": 0}}</final_evaluation>') == "no scores in the judge reply"
    assert parse_judgement("<think>all 5</think>") == "empty judge reply"
    assert parse_judgement("<final_evaluation>scores: format 5</final_evaluation>") == "no JSON object in the judge reply"


def test_reference_predictions_are_read_as_its_eval_py_reads_them():
    rec = {"task": "terminal", "id": 3, "prompt": ["ls", "cat a"], "response": ["**Environment Observation:**\na", "**Environment Observation:**\nhi"], "turn_idx": 2}
    item = judge_input(rec | {"gen": "<think>cat prints</think><predicted_observation>hi</predicted_observation>"})
    assert (item.domain, item.reference, item.prediction, item.current) == ("terminal", "hi", "hi", "cat a")
    assert item.context == "# Earlier turns\n\nls\n**Environment Observation:**\na\n\n"
    assert judge_input(rec | {"gen": "<think>x</think>hi there"}).prediction == "hi there"  # no tag: the reply itself
    assert judge_input(rec | {"gen": ""}).prediction is None  # "No model generation"
    assert reference_extraction("") == "No output" and reference_extraction("<think>only</think>") == "No output"
    assert reference_extraction("<predicted_observation>a</predicted_observation> <predicted_observation>b") == "b"


def ref_line(task: str, failed: float, scores: dict | None = None, **kw) -> dict:
    """A judged line as the reference's run_judge writes it."""
    line = {"task": task, "id": kw.pop("id", 0), "turn_idx": 1, "gen": "x", "failed": failed}
    if scores is not None:
        valid = [v for v in scores.values() if v > 0]
        line |= {**scores, "total_score": sum(valid) / len(valid) if valid else 0}
    return line | kw


def dims(*v: int) -> dict:
    return dict(zip(JUDGE_DIMENSIONS, v))


@pytest.fixture
def reference_judged() -> list[dict]:
    return [
        ref_line("mcp", 0.0, dims(5, 4, 3, 5, 4), id=1),             # total 4.2
        ref_line("agentworldbench/mcp", 0.0, dims(5, 5, 5, 5, 5), id=2),  # total 5.0; a path task is its last part
        ref_line("mcp", 1.0, dims(0, 0, 0, 0, 0), id=3, error_message="Judge scoring failed"),
        ref_line("terminal", 0.0, dims(0, 3, 3, 3, 3), id=4),         # format not scored: total 3.0
        ref_line("terminal", 0.0, dims(2, 1, 1, 1, 1), id=5),         # total 1.2
        {"task": "search", "id": 6, "turn_idx": 1, "gen": "", "failed": 1.0, "total_score": 0, "error_message": "No model generation"},
    ]


def test_the_reference_figures_are_reproduced(reference_judged, tmp_path):
    def norm(x: float) -> float:
        return (x - 1) / 4 * 100

    ref = score_lines(reference_judged)["reference"]
    mcp, term, search = ref["domains"]["mcp"], ref["domains"]["terminal"], ref["domains"]["search"]
    assert (mcp["valid"], mcp["lines"], mcp["failed"]) == (2, 3, 1) and mcp["display"] == "MCP"
    assert mcp["scores"]["format"] == norm(5) and mcp["scores"]["factuality"] == norm(4.5) and mcp["scores"]["consistency"] == norm(4)
    assert mcp["scores"]["total_score"] == pytest.approx(norm(4.6))
    assert term["scores"]["format"] == norm(2)  # the zero is left out of the mean, as there
    assert term["scores"]["total_score"] == pytest.approx(norm(2.1))
    assert search["scores"] is None and search["display"] == "Search"
    assert ref["overall"] == pytest.approx(norm((4.2 + 5 + 3 + 1.2) / 4))
    assert (ref["samples"], ref["valid"], ref["failed"]) == (6, 4, 2)
    text = reference_report(ref)
    assert "\n--- MCP (2/3 valid, 1 failed) ---\n           format: 100.00\n" in text
    assert "\n--- Search (0/1 valid, 1 failed) ---\n  No valid results.\n" in text
    assert f"Overall: {norm((4.2 + 5 + 3 + 1.2) / 4):.2f}\nTotal samples: 6, Valid: 4, Failed: 2\n" in text
    assert text.index("--- MCP") < text.index("--- Search") < text.index("--- Terminal")  # sorted by domain key
    # the CLI prints the same block for the reference's file
    path = tmp_path / "judged.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in reference_judged))
    res = runner.invoke(app, ["eval", "score", str(path), "--json", str(tmp_path / "s.json")])
    assert res.exit_code == 0, res.output
    assert "--- Terminal (2/2 valid, 0 failed) ---" in res.output and f"Overall: {ref['overall']:.2f}" in res.output
    assert json.loads((tmp_path / "s.json").read_text())["reference"] == json.loads(json.dumps(ref))


def test_the_figures_the_reference_does_not_report(reference_judged):
    s = score_lines(reference_judged, resamples=200)
    mcp, over = s["domains"]["mcp"], s["overall"]

    def norm(x: float) -> float:
        return (x - 1) / 4 * 100

    assert mcp["total"] == pytest.approx((norm(4.2) + norm(5)) / 2)
    assert mcp["total_failed_as_zero"] == pytest.approx((norm(4.2) + norm(5)) / 3)  # the failed line counts 0
    assert s["domains"]["search"]["total"] is None and s["domains"]["search"]["total_failed_as_zero"] == 0.0
    assert over["total"] == pytest.approx(s["reference"]["overall"])  # micro = the reference's Overall
    assert s["macro"]["total"] == pytest.approx((mcp["total"] + s["domains"]["terminal"]["total"]) / 2)  # domains with a figure
    lo, hi = over["ci95"]
    assert lo < over["total"] < hi
    assert mcp["judge"]["format"] == 100.0 and s["domains"]["terminal"]["judge"]["format"] == norm(2)


def test_bootstrap_is_seeded_and_shrinks_with_more_data():
    few = [0.0, 100.0] * 5
    many = few * 40
    a, b = bootstrap_ci(few, 500, seed=1), bootstrap_ci(few, 500, seed=1)
    assert a == b and a[0] < 50 < a[1]
    wide, narrow = a[1] - a[0], bootstrap_ci(many, 500, seed=1)
    assert narrow[1] - narrow[0] < wide / 3
    assert bootstrap_ci([5.0]) is None


def test_agreement_between_two_judges(tmp_path):
    first = [ref_line("mcp", 0.0, dims(5, 5, 5, 5, 5), id=i) for i in range(6)] + [ref_line("mcp", 0.0, dims(1, 1, 1, 1, 1), id=i) for i in range(6, 12)]
    same = tmp_path / "a.jsonl"
    same.write_text("".join(json.dumps(x) + "\n" for x in first))
    agree = agreement(same, same)
    assert agree["both_valid"] == 12 and all(d["exact"] == 1.0 and d["kappa"] == 1.0 for d in agree["dimensions"].values())
    assert agree["total"]["pearson"] == pytest.approx(1.0) and agree["total"]["mean_abs_diff"] == 0.0
    flipped = [ref_line("mcp", 0.0, dims(*[6 - x["format"]] * 5), id=x["id"]) for x in first]  # 5 <-> 1
    other = tmp_path / "b.jsonl"
    other.write_text("".join(json.dumps(x) + "\n" for x in flipped[:-1]) + json.dumps(ref_line("mcp", 1.0, id=11)) + "\n")
    agree = agreement(same, other)
    assert agree["paired"] == 12 and agree["both_valid"] == 11 and agree["dimensions"]["format"]["exact"] == 0.0
    assert agree["dimensions"]["format"]["kappa"] < 0 and agree["total"]["pearson"] == pytest.approx(-1.0)
    res = runner.invoke(app, ["eval", "score", str(same), "--compare", str(other)])
    assert res.exit_code == 0 and "quadratic kappa" in res.output and "Pearson r -1.000" in res.output


def test_quadratic_kappa_by_hand():
    # 2 raters, 4 items: (1,1) (2,2) (3,4) (5,5): observed mean sq diff 0.25
    k = quadratic_kappa([1, 2, 3, 5], [1, 2, 4, 5])
    ca, cb = [1, 1, 1, 0, 1], [1, 1, 0, 1, 1]
    expected = sum(ca[i] * cb[j] * (i - j) ** 2 for i in range(5) for j in range(5)) / 16
    assert k == pytest.approx(1 - 0.25 / expected)
    assert quadratic_kappa([], []) is None and quadratic_kappa([3, 3], [3, 3]) is None


def test_judged_files_of_neither_kind_are_a_clear_error(tmp_path):
    (tmp_path / "p.jsonl").write_text('{"task": "mcp", "gen": "x"}\n')
    res = runner.invoke(app, ["eval", "score", str(tmp_path / "p.jsonl")])
    assert res.exit_code == 2 and "not a judged line" in " ".join(res.output.split())
    (tmp_path / "q.jsonl").write_text("{oops\n")
    with pytest.raises(WorldforgeError, match="q.jsonl:1: not JSON"):
        score_file(tmp_path / "q.jsonl")
