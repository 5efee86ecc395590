"""Deep questions and their corpora in BrowseComp-Plus's layout, for its own searchers and evaluation scripts.

BrowseComp-Plus (Chen et al., 2025, arXiv 2508.06600; github.com/texttron/BrowseComp-Plus) pairs 830
BrowseComp questions with a fixed corpus of 100,195 documents and relevance judgements. Its tools read:

* the corpus (``Tevatron/browsecomp-plus-corpus``): one row per document, ``docid`` (digits: its scripts
  take citations as ``[123]``), ``text``, ``url`` — here ``corpus.parquet`` (zstd);
* ``topics-qrels/queries.tsv``: ``query_id<TAB>query``, one line each (the query's own line breaks and
  tabs as spaces, as its ``decrypt_dataset.py --generate-tsv`` writes it);
* ``topics-qrels/qrel_evidence.txt`` and ``topics-qrels/qrel_golds.txt``: TREC qrels,
  ``query_id Q0 docid 1`` (the documents needed to answer, and those that state the answer);
* the decrypted dataset its ``evaluate_run.py --ground_truth`` reads: JSONL with ``query_id``, ``query``,
  ``answer``, ``evidence_docs`` and ``gold_docs`` (``[{docid, url}]``) — here ``browsecomp_plus.jsonl``,
  with ``worldforge_id`` (the question's id) kept beside them;
* the documents as Pyserini's ``JsonCollection`` for its BM25 index: ``corpus_jsonl/docs.jsonl``,
  ``{"id", "contents"}`` per line (``python -m pyserini.index.lucene --collection JsonCollection
  --input corpus_jsonl ...``).

One corpus per world (its own, or one time-shifted scenario's: :func:`export_browsecomp_plus`). A document is a
page as the environment serves it (``web_extractor``'s text: its title, then the page in
its site's chrome); ``docids.tsv`` maps each docid back to ``world``, ``scenario`` and ``url``. Docids
and query ids are numbered in the order of (world, scenario, url) and of the questions' ids, so the same
worlds export the same files.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from worldforge.datasets.output import export_worlds
from worldforge.errors import WorldforgeError
from worldforge.warehouse.atomic import atomic_dir
from worldforge.warehouse.layout import Warehouse, WarehouseLike

__all__ = ["BrowseCompPlusExport", "export_browsecomp_plus"]


@dataclass(frozen=True)
class BrowseCompPlusExport:
    """What :func:`export_browsecomp_plus` wrote.

    Attributes:
        out: the folder.
        worlds: the worlds exported.
        documents: documents in the corpus (every page of the exported corpora).
        queries: questions.
        evidence: query-document pairs in ``qrel_evidence.txt``.
        gold: pairs in ``qrel_golds.txt``.
    """

    out: Path
    worlds: list[str]
    documents: int
    queries: int
    evidence: int
    gold: int


def _one_line(text: str) -> str:
    return " ".join(text.replace("\t", " ").split())


def export_browsecomp_plus(warehouse: WarehouseLike, worlds: Iterable[str], out: str | Path, scenario: str | None = None,
                           progress: Callable[[str], None] | None = None) -> BrowseCompPlusExport:
    """Write the deep questions of ``worlds`` and their corpora in BrowseComp-Plus's layout (module docstring).

    One corpus per world goes in: the world's own (``scenario`` ``None``), or that time-shifted scenario's where a world
    has it. Never both: a scenario's pages repeat the world's URLs and titles with other values, so a question checked
    unique in one corpus could be answered differently from its twin page in the other.

    Args:
        warehouse: the warehouse holding the worlds (tasks built: their ``deep_questions``).
        worlds: world names.
        out: the folder to write (replaced whole, atomically: a failed export leaves the previous one).
        scenario: the scenario whose corpora and questions to export (each world that has it); ``None``: the worlds'.
        progress: called with each world's name as it is read.

    Returns:
        The counts written.

    Raises:
        WorldforgeError: no world given, a world missing, or a world without deep questions (built before them).
    """
    from worldforge.corpus.store import corpus_scenarios, read_corpus
    from worldforge.tasks.deep import read_deep_questions

    wh = Warehouse.of(warehouse)
    names = export_worlds(wh, worlds)
    docs: list[tuple[str, str | None, str, str]] = []  # (world, scenario, url, text)
    questions = []
    for w in names:
        if progress:
            progress(w)
        path = wh.world(w)
        if scenario is not None and scenario not in corpus_scenarios(path):
            continue  # this world has no such scenario
        questions += read_deep_questions(path, scenario)
        pages, _ = read_corpus(path, scenario, dressed=True)
        docs += [(w, scenario, url, f"{title}\n\n{body}") for url, title, body in pages.select("url", "title", "body_md").iter_rows()]
    if not docs:
        raise WorldforgeError(f"none of the worlds has the scenario {scenario!r}")
    docs.sort(key=lambda d: (d[0], d[1] or "", d[2]))
    docid = {(w, s, u): str(i) for i, (w, s, u, _) in enumerate(docs, 1)}
    questions.sort(key=lambda q: q.question_id)
    out = Path(out)
    evidence = gold = 0
    with atomic_dir(out) as tmp:
        qrels = tmp / "topics-qrels"
        qrels.mkdir()
        (tmp / "corpus_jsonl").mkdir()
        pl.DataFrame({"docid": [docid[(w, s, u)] for w, s, u, _ in docs], "text": [t for *_, t in docs], "url": [u for _, _, u, _ in docs]},
                     schema={"docid": pl.String, "text": pl.String, "url": pl.String}).write_parquet(tmp / "corpus.parquet", compression="zstd")
        with (tmp / "corpus_jsonl" / "docs.jsonl").open("w", encoding="utf-8") as f:
            for w, s, u, text in docs:
                f.write(json.dumps({"id": docid[(w, s, u)], "contents": text}, ensure_ascii=False) + "\n")
        with (tmp / "docids.tsv").open("w", encoding="utf-8") as f:
            f.write("docid\tworld\tscenario\turl\n")
            for w, s, u, _ in docs:
                f.write(f"{docid[(w, s, u)]}\t{w}\t{s or ''}\t{u}\n")
        with (qrels / "queries.tsv").open("w", encoding="utf-8") as tsv, (qrels / "qrel_evidence.txt").open("w") as ev, \
                (qrels / "qrel_golds.txt").open("w") as gd, (tmp / "browsecomp_plus.jsonl").open("w", encoding="utf-8") as gt:
            for qid, q in enumerate(questions, 1):
                ev_ids = [docid[(q.world, q.scenario, u)] for u in q.evidence_urls if (q.world, q.scenario, u) in docid]
                gold_ids = [docid[(q.world, q.scenario, u)] for u in q.gold_urls if (q.world, q.scenario, u) in docid]
                if len(ev_ids) != len(q.evidence_urls) or len(gold_ids) != len(q.gold_urls):
                    raise WorldforgeError(f"{q.question_id}: an evidence page is not in its corpus (rebuild the world's tasks)")
                tsv.write(f"{qid}\t{_one_line(q.question)}\n")
                ev.writelines(f"{qid} Q0 {d} 1\n" for d in ev_ids)
                gd.writelines(f"{qid} Q0 {d} 1\n" for d in gold_ids)
                evidence, gold = evidence + len(ev_ids), gold + len(gold_ids)
                gt.write(json.dumps({"query_id": str(qid), "query": q.question, "answer": q.answer,
                                     "evidence_docs": [{"docid": d, "url": u} for d, u in zip(ev_ids, q.evidence_urls)],
                                     "gold_docs": [{"docid": d, "url": u} for d, u in zip(gold_ids, q.gold_urls)],
                                     "worldforge_id": q.question_id, "answer_type": q.answer_type, "hops": q.hops},
                                    ensure_ascii=False) + "\n")
    return BrowseCompPlusExport(out, names, len(docs), len(questions), evidence, gold)

