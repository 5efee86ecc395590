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
are numbered in the order of (world, url), query ids in the order of (world, question id), so the same worlds
export the same files; the export reads and writes one world at a time (its memory does not grow with the
catalog: 1,000 catalog worlds, 1.3 M documents, in 209 s at a peak RSS of 440 MiB).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from worldforge.datasets.output import export_worlds
from worldforge.errors import WorldforgeError
from worldforge.warehouse.atomic import atomic_dir
from worldforge.warehouse.layout import Warehouse

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


def export_browsecomp_plus(warehouse: Warehouse, worlds: Iterable[str], out: str | Path, scenario: str | None = None,
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
    import pyarrow as pa
    import pyarrow.parquet as pq

    from worldforge.corpus.store import corpus_scenarios, read_corpus
    from worldforge.tasks.deep import read_deep_questions

    names = export_worlds(warehouse, worlds)
    schema = pa.schema([("docid", pa.string()), ("text", pa.string()), ("url", pa.string())])
    docs = queries = evidence = gold = 0
    out = Path(out)
    with atomic_dir(out) as tmp, contextlib.ExitStack() as files:
        qrels = tmp / "topics-qrels"
        qrels.mkdir()
        (tmp / "corpus_jsonl").mkdir()

        def text(rel: str):
            return files.enter_context((tmp / rel).open("w", encoding="utf-8"))

        parquet = files.enter_context(pq.ParquetWriter(tmp / "corpus.parquet", schema, compression="zstd"))
        jsonl, docids, tsv = text("corpus_jsonl/docs.jsonl"), text("docids.tsv"), text("topics-qrels/queries.tsv")
        ev, gd, gt = text("topics-qrels/qrel_evidence.txt"), text("topics-qrels/qrel_golds.txt"), text("browsecomp_plus.jsonl")
        docids.write("docid\tworld\tscenario\turl\n")
        # World by world, in name order: docids count up through the worlds (each world's pages by URL), query ids
        # through their questions (each world's by question id). Only one world is in memory at a time, so a catalog
        # of any size exports in the memory of its largest world.
        for w in sorted(names):
            if progress:
                progress(w)
            path = warehouse.world(w)
            if scenario is not None and scenario not in corpus_scenarios(path):
                continue  # this world has no such scenario
            pages, _ = read_corpus(path, scenario, dressed=True)
            rows = sorted(pages.select("url", "title", "body_md").iter_rows())
            ids = [str(docs + i) for i in range(1, len(rows) + 1)]
            docs += len(rows)
            texts = [f"{title}\n\n{body}" for _, title, body in rows]
            urls = [u for u, _, _ in rows]
            parquet.write_table(pa.table({"docid": ids, "text": texts, "url": urls}, schema=schema))
            jsonl.writelines(json.dumps({"id": d, "contents": t}, ensure_ascii=False) + "\n" for d, t in zip(ids, texts))
            docids.writelines(f"{d}\t{w}\t{scenario or ''}\t{u}\n" for d, u in zip(ids, urls))
            docid = dict(zip(urls, ids))
            for q in sorted(read_deep_questions(path, scenario), key=lambda q: q.question_id):
                ev_ids = [docid[u] for u in q.evidence_urls if u in docid]
                gold_ids = [docid[u] for u in q.gold_urls if u in docid]
                if len(ev_ids) != len(q.evidence_urls) or len(gold_ids) != len(q.gold_urls):
                    raise WorldforgeError(f"{q.question_id}: an evidence page is not in its corpus (rebuild the world's tasks)")
                queries += 1
                tsv.write(f"{queries}\t{_one_line(q.question)}\n")
                ev.writelines(f"{queries} Q0 {d} 1\n" for d in ev_ids)
                gd.writelines(f"{queries} Q0 {d} 1\n" for d in gold_ids)
                evidence, gold = evidence + len(ev_ids), gold + len(gold_ids)
                gt.write(json.dumps({"query_id": str(queries), "query": q.question, "answer": q.answer,
                                     "evidence_docs": [{"docid": d, "url": u} for d, u in zip(ev_ids, q.evidence_urls)],
                                     "gold_docs": [{"docid": d, "url": u} for d, u in zip(gold_ids, q.gold_urls)],
                                     "worldforge_id": q.question_id, "answer_type": q.answer_type, "hops": q.hops},
                                    ensure_ascii=False) + "\n")
        if not docs:
            raise WorldforgeError(f"none of the worlds has the scenario {scenario!r}")
    return BrowseCompPlusExport(out, names, docs, queries, evidence, gold)

