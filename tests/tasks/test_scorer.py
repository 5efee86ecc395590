"""The WideSearch scorer on the real DeepWideSearch tasks in ../shared/data."""

import pytest

from tests.conftest import SHARED_DATA
from worldforge.tasks import load_tasks, parse_markdown_table, render_markdown_table, score_table
from worldforge.tasks.io import TaskError

TASKS_FILE = SHARED_DATA / "widesearch_tasks" / "deepwidesearch" / "tasks.jsonl"
ALL = ("precision_by_row", "recall_by_row", "f1_by_row", "precision_by_item", "recall_by_item", "f1_by_item")


@pytest.fixture(scope="module")
def tasks():
    return load_tasks(TASKS_FILE)


def scores(s):
    return tuple(getattr(s, k) for k in ALL)


@pytest.fixture(scope="module")
def plain(tasks):
    """A task whose non-key columns use exact_match and whose gold keys are distinct."""
    for t in tasks.values():
        non_key = [c for c in t.required if c not in t.unique_columns]
        if len(t.gold) >= 5 and any(t.evaluation["eval_pipeline"][c]["metric"] == ["exact_match"] for c in non_key):
            if score_table(render_markdown_table(t.required, t.gold), t).notes == []:
                return t
    pytest.fail("no suitable real task")


def test_every_gold_table_scores_one(tasks):
    assert len(tasks) == 85
    for iid, t in tasks.items():
        s = score_table(render_markdown_table(t.required, t.gold), t)
        assert scores(s) == (1.0,) * 6, (iid, s.notes)


def test_dropping_rows(plain):
    t = plain
    n = len(t.gold)
    s = score_table(render_markdown_table(t.required, t.gold[2:]), t)
    assert s.precision_by_row == 1.0 and s.recall_by_row == pytest.approx((n - 2) / n)
    assert s.precision_by_item == 1.0 and s.recall_by_item == pytest.approx((n - 2) / n)
    assert s.f1_by_row == pytest.approx(2 * (n - 2) / n / (1 + (n - 2) / n))


def test_corrupting_one_cell(plain):
    t = plain
    n, c = len(t.gold), len(t.required)
    col = next(col for col in t.required if col not in t.unique_columns and t.evaluation["eval_pipeline"][col]["metric"] == ["exact_match"])
    rows = [dict(r) for r in t.gold]
    rows[0][col] = "certainly-not-the-answer"
    s = score_table(render_markdown_table(t.required, rows), t)
    assert s.precision_by_row == pytest.approx((n - 1) / n) and s.recall_by_row == pytest.approx((n - 1) / n)
    assert s.precision_by_item == pytest.approx((n * c - 1) / (n * c))


def test_reordered_renamed_and_extra_columns(plain):
    t = plain
    cols = list(reversed(t.required))
    rows = [{**r, "notes": "x"} for r in t.gold]
    md = render_markdown_table([f"  {c.upper()} " if c.isascii() else c for c in cols] + ["Notes"], [
        {(f"  {c.upper()} " if c.isascii() else c): r[c] for c in cols} | {"Notes": "x"} for r in rows])
    s = score_table("Here you go:\n```markdown\n" + md + "\n```\n", t)
    assert scores(s) == (1.0,) * 6
    assert any("ignored columns" in n for n in s.notes)


def test_bad_answers_get_zero_and_a_reason(plain):
    t = plain
    for answer, reason in [
        ("I could not find anything.", "no Markdown table"),
        (render_markdown_table(t.required[:-1], t.gold), "lacks required columns"),
        (render_markdown_table(t.required, []), "no rows"),
    ]:
        s = score_table(answer, t)
        assert scores(s) == (0.0,) * 6 and any(reason in n for n in s.notes), (reason, s.notes)


def test_empty_cells_are_reported_and_scored(plain):
    t = plain
    col = next(c for c in t.required if c not in t.unique_columns)
    rows = [dict(r) for r in t.gold]
    rows[1][col] = ""
    s = score_table(render_markdown_table(t.required, rows), t)
    assert "1 empty cell(s) in the answer" in s.notes and s.precision_by_row < 1.0


def test_pluggable_judge(tasks):
    t = next(t for t in tasks.values() if any("llm_judge" in p["metric"] for c, p in t.evaluation["eval_pipeline"].items() if c not in t.unique_columns))
    calls = []

    def harsh(responses, targets, criterion):
        calls.append(criterion)
        return [0.0] * len(responses)

    s = score_table(render_markdown_table(t.required, t.gold), t, judge=harsh)
    assert calls and all(calls) and s.f1_by_row == 0.0
    fallback = score_table(render_markdown_table(t.required, t.gold), t)
    assert fallback.f1_by_row == 1.0 and any("no judge given" in n for n in fallback.notes)


def test_markdown_round_trip_keeps_pipes_and_newlines():
    md = render_markdown_table(["a", "b"], [{"a": "x|y", "b": "line1\nline2"}])
    assert parse_markdown_table(md) == (["a", "b"], [["x|y", "line1\nline2"]])


def test_task_file_errors(tmp_path):
    with pytest.raises(TaskError, match="no such task file"):
        load_tasks(tmp_path / "nope.jsonl")
    (tmp_path / "t.jsonl").write_text('{"instance_id": "x", "evaluation": "{}"}\n')
    with pytest.raises(TaskError, match="needs unique_columns"):
        load_tasks(tmp_path / "t.jsonl")


def test_cli_scores_a_real_widesearch_task(tasks, tmp_path):
    import json

    from typer.testing import CliRunner

    from worldforge.cli import app

    iid, task = next((i, t) for i, t in tasks.items() if len(t.gold) >= 4)
    answer = tmp_path / "answer.md"
    answer.write_text("Here is the table:\n\n" + render_markdown_table(task.required, task.gold) + "\n")
    r = CliRunner().invoke(app, ["tasks", "score", str(answer), "--tasks", str(TASKS_FILE), "--id", iid])
    assert r.exit_code == 0, r.output
    got = json.loads(r.output)
    assert {k: got[k] for k in ALL} == {k: 1.0 for k in ALL} and isinstance(got["notes"], list)


def _render(columns: list[str], rows: list[dict], newline: str, pad: str = " ") -> str:
    """A Markdown table as another tool would write it: line breaks in cells as ``newline``, cells padded with ``pad``."""
    def cell(v: str) -> str:
        return str(v).replace("|", "\\|").replace("\r\n", "\n").replace("\n", newline)

    out = ["|" + "|".join(f"{pad}{c}{pad}" for c in columns) + "|", "|" + "---|" * len(columns)]
    out += ["|" + "|".join(f"{pad}{cell(r.get(c, ''))}{pad}" for c in columns) + "|" for r in rows]
    return "\n".join(out)


@pytest.mark.parametrize("newline,pad", [("<br>", " "), ("<br/>", " "), ("<BR />", "  "), (" ", " "), ("  ", "")])
def test_every_real_gold_table_scores_one_against_itself(tasks, newline, pad):
    """A gold cell with a line break compares equal to the same text written with <br>, <br/> or a space."""
    assert any("\n" in v for t in tasks.values() for r in t.gold for v in r.values())  # the data has such cells
    bad = {}
    for iid, t in tasks.items():
        s = score_table(_render(t.required, t.gold, newline, pad), t)
        if (s.f1_by_item, s.f1_by_row) != (1.0, 1.0):
            bad[iid] = (s.f1_by_item, s.notes)
    assert not bad, bad


def test_cells_are_cleaned_the_same_on_both_sides():
    from worldforge.tasks.scorer import clean_cell

    assert clean_cell("Line one\n  line two<br/>three <BR> four\t\tfive ") == "Line one line two three four five"


def test_a_frame_renders_as_a_markdown_table_the_parser_reads_back():
    import polars as pl

    from worldforge.tasks import frame_markdown, parse_markdown_table

    frame = pl.DataFrame({"team": ["Nova | Prime", "Ash"], "score": [0.12345, None], "rank": [1, 2]})
    header, rows = parse_markdown_table(frame_markdown(frame))
    assert header == ["team", "score", "rank"]
    assert rows == [["Nova | Prime", "0.123", "1"], ["Ash", "", "2"]]
    assert len(parse_markdown_table(frame_markdown(frame, rows=1))[1]) == 1


def test_the_fast_date_path_reads_dates_as_dateparser_does():
    """``parse_date`` reads full dates with ``strptime`` and the rest with dateparser: over 2,000 random dates
    in the fast formats and in others (partial, numeric, odd spacing, invalid), both give the same value."""
    import random
    from datetime import date, timedelta

    import dateparser

    from worldforge.tasks.metrics import _FULL_DATES, parse_date

    rng = random.Random(7)
    texts = ["Feb 30, 2031", "2031-02-30", "  Mar 05, 2030 ", "5 Mayo 2030", "Sept 3, 2030", "2030", "n/a", ""]
    for _ in range(250):
        d = date(1950, 1, 1) + timedelta(days=rng.randrange(40_000))
        texts += [d.strftime(f) for f in (*_FULL_DATES, "%b %Y", "%d/%m/%Y", "%Y/%m/%d", "%A, %B %d, %Y")]
    fast = sum(1 for t in texts if any(_parses(t.strip(), f) for f in _FULL_DATES))
    assert fast > 1000  # the fast path was taken, not only the fallback
    for text in texts:
        assert parse_date(text) == dateparser.parse(text, settings={"PREFER_DAY_OF_MONTH": "first"}), text


def _parses(text, fmt):
    from datetime import datetime

    try:
        datetime.strptime(text, fmt)
    except ValueError:
        return False
    return True
