"""Retriever training data from worlds: (query, positive page, hard negative pages), as sentence-transformers trains on.

One row per (query, positive page), in the column layout sentence-transformers' trainer reads for
``MultipleNegativesRankingLoss`` (and its cached and GIST variants): the columns are taken by position, the first the
anchor, the second its positive, the rest its hard negatives, and every column but a label column is embedded as text.

* ``train.parquet``, ``validation.parquet``, ``test.parquet`` (a split with no row is not written): ``anchor`` (the
  query), ``positive`` (a positive page's text: its title, a blank line, its stored article), ``negative`` (one hard
  negative's text; ``negative_1`` ... ``negative_n`` for ``n`` > 1). Nothing else: an id column would be embedded too;
* ``ids/<split>.parquet``: the ids of the split's rows, row for row: ``query_id``, ``world``, ``scenario``, ``source``
  (``deep`` | ``wide``), ``positive_url``, ``negative_urls`` (list of strings, in the order of the negative columns);
* ``queries.parquet``: one row per query written: ``query_id``, ``split``, ``world``, ``scenario``, ``source``, ``kind``
  (a deep question's pattern, a wide task's kind), ``query``, ``positive_urls`` (every positive page, best first), ``positive_cells`` (the query's cells each states);
* ``qrels.txt``: TREC qrels of every positive of every query written, ``query_id 0 url grade`` (pytrec_eval, ir_measures),
  the grade the number of the query's cells the page states (at least 1);
* ``dropped.tsv``: ``query_id<TAB>reason`` for every query not written; ``report.json`` and ``README.md`` (the dataset
  card, its YAML front matter naming the splits' files, so ``datasets.load_dataset(DIR)`` reads them).

Queries: every deep question (its question text) and every wide task (its question without the output instructions:
:func:`~worldforge.tasks.phrasing.without_requirements`) of one corpus a world (its own, or one time-shifted scenario's).

Positives: a deep question's evidence pages (``evidence_urls``: the pages stating a cell of its chain, the answer's
among them); a wide task's gold pages (the pages stating a cell its gold table is computed from, ``provenance.cells``,
in the same scope). Each query's positives are ranked by how many of its cells a page states (most first, then by
URL), and its best ``positives`` give one row each; ``qrels.txt`` and ``queries.parquet`` list them all.

Hard negatives: the query's BM25 hits in its own corpus (:func:`worldforge.corpus.search`, the top ``pool``), best
first, without any page that is a positive or *states the answer*. A page states the answer when it has a
``corpus_facts`` row of kind ``value`` (a stated cell) for (``table_name``, ``row_key``, ``column_name``) equal to

* for a deep question, one of its ``answer_cells`` (the cells its answer is read from), in any scope; or its article
  holds the answer text as a word sequence (case ignored; answers of four characters or more), recorded or not;
* for a wide task, any cell of ``provenance.cells`` (every cell of every gold row, inputs of computed cells included:
  the name of a listed row too), in any scope.

Row ``j`` of a query (its ``j``-th positive) takes ``n`` negatives in turn from the query's negatives,
``pool[(j*n + i) % len(pool)]``, so a query with many negatives gives its rows different ones. A query is dropped, and
counted with its reason, when it has no positive page in its corpus or fewer than ``n`` negatives in the top ``pool``.

Splits are by world (every query of a world in one split): ``holdout`` names the test worlds, or
:func:`~worldforge.datasets.hf.held_out_worlds` picks them by a stable hash (``test_share``); validation worlds are
picked from the others the same way (names hashing below ``test_share + validation_share``).

Rows of one query share its anchor: train with sentence-transformers' ``BatchSamplers.NO_DUPLICATES`` so that one
query's other positives are never in-batch negatives of its rows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from worldforge.datasets.card import md_table, render_card
from worldforge.datasets.hf import held_out_worlds
from worldforge.datasets.output import BuildReport, export_worlds, git_revision, write_report
from worldforge.errors import WorldforgeError
from worldforge.tally import Tally
from worldforge.warehouse.atomic import atomic_dir
from worldforge.warehouse.layout import Warehouse

__all__ = ["SPLITS", "RetrieverExport", "export_retriever", "negative_columns"]

SPLITS = ("train", "validation", "test")
"""The splits, in the order they are written."""


@dataclass(frozen=True)
class RetrieverExport:
    """What :func:`export_retriever` wrote.

    Attributes:
        out: the folder.
        worlds: the worlds read.
        splits: ``{split: [world, ...]}`` (every split, empty ones included).
        queries: queries read (deep questions and wide tasks); ``queries == kept + sum(dropped.values())``.
        kept: queries written (each with at least one positive and ``negatives`` negatives a row).
        dropped: ``{reason: queries}`` not written.
        rows: ``{split: rows}`` written (one per query and positive, at most ``positives`` a query).
        by_world: ``{world: {"queries", "rows", "positives", "negatives"}}``: queries written, their rows, their
            positive pages (all, not only those given a row) and their distinct negative pages.
    """

    out: Path
    worlds: list[str]
    splits: dict[str, list[str]]
    queries: int
    kept: int
    dropped: dict[str, int]
    rows: dict[str, int]
    by_world: dict[str, dict[str, int]] = field(default_factory=dict)


def negative_columns(n: int) -> list[str]:
    """The negative columns for ``n`` negatives a row: ``["negative"]`` for one, ``negative_1`` ... ``negative_n`` else."""
    return ["negative"] if n == 1 else [f"negative_{i}" for i in range(1, n + 1)]


@dataclass
class _Query:
    query_id: str
    source: str
    kind: str
    text: str
    positives: list[str]  # ranked, best first
    grades: list[int]  # cells of the query each positive states
    excluded: set[str]  # positives and the pages stating the answer: never a negative


def _ranked(urls: Iterable[str], cells: set[tuple], stated: dict[str, set[tuple]]) -> tuple[list[str], list[int]]:
    """``urls`` ordered by how many of ``cells`` each states (most first), then by URL; and those counts."""
    got = sorted(((-len(stated.get(u, set()) & cells), u) for u in set(urls)))
    return [u for _, u in got], [-n for n, _ in got]


def _queries(path: Path, scenario: str | None, pages, facts) -> list[_Query]:
    """The deep questions and wide tasks of one corpus with their ranked positives and their excluded pages (module docstring)."""
    from worldforge.tasks.deep import read_deep_questions
    from worldforge.tasks.phrasing import without_requirements
    from worldforge.tasks.store import read_tasks

    urls = set(pages["url"].to_list())
    articles = dict(zip(pages["url"].to_list(), pages["body_md"].to_list()))
    titles = dict(zip(pages["url"].to_list(), pages["title"].to_list()))
    by_cell: dict[tuple, set[str]] = {}  # (table, key, column) -> pages stating it, any scope
    by_scoped: dict[tuple, set[str]] = {}  # (table, key, column, scope or "") -> pages
    stated: dict[str, set[tuple]] = {}  # page -> (table, key, column) it states
    for u, t, k, c, s in facts.select("url", "table_name", "row_key", "column_name", "scope").iter_rows():
        by_cell.setdefault((t, k, c), set()).add(u)
        by_scoped.setdefault((t, k, c, s or ""), set()).add(u)
        stated.setdefault(u, set()).add((t, k, c))
    out = []
    for q in read_deep_questions(path, scenario):
        chain = {tuple(x[:3]) for x in q.cells}
        answer = {tuple(x[:3]) for x in q.answer_cells}
        excluded = set(q.evidence_urls).union(*(by_cell.get(c, set()) for c in answer))
        if len(q.answer.strip()) >= 4:
            said = re.compile(r"(?<!\w)" + r"\s+".join(map(re.escape, q.answer.split())) + r"(?!\w)", re.IGNORECASE)
            excluded |= {u for u in urls if said.search(titles[u]) or said.search(articles[u])}
        out.append(_Query(q.question_id, "deep", q.pattern, q.question, *_ranked((u for u in q.evidence_urls if u in urls), chain, stated),
                          excluded))
    for t in read_tasks(path, scenario):
        cells = [tuple(x) for x in t.extra["provenance"]["cells"]]
        plain = {c[:3] for c in cells}
        gold = set().union(*(by_scoped.get((a, b, c, s or ""), set()) for a, b, c, s in cells))
        excluded = gold.union(*(by_cell.get(c, set()) for c in plain))
        out.append(_Query(t.instance_id, "wide", t.extra.get("kind") or "", without_requirements(t.question).strip(),
                          *_ranked(gold, plain, stated), excluded))
    return out


def _splits(names: list[str], holdout: Iterable[str] | None, test_share: float, validation_share: float) -> dict[str, str]:
    """``{world: split}`` (module docstring)."""
    if holdout is not None:
        test = set(holdout)
        unknown = sorted(test - set(names))
        if unknown:
            raise WorldforgeError(f"holdout worlds not among the worlds exported: {', '.join(unknown)}")
    else:
        test = held_out_worlds(names, test_share)
    rest = [w for w in names if w not in test]
    validation = held_out_worlds(rest, test_share + validation_share) if validation_share > 0 else set()
    return {w: "test" if w in test else "validation" if w in validation else "train" for w in names}


def export_retriever(warehouse: Warehouse, worlds: Iterable[str], out: str | Path, negatives: int = 3, positives: int = 3,
                     pool: int = 100, scenario: str | None = None, holdout: Iterable[str] | None = None, test_share: float = 0.1,
                     validation_share: float = 0.1, progress: Callable[[str], None] | None = None) -> RetrieverExport:
    """Write (query, positive, hard negatives) rows of ``worlds`` for sentence-transformers (module docstring: files,
    positives, what "states the answer" means, splits).

    Args:
        warehouse: the warehouse holding the worlds (corpus and tasks built: ``corpus_pages``, ``corpus_facts``,
            ``search_tasks``, ``deep_questions``); BM25 indexes are built beside the world files when missing.
        worlds: world names.
        out: the folder to write (replaced whole, atomically: a failed export leaves the previous one).
        negatives: hard negatives a row (1 or more).
        positives: rows a query at most (its best positives, one row each; 1 or more).
        pool: BM25 hits read per query to find its negatives (at least ``negatives``).
        scenario: the corpus and queries of that time-shifted scenario (each world that has it); ``None``: the worlds' own.
        holdout: the test worlds (among ``worlds``); ``None``: picked by ``test_share``.
        test_share, validation_share: shares of worlds in test and validation (stable hash of the name, in [0, 1]).
        progress: called with each world's name as it is read.

    Returns:
        The counts written (:class:`RetrieverExport`).

    Raises:
        WorldforgeError: no world given or a world missing; a world without its corpus or tasks; ``negatives``,
            ``positives`` or ``pool`` out of range, shares outside [0, 1]; a holdout world not exported; no query
            written at all (the reasons counted).
        AssertionError: an invariant broke (a row without a positive, a negative that is a positive or states the
            answer, counts that do not balance): a bug, never bad input.
    """
    from worldforge.corpus import search
    from worldforge.corpus.store import corpus_scenarios, read_corpus

    if negatives < 1 or positives < 1 or pool < negatives:
        raise WorldforgeError(f"need negatives >= 1, positives >= 1 and pool >= negatives (got {negatives}, {positives}, {pool})")
    if not (0.0 <= test_share <= 1.0 and 0.0 <= validation_share <= 1.0):
        raise WorldforgeError(f"test and validation shares must be between 0 and 1, not {test_share} and {validation_share}")
    names = export_worlds(warehouse, worlds)
    split_of = _splits(names, holdout, test_share, validation_share)
    neg_cols = negative_columns(negatives)
    schema = pa.schema([("anchor", pa.string()), ("positive", pa.string())] + [(c, pa.string()) for c in neg_cols])
    id_schema = pa.schema([("query_id", pa.string()), ("world", pa.string()), ("scenario", pa.string()), ("source", pa.string()),
                           ("positive_url", pa.string()), ("negative_urls", pa.list_(pa.string()))])
    rows: dict[str, list[dict]] = {s: [] for s in SPLITS}
    ids: dict[str, list[dict]] = {s: [] for s in SPLITS}
    queries: list[dict] = []
    dropped_ids: list[tuple[str, str]] = []
    tally = Tally(unit="queries", kept_as="written", dropped_as="dropped")
    by_world: dict[str, dict[str, int]] = {}
    for w in names:
        if progress:
            progress(w)
        path = warehouse.world(w)
        if scenario is not None and scenario not in corpus_scenarios(path):
            continue
        pages, facts = read_corpus(path, scenario, dressed=False)
        text = {u: f"{t}\n\n{b}" for u, t, b in pages.select("url", "title", "body_md").iter_rows()}
        split = split_of[w]
        counts = by_world.setdefault(w, {"queries": 0, "rows": 0, "positives": 0, "negatives": 0})
        negs_seen: set[str] = set()
        for q in _queries(path, scenario, pages, facts):
            tally.take()
            if not q.positives:
                tally.drop("no positive page in its corpus")
                dropped_ids.append((q.query_id, "no positive page in its corpus"))
                continue
            hits = dict.fromkeys(h.url for h in search(w, q.text, pool, warehouse, scenario, retriever="bm25"))
            found = [u for u in hits if u not in q.excluded and u in text]
            if len(found) < negatives:
                reason = f"fewer than {negatives} hard negatives in the top {pool} BM25 hits"
                tally.drop(reason)
                dropped_ids.append((q.query_id, reason))
                continue
            tally.keep()
            counts["queries"] += 1
            counts["positives"] += len(q.positives)
            for j, pos in enumerate(q.positives[:positives]):
                chosen = [found[(j * negatives + i) % len(found)] for i in range(negatives)]
                if pos not in q.positives or any(u in q.excluded or u in q.positives for u in chosen):
                    raise AssertionError(f"{q.query_id}: a negative is a positive or states the answer")
                negs_seen.update(chosen)
                rows[split].append({"anchor": q.text, "positive": text[pos], **{c: text[u] for c, u in zip(neg_cols, chosen)}})
                ids[split].append({"query_id": q.query_id, "world": w, "scenario": scenario, "source": q.source, "positive_url": pos,
                                   "negative_urls": chosen})
                counts["rows"] += 1
            queries.append({"query_id": q.query_id, "split": split, "world": w, "scenario": scenario, "source": q.source,
                            "kind": q.kind, "query": q.text, "positive_urls": q.positives, "positive_cells": q.grades})
        counts["negatives"] = len(negs_seen)
    if not tally.balanced:
        raise AssertionError(f"queries in {tally.inputs} != written {tally.kept} + dropped {tally.dropped_total}")
    if not tally.kept:
        where = f" with the scenario {scenario!r}" if scenario else ""
        why = "; ".join(f"{k}: {v}" for k, v in sorted(tally.dropped.items())) or "no deep question or wide task"
        raise WorldforgeError(f"no query to write from the worlds{where} ({why})")
    out = Path(out)
    report = BuildReport("retriever", out, tally=tally, samples=sum(len(r) for r in rows.values()))
    report.config = {"worlds": names, "negatives": negatives, "positives": positives, "pool": pool, "scenario": scenario,
                     "holdout": sorted(holdout) if holdout is not None else None, "test_share": test_share,
                     "validation_share": validation_share}
    report.stats = {"splits": {s: sorted(w for w in names if split_of[w] == s) for s in SPLITS}, "by_world": by_world}
    data_files = {}
    with atomic_dir(out) as tmp:
        (tmp / "ids").mkdir()
        for s in SPLITS:
            if not rows[s]:
                continue
            pq.write_table(pa.Table.from_pylist(rows[s], schema=schema), tmp / f"{s}.parquet", compression="zstd")
            pq.write_table(pa.Table.from_pylist(ids[s], schema=id_schema), tmp / "ids" / f"{s}.parquet", compression="zstd")
            data_files[s] = f"{s}.parquet"
            report.files[f"{s}.parquet"] = report.files[f"ids/{s}.parquet"] = len(rows[s])
        pq.write_table(pa.Table.from_pylist(queries), tmp / "queries.parquet", compression="zstd")
        report.files["queries.parquet"] = len(queries)
        qrels = [f"{q['query_id']} 0 {u} {max(g, 1)}\n" for q in queries for u, g in zip(q["positive_urls"], q["positive_cells"])]
        (tmp / "qrels.txt").write_text("".join(qrels), encoding="utf-8")
        report.files["qrels.txt"] = len(qrels)
        (tmp / "dropped.tsv").write_text("query_id\treason\n" + "".join(f"{i}\t{r}\n" for i, r in dropped_ids), encoding="utf-8")
        report.files["dropped.tsv"] = len(dropped_ids)
        write_report(tmp, report)
        (tmp / "README.md").write_text(_card(report, neg_cols, data_files, by_world), encoding="utf-8")
    return RetrieverExport(out, names, report.stats["splits"], tally.inputs, tally.kept, dict(tally.dropped),
                           {s: len(rows[s]) for s in SPLITS}, by_world)


def _card(report: BuildReport, neg_cols: list[str], data_files: dict[str, str], by_world: dict[str, dict[str, int]]) -> str:
    cols = ", ".join(f"`{c}`" for c in ["anchor", "positive", *neg_cols])
    summary = (f"Retriever training data from worldforge's fictional worlds: one row per (query, positive page) with hard negatives, "
               f"columns {cols} in that order (sentence-transformers reads them by position: `MultipleNegativesRankingLoss`). "
               "Queries are deep questions and wide tasks; positives are their evidence pages (deep) or the pages stating their gold "
               "cells (wide); negatives are BM25 hits of the query in its world's corpus that are not positives and state no answer "
               "cell per the corpus's provenance (`corpus_facts`). Splits are by world. Row-aligned ids are in `ids/<split>.parquet`, "
               "every query in `queries.parquet`, TREC qrels in `qrels.txt`, dropped queries in `dropped.tsv`.")
    splits = report.stats["splits"]
    sections = [("Splits", md_table([{"split": s, "worlds": ", ".join(splits[s]) or "-", "rows": report.files.get(f"{s}.parquet", 0)}
                                     for s in SPLITS])),
                ("Per world", md_table([{"world": w, **c} for w, c in sorted(by_world.items())])),
                ("Training", "Use `batch_sampler=BatchSamplers.NO_DUPLICATES`: rows of one query share its anchor.\n")]
    return render_card("worldforge retriever data", summary, report, report.config, git_revision(), data_files, sections)
