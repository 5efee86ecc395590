"""worldforge export browsecomp-plus: the layout BrowseComp-Plus's own tools read (issue 32, item 2)."""

from __future__ import annotations

import json
from collections import defaultdict

import polars as pl
import pytest
from typer.testing import CliRunner

from worldforge.cli import app
from worldforge.corpus import read_corpus
from worldforge.tasks.deep import read_deep_questions


@pytest.fixture(scope="module")
def warehouse(export_wh):
    return export_wh


def _qrels(path) -> dict[str, list[str]]:
    """As BrowseComp-Plus's evaluate_run.load_qrel_data reads them: four fields a line, query id and docid."""
    got = defaultdict(list)
    for line in path.read_text().splitlines():
        parts = line.split()
        assert len(parts) == 4 and parts[1] == "Q0" and parts[3] == "1", line
        got[parts[0]].append(parts[2])
    return dict(got)


def test_export_writes_the_corpus_queries_and_qrels(warehouse, tmp_path):
    out = tmp_path / "bcp"
    res = CliRunner().invoke(app, ["export", "browsecomp-plus", "--worlds", "esports_2031,mars_colony_2030", "-o", str(out),
                                   "--warehouse", str(warehouse)])
    assert res.exit_code == 0, res.output
    corpus = pl.read_parquet(out / "corpus.parquet")
    assert corpus.columns == ["docid", "text", "url"] and corpus["docid"].is_unique().all()
    assert corpus["docid"].str.contains(r"^\d+$").all()  # its scripts read citations as [digits]
    # one corpus a world, its own: a scenario's pages would be twins of the world's with other values
    assert corpus.height == sum(read_corpus(warehouse.world(w), None, dressed=False)[0].height for w in ("esports_2031", "mars_colony_2030"))
    docs = [json.loads(x) for x in (out / "corpus_jsonl" / "docs.jsonl").read_text().splitlines()]
    assert [d["id"] for d in docs] == corpus["docid"].to_list() and docs[0]["contents"] == corpus["text"][0]
    queries = [line.split("\t") for line in (out / "topics-qrels" / "queries.tsv").read_text().splitlines()]
    assert all(len(q) == 2 and q[1].strip() for q in queries)
    truth = [json.loads(x) for x in (out / "browsecomp_plus.jsonl").read_text().splitlines()]
    questions = {q.question_id: q for w in ("esports_2031", "mars_colony_2030") for q in read_deep_questions(warehouse.world(w))}
    assert len(truth) == len(queries) == len(questions) >= 40
    assert [t["query_id"] for t in truth] == [q[0] for q in queries]
    evidence, gold = _qrels(out / "topics-qrels" / "qrel_evidence.txt"), _qrels(out / "topics-qrels" / "qrel_golds.txt")
    ids = set(corpus["docid"].to_list())
    url_of = dict(zip(corpus["docid"].to_list(), corpus["url"].to_list()))
    for t in truth:
        q = questions[t["worldforge_id"]]
        assert t["answer"] == q.answer and t["query"] == q.question
        assert set(gold[t["query_id"]]) <= set(evidence[t["query_id"]]) <= ids
        assert sorted(url_of[d] for d in gold[t["query_id"]]) == sorted(q.gold_urls)
        assert {d["docid"] for d in t["evidence_docs"]} == set(evidence[t["query_id"]])
    assert f"{len(truth):,} queries over {corpus.height:,} documents from 2 world(s)" in " ".join(res.output.split())


def test_the_same_worlds_export_the_same_files(warehouse, tmp_path):
    for d in ("a", "b"):
        assert CliRunner().invoke(app, ["export", "browsecomp-plus", "--worlds", "esports_2031", "-o", str(tmp_path / d),
                                        "--warehouse", str(warehouse)]).exit_code == 0
    for f in ("topics-qrels/queries.tsv", "topics-qrels/qrel_evidence.txt", "topics-qrels/qrel_golds.txt", "browsecomp_plus.jsonl",
              "corpus_jsonl/docs.jsonl", "docids.tsv"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes(), f


def test_a_scenario_is_exported_on_its_own(warehouse, tmp_path):
    path = warehouse.world("esports_2031")
    scen = next(q.scenario for q in read_deep_questions(path, all_scenarios=True) if q.scenario)
    out = tmp_path / "scen"
    res = CliRunner().invoke(app, ["export", "browsecomp-plus", "--worlds", "esports_2031", "--scenario", scen, "-o", str(out),
                                   "--warehouse", str(warehouse)])
    assert res.exit_code == 0, res.output
    assert pl.read_parquet(out / "corpus.parquet").height == read_corpus(path, scen, dressed=False)[0].height
    truth = [json.loads(x) for x in (out / "browsecomp_plus.jsonl").read_text().splitlines()]
    assert {t["worldforge_id"] for t in truth} == {q.question_id for q in read_deep_questions(path, scen)}
    res = CliRunner().invoke(app, ["export", "browsecomp-plus", "--worlds", "esports_2031", "--scenario", "nope", "-o", str(tmp_path / "x"),
                                   "--warehouse", str(warehouse)])
    assert res.exit_code == 2 and "none of the worlds has the scenario 'nope'" in " ".join(res.output.split())


def test_bad_input_is_one_line_and_leaves_the_previous_export(warehouse, tmp_path):
    out = tmp_path / "bcp"
    assert CliRunner().invoke(app, ["export", "browsecomp-plus", "--worlds", "esports_2031", "-o", str(out), "--warehouse", str(warehouse)]).exit_code == 0
    before = (out / "topics-qrels" / "queries.tsv").read_bytes()
    res = CliRunner().invoke(app, ["export", "browsecomp-plus", "--worlds", "no_such_world", "-o", str(out), "--warehouse", str(warehouse)])
    assert res.exit_code == 2 and "no such world" in res.output and "Traceback" not in res.output
    assert (out / "topics-qrels" / "queries.tsv").read_bytes() == before
    # never a folder that is not an earlier export, nor the warehouse: -o replaces the folder whole
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("keep me")
    for target in (other, warehouse.root, warehouse.root.parent):
        res = CliRunner().invoke(app, ["export", "browsecomp-plus", "--worlds", "esports_2031", "-o", str(target), "--warehouse", str(warehouse)])
        assert res.exit_code == 2 and "name a new" in " ".join(res.output.split()), res.output
    assert (other / "notes.txt").read_text() == "keep me" and (warehouse.world("esports_2031")).is_file()
