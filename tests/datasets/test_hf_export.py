"""worldforge export hf: a folder datasets.load_dataset reads offline, one config per task family (issue 32, item 5)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tests.datasets.conftest import EXPORT_WORLDS
from worldforge.cli import app
from worldforge.datasets.hf import held_out_worlds
from worldforge.tasks.deep import ANSWER_FORMAT, read_deep_questions
from worldforge.tasks.store import read_tasks

WORLDS = EXPORT_WORLDS


@pytest.fixture(scope="module")
def exported(export_wh, tmp_path_factory):
    wh = export_wh
    out = tmp_path_factory.mktemp("hf-out") / "hf"
    res = CliRunner().invoke(app, ["export", "hf", "-o", str(out), "--warehouse", str(wh)])
    assert res.exit_code == 0, res.output
    return wh, out


def test_load_dataset_reads_both_families_offline(exported, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from datasets import load_dataset

    wh, out = exported
    # a cache of its own: datasets names a local folder's cache by the folder's name and config ("hf", "wide"), so the
    # shared cache can hand back an earlier export to a folder of the same name
    deep = load_dataset(str(out), "deep", cache_dir=str(tmp_path))
    wide = load_dataset(str(out), "wide", cache_dir=str(tmp_path))
    assert set(deep) == set(wide) == {"train", "test"}
    held = held_out_worlds(list(WORLDS))
    assert len(held) == 1 and set(deep["test"]["world"]) == held and set(wide["test"]["world"]) == held
    assert not set(deep["train"]["world"]) & held
    questions = {q.question_id: q for w in WORLDS for q in read_deep_questions(wh.world(w), all_scenarios=True)}
    tasks = {t.instance_id: t for w in WORLDS for t in read_tasks(wh.world(w), all_scenarios=True)}
    assert deep["train"].num_rows + deep["test"].num_rows == len(questions)
    assert wide["train"].num_rows + wide["test"].num_rows == len(tasks)
    row = deep["train"][0]
    q = questions[row["question_id"]]
    assert (row["answer"], row["hops"], row["gold_urls"]) == (q.answer, q.hops, q.gold_urls) and row["prompt"].endswith(ANSWER_FORMAT)
    w = wide["test"][0]
    assert json.loads(w["gold_json"]) == tasks[w["instance_id"]].gold and w["required"] == tasks[w["instance_id"]].required
    card = (out / "README.md").read_text()
    assert card.startswith("---\nconfigs:") and "## How it was made" in card and f"{deep['test'].num_rows:,}" in card


def test_splits_are_stable_by_world():
    assert held_out_worlds(["a_world", "b_world", "c_world"]) == held_out_worlds(["c_world", "b_world", "a_world"])
    big = [f"w{i}" for i in range(200)]
    assert 20 <= len(held_out_worlds(big)) <= 60  # about a fifth
    kept = next(w for w in big if w not in held_out_worlds(big))
    assert held_out_worlds([kept]) == set()  # one world alone is never forced into the test split
    assert held_out_worlds(big, share=0.0) == set() and held_out_worlds(["a", "b"], share=0.0) == set()


def test_an_export_written_again_into_the_same_folder_is_what_load_dataset_reads(export_wh, tmp_path, monkeypatch):
    """datasets caches a local folder by its name, configuration and data file paths: the data files are named by their
    content, so a second export into the same folder is read as written, never the first one from the cache."""
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    from datasets import load_dataset

    from worldforge.datasets.hf import export_hf

    out, cache = tmp_path / "hf", str(tmp_path / "cache")
    first = export_hf(export_wh, WORLDS[:1], out)  # one world: no held-out world, so no test split at all
    once = load_dataset(str(out), "wide", cache_dir=cache)
    assert set(once) == {"train"} and first.rows["wide"]["test"] == 0
    n1 = once["train"].num_rows
    second = export_hf(export_wh, WORLDS, out)
    got = load_dataset(str(out), "wide", cache_dir=cache)
    assert n1 == sum(first.rows["wide"].values()) < sum(second.rows["wide"].values()) == got["train"].num_rows + got["test"].num_rows
    assert set(got["train"].column_names) >= {"hops", "oracle_calls"} and all(h >= 1 for h in got["train"]["hops"])
