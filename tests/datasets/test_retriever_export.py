"""worldforge export retriever: (query, positive, hard negatives) rows that sentence-transformers' own trainer reads."""

from __future__ import annotations

import json
import math

import duckdb
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from tests.datasets.conftest import EXPORT_WORLDS
from worldforge.cli import app
from worldforge.corpus import read_corpus
from worldforge.tasks.deep import read_deep_questions
from worldforge.tasks.phrasing import without_requirements
from worldforge.tasks.store import read_tasks

NEG = ["negative_1", "negative_2", "negative_3"]


def _export(warehouse, out, *args):
    return CliRunner().invoke(app, ["export", "retriever", "--worlds", ",".join(EXPORT_WORLDS), "-o", str(out),
                                    "--warehouse", str(warehouse), *args])


@pytest.fixture(scope="module")
def export(export_wh, tmp_path_factory):
    out = tmp_path_factory.mktemp("retriever") / "rx"
    res = _export(export_wh, out, "--negatives", "3")
    assert res.exit_code == 0, res.output
    return out, res.output


def _stated(path) -> dict[str, set[tuple]]:
    """Straight from the provenance table: the cells each page of the world's own corpus states (kind value)."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        rows = con.execute("SELECT f.url, f.table_name, f.row_key, f.column_name FROM corpus_facts f JOIN corpus_pages p USING (url) "
                           "WHERE f.kind = 'value' AND p.scenario IS NULL").fetchall()
    finally:
        con.close()
    out: dict[str, set[tuple]] = {}
    for u, t, k, c in rows:
        out.setdefault(u, set()).add((t, k, c))
    return out


def test_rows_positives_and_negatives_hold_the_invariants(export_wh, export):
    out, output = export
    report = json.loads((out / "report.json").read_text())
    assert report["balanced"] and report["inputs"] == report["written"] + sum(report["skipped"].values())
    splits = {s: pq.read_table(out / f"{s}.parquet") for s in ("train", "validation", "test") if (out / f"{s}.parquet").exists()}
    assert "train" in splits and len(splits) >= 2  # two worlds: one held out
    queries = {q["query_id"]: q for q in pq.read_table(out / "queries.parquet").to_pylist()}
    dropped = (out / "dropped.tsv").read_text().splitlines()[1:]
    worlds_of = {}
    for w in EXPORT_WORLDS:
        path = export_wh.world(w)
        stated = _stated(path)
        pages, _ = read_corpus(path, None, dressed=False)
        text = {u: f"{t}\n\n{b}" for u, t, b in pages.select("url", "title", "body_md").iter_rows()}
        deep = {q.question_id: q for q in read_deep_questions(path)}
        wide = {t.instance_id: t for t in read_tasks(path)}
        assert report["inputs"] >= len(deep) + len(wide) > 0
        answer = {i: {tuple(c[:3]) for c in q.answer_cells} for i, q in deep.items()}
        answer |= {i: {tuple(c[:3]) for c in t.extra["provenance"]["cells"]} for i, t in wide.items()}
        positives = {i: set(q.evidence_urls) for i, q in deep.items()}
        positives |= {i: {u for u, cells in stated.items() if cells & answer[i]} for i in wide}
        for split, table in splits.items():
            assert table.column_names == ["anchor", "positive", *NEG]  # nothing but texts: the trainer embeds every column
            ids = pq.read_table(out / "ids" / f"{split}.parquet").to_pylist()
            assert len(ids) == table.num_rows
            for row, meta in zip(table.to_pylist(), ids):
                if meta["world"] != w:
                    continue
                worlds_of.setdefault(split, set()).add(w)
                qid = meta["query_id"]
                assert qid in deep or qid in wide
                expected = deep[qid].question if qid in deep else without_requirements(wide[qid].question).strip()
                assert row["anchor"] == expected and "Markdown table" not in row["anchor"]
                assert meta["positive_url"] in positives[qid] and row["positive"] == text[meta["positive_url"]]
                assert len(set(meta["negative_urls"])) == 3
                for col, url in zip(NEG, meta["negative_urls"]):
                    assert row[col] == text[url]
                    assert url not in positives[qid], (qid, url)
                    assert not (stated.get(url, set()) & answer[qid]), (qid, url)  # states no answer cell (corpus_facts)
                    if qid in deep and len(deep[qid].answer) >= 4:
                        assert deep[qid].answer.lower() not in text[url].lower()
                assert queries[qid]["split"] == split and set(queries[qid]["positive_urls"]) <= positives[qid]
        kept = {i for i, q in queries.items() if q["world"] == w}
        lost = {line.split("\t")[0] for line in dropped if line.split("\t")[0] in deep or line.split("\t")[0] in wide}
        assert kept | lost == set(deep) | set(wide) and not kept & lost  # every query written or dropped with its reason
        assert all(queries[i]["positive_urls"] for i in kept)  # >= 1 positive each
    assert sum(len(v) for v in worlds_of.values()) == len(EXPORT_WORLDS)  # no world in two splits
    qrels = (out / "qrels.txt").read_text().splitlines()
    assert len(qrels) == sum(len(q["positive_urls"]) for q in queries.values()) and all(len(x.split()) == 4 for x in qrels)
    assert f"{report['written']:,} of {report['inputs']:,} queries" in " ".join(output.split())


def test_hugging_face_datasets_reads_it(export):
    import datasets

    out, _ = export
    files = {s: str(out / f"{s}.parquet") for s in ("train", "validation", "test") if (out / f"{s}.parquet").exists()}
    ds = datasets.load_dataset("parquet", data_files=files)
    assert ds["train"].column_names == ["anchor", "positive", *NEG] and ds["train"].num_rows > 0
    card = (out / "README.md").read_text()
    assert card.startswith("---\n") and "path: train.parquet" in card and "balanced" in card


def test_sentence_transformers_trains_on_it(export, tmp_path):
    pytest.importorskip("sentence_transformers")
    import datasets
    from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer, SentenceTransformerTrainingArguments
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
    from sentence_transformers.sentence_transformer.training_args import BatchSamplers

    from worldforge.retrieval.tiny import build_tiny_embedding_model

    out, _ = export
    train = datasets.load_dataset("parquet", data_files={"train": str(out / "train.parquet")})["train"]
    texts = train["anchor"][:200] + train["positive"][:200]
    model = SentenceTransformer(str(build_tiny_embedding_model(tmp_path / "tiny", texts=texts)), device="cpu")
    before = model.encode(["query: a player's nationality"])[0].copy()
    args = SentenceTransformerTrainingArguments(output_dir=str(tmp_path / "run"), max_steps=3, per_device_train_batch_size=8,
                                                learning_rate=0.05, report_to="none", use_cpu=True, save_strategy="no",
                                                logging_steps=1, batch_sampler=BatchSamplers.NO_DUPLICATES, seed=0)
    trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=train, loss=MultipleNegativesRankingLoss(model))
    result = trainer.train()
    assert result.global_step == 3 and math.isfinite(result.training_loss) and result.training_loss > 0
    model.save(str(tmp_path / "trained"))
    loaded = SentenceTransformer(str(tmp_path / "trained"), device="cpu")
    vec = loaded.encode(["query: a player's nationality"])[0]
    assert vec.shape == before.shape and all(map(math.isfinite, vec.tolist())) and (vec != before).any()  # it moved


@pytest.mark.parametrize("args, words", [(["--negatives", "0"], "need negatives >= 1"),
                                         (["--holdout", "no_such_world"], "holdout worlds not among the worlds exported")])
def test_bad_input_is_one_line_and_writes_nothing(export_wh, tmp_path, args, words):
    out = tmp_path / "rx"
    res = _export(export_wh, out, *args)
    assert res.exit_code == 2 and words in " ".join(res.output.split()) and "Traceback" not in res.output
    assert not out.exists()


def test_without_requirements_keeps_the_question_alone(export_wh):
    for t in read_tasks(export_wh.world(EXPORT_WORLDS[0]), all_scenarios=True):
        q = without_requirements(t.question)
        assert q and q != t.question and t.question.startswith(q) and "Markdown" not in q
    assert without_requirements("Name its league.") == "Name its league."
