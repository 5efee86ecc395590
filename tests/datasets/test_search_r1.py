"""worldforge export search-r1: deep questions as Search-R1's train/test Parquet files (issue 32, item 4: /retrieve's trainer)."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from tests.datasets.conftest import EXPORT_WORLDS
from worldforge.cli import app
from worldforge.datasets.search_r1 import INSTRUCTION, golden_answers
from worldforge.tasks.deep import read_deep_questions

WORLDS = EXPORT_WORLDS


@pytest.fixture(scope="module")
def warehouse(export_wh):
    return export_wh


def _export(warehouse, out, *args):
    return CliRunner().invoke(app, ["export", "search-r1", "--worlds", ",".join(WORLDS), "-o", str(out), "--warehouse", str(warehouse), *args])


def test_rows_in_search_r1s_format_split_by_world(warehouse, tmp_path):
    out = tmp_path / "sr1"
    res = _export(warehouse, out, "--test-share", "0.5")
    assert res.exit_code == 0, res.output
    train, test = (pq.read_table(out / f"{s}.parquet").to_pylist() for s in ("train", "test"))
    assert f"train {len(train)}, test {len(test)} questions" in res.output
    assert train and test and {r["extra_info"]["world"] for r in train}.isdisjoint({r["extra_info"]["world"] for r in test})
    questions = {q.question_id: q for w in WORLDS for q in read_deep_questions(warehouse.world(w))}  # the worlds' own, no scenario
    assert sorted(r["extra_info"]["question_id"] for r in train + test) == sorted(questions)
    for split, rows in (("train", train), ("test", test)):
        assert [r["id"] for r in rows] == [f"{split}_{i}" for i in range(len(rows))]
        for i, r in enumerate(rows):
            q = questions[r["extra_info"]["question_id"]]
            assert r["question"] == q.question and r["golden_answers"][0] == q.answer and r["data_source"] == "worldforge"
            assert r["prompt"] == [{"role": "user", "content": INSTRUCTION + q.question}] and r["ability"] == "fact-reasoning"
            assert r["reward_model"] == {"style": "rule", "ground_truth": {"target": r["golden_answers"]}}
            assert r["extra_info"]["split"] == split and r["extra_info"]["index"] == i and r["extra_info"]["scenario"] is None


def test_datasets_reads_it_as_search_r1s_trainer_does(warehouse, tmp_path):
    import datasets

    out = tmp_path / "sr1"
    assert _export(warehouse, out).exit_code == 0
    ds = datasets.load_dataset("parquet", data_files={"train": str(out / "train.parquet"), "test": str(out / "test.parquet")})
    row = ds["train"][0]
    assert row["reward_model"]["ground_truth"]["target"] == row["golden_answers"] and row["prompt"][0]["role"] == "user"


def test_a_scenarios_questions(warehouse, tmp_path):
    scenario = next(q.scenario for q in read_deep_questions(warehouse.world(WORLDS[0]), all_scenarios=True) if q.scenario)
    out = tmp_path / "sr1"
    assert _export(warehouse, out, "--scenario", scenario).exit_code == 0
    rows = pq.read_table(out / "train.parquet").to_pylist() + pq.read_table(out / "test.parquet").to_pylist()
    assert rows and {r["extra_info"]["scenario"] for r in rows} == {scenario}


def test_golden_answers_spell_dates_and_large_numbers_as_readers_do():
    assert golden_answers("Jan 02, 2030", "date") == ["Jan 02, 2030", "January 2, 2030", "Jan 2, 2030", "2 January 2030", "2030-01-02"]
    assert golden_answers("4831", "number") == ["4831", "4,831"] and golden_answers("85.6", "number") == ["85.6"]
    assert golden_answers("Stineidel Wings", "name") == ["Stineidel Wings"]
    assert golden_answers("sometime", "date") == ["sometime"]  # not a date the pages print: kept as is


@pytest.mark.parametrize("args, words", [(["--data-source", " "], "data_source must not be blank"),
                                         (["--scenario", "no_such_scenario"], "no deep questions in the worlds with the scenario")])
def test_user_errors_are_one_line_and_write_nothing(warehouse, tmp_path, args, words):
    out = tmp_path / "sr1"
    res = _export(warehouse, out, *args)
    assert res.exit_code == 2 and words in res.output and "Traceback" not in res.output
    assert not out.exists()
