"""WorldforgeSearcher: BrowseComp-Plus's search/get_document calls over a browsecomp-plus export."""

from __future__ import annotations

import json

import pytest

from worldforge.datasets.browsecomp_plus import export_browsecomp_plus
from worldforge.datasets.browsecomp_searcher import DocumentNotFound, WorldforgeSearcher
from worldforge.errors import WorldforgeError


@pytest.fixture(scope="module")
def export(export_wh, tmp_path_factory):
    out = tmp_path_factory.mktemp("bcp-searcher") / "bcp"
    export_browsecomp_plus(export_wh, ["esports_2031", "mars_colony_2030"], out)
    return out


@pytest.fixture(scope="module")
def truth(export):
    return [json.loads(x) for x in (export / "browsecomp_plus.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def tiny_model(export, tmp_path_factory):
    pytest.importorskip("sentence_transformers")
    import polars as pl

    from worldforge.retrieval.tiny import build_tiny_embedding_model

    texts = pl.read_parquet(export / "corpus.parquet", columns=["text"])["text"].to_list()
    return build_tiny_embedding_model(tmp_path_factory.mktemp("bcp-tiny") / "model", texts=texts)


def _check_hits(hits, k):
    assert 0 < len(hits) <= k
    for h in hits:
        assert set(h) == {"docid", "score", "text", "snippet"}
        assert isinstance(h["docid"], str) and h["docid"].isdigit() and isinstance(h["score"], float)
        assert h["text"].startswith(h["snippet"].removesuffix("…"))
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)


def test_bm25_search_finds_the_evidence_and_get_document_returns_its_text(export, truth):
    searcher = WorldforgeSearcher(export)
    assert searcher.search_type == "BM25" and (export / "searcher_index" / "bm25").is_dir()
    hits = searcher.search(truth[0]["query"], 5)
    _check_hits(hits, 5)
    doc = searcher.get_document(hits[0]["docid"])
    assert doc["docid"] == hits[0]["docid"] and doc["text"] == hits[0]["text"] and doc["url"].startswith("http")
    # measured on this export (2 worlds, 48 questions): an evidence document is in BM25's top 100 for 47 of 48
    found = [bool({h["docid"] for h in searcher.search(t["query"], 100)} & {d["docid"] for d in t["evidence_docs"]}) for t in truth]
    assert sum(found) >= 0.9 * len(found), f"{sum(found)} of {len(found)}"
    batch = searcher.retrieve_batch([t["query"] for t in truth[:3]], [t["query_id"] for t in truth[:3]], k=3)
    assert list(batch) == [t["query_id"] for t in truth[:3]] and all(len(v) == 3 for v in batch.values())
    assert searcher.search("AND ((( \"unbalanced", 3) is not None  # query syntax errors are tolerated


def test_an_unknown_docid_is_a_clear_error(export):
    searcher = WorldforgeSearcher(export)
    with pytest.raises(DocumentNotFound, match="no document with docid '999999999'"):
        searcher.get_document("999999999")


def test_the_index_is_reused_and_rebuilt_for_a_new_export(export, truth):
    WorldforgeSearcher(export)
    marker = export / "searcher_index" / "bm25" / "corpus.sha256"
    before = marker.stat().st_mtime_ns
    WorldforgeSearcher(export)
    assert marker.stat().st_mtime_ns == before  # same corpus: not rebuilt
    marker.write_text("stale")
    assert WorldforgeSearcher(export).search(truth[0]["query"], 3)
    assert marker.read_text() != "stale"


def test_dense_and_hybrid_search(export, truth, tiny_model):
    for how, kind in (("dense", "FAISS"), ("hybrid", "hybrid")):
        searcher = WorldforgeSearcher(export, retriever=how, embedding_model=tiny_model)
        assert searcher.search_type == kind
        hits = searcher.search(truth[1]["query"], 10)
        _check_hits(hits, 10)
        assert searcher.get_document(hits[-1]["docid"])["text"] == hits[-1]["text"]


def test_bad_arguments_say_what_to_fix(export, tmp_path):
    with pytest.raises(WorldforgeError, match="no corpus.parquet"):
        WorldforgeSearcher(tmp_path)
    with pytest.raises(WorldforgeError, match="retriever must be one of"):
        WorldforgeSearcher(export, retriever="splade")
    with pytest.raises(WorldforgeError, match="needs an embedding model"):
        WorldforgeSearcher(export, retriever="dense")
