"""Benchmark: BM25, dense and hybrid retrieval over generated worlds, against their evidence and gold pages.

For each world (the bundled specs in ``world_specs/``, and with ``--catalog N`` the first N worlds of
``generate_catalog(N, seed=0)``): build the world, its corpus and its tasks, build the tiny static embedding model
(:func:`worldforge.corpus.index.world_embedder`: vocabulary counted from the world's pages, fine-tuned on its
title-passage pairs), index the world's corpus with BM25 and dense (``quantize="none"``, then again ``"sq8"``), and search
through :func:`worldforge.corpus.search` with each retriever. Query sets and their relevance judgements (qrels):

* ``deep/evidence``: each deep question's text, judged against its ``evidence_urls`` (BrowseComp-Plus's evidence
  documents: every page stating a cell of the question's chain);
* ``deep/gold``: the same queries, against ``gold_urls`` (the pages stating the answer);
* ``wide/gold``: each wide task's question, against the pages stating any cell it is computed from
  (``provenance.cells`` looked up in ``corpus_facts``, same scope).

Figures per retriever and query set (pooled over the worlds' queries, ``pytrec_eval``: the TREC measures):
recall@10, recall@100, nDCG@10. Then search speed on distinct queries (every query searched once per retriever at
k=10: the open index's hit cache never answers), as queries/s, and the ratio dense/BM25 (target, the retrieval
issue: dense >= 0.5x BM25's queries/s with the tiny model); index build time per world (BM25, dense) and the
dense index's bytes, exact and ``sq8``.

The model of these figures is the one ``worldforge corpus embedder --world`` builds: random init, then fine-tuned on
the world's own page titles and passages (weak supervision, as e5's title-passage pairs).

``--train``: :func:`train_and_evaluate`, the held-out experiment: a tiny model trained with sentence-transformers'
own trainer (``MultipleNegativesRankingLoss``, hard negatives included) on ``worldforge export retriever`` rows of
``--train-worlds`` catalog worlds (topics none of the benchmark's worlds has), evaluated on the benchmark's worlds
against the untrained model of the same shape and tokenizer, and against BM25, dense and hybrid each.

Usage: python bench/retrieval.py [--small] [--catalog N] [--train [--train-worlds 6 --epochs 1]]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# bench/ itself off the path: its datasets.py would shadow Hugging Face's ``datasets``, which sentence-transformers imports
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]

import pytrec_eval  # noqa: E402

from worldforge.corpus import build_corpus, read_corpus, search  # noqa: E402
from worldforge.corpus.index import RetrieverConfig, build_dense_index, build_index, world_embedder  # noqa: E402
from worldforge.corpus.store import article_text  # noqa: E402
from worldforge.retrieval.embed import EmbeddingConfig, embedder  # noqa: E402
from worldforge.retrieval.tiny import build_tiny_embedding_model  # noqa: E402
from worldforge.retrieval.train import train_embedding_model  # noqa: E402
from worldforge.tasks.deep import read_deep_questions  # noqa: E402
from worldforge.tasks.store import build_tasks, read_tasks  # noqa: E402
from worldforge.warehouse import Warehouse  # noqa: E402
from worldforge.world import build_world_file  # noqa: E402

MEASURES = {"recall.10", "recall.100", "ndcg_cut.10"}
COLUMNS = (("recall_10", "R@10"), ("recall_100", "R@100"), ("ndcg_cut_10", "nDCG@10"))
RETRIEVERS = ("bm25", "dense", "dense-sq8", "hybrid")
QPS_TARGET = 0.5  # dense queries/s >= 0.5x BM25's


@dataclass
class World:
    """One benchmark world: its file, its queries with their qrels, and what building its indexes took."""

    name: str
    path: Path
    pages: int
    queries: dict[str, dict[str, str]] = field(default_factory=dict)  # query set -> {qid: text}
    qrels: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)  # query set -> {qid: {url: 1}}
    build_s: dict[str, float] = field(default_factory=dict)  # bm25, dense, dense-sq8
    bytes: dict[str, int] = field(default_factory=dict)  # dense, dense-sq8


def build_bench_world(spec: Path, wh: Path, seed: int | None = None) -> tuple[Path, list[str]]:
    """A world file with its corpus and tasks (scenarios left out: the benchmark searches the world's corpus);
    returns it with its pages' text (title and article) for the model's tokenizer."""
    built = build_world_file(spec, Warehouse(wh), seed=seed, with_scenarios=False)
    if built.path is None:
        raise SystemExit(f"{spec}: the world breaks an invariant")
    build_corpus(built.path)
    build_tasks(built.path, include_scenarios=False)
    pages = read_corpus(built.path, None, dressed=False)[0]
    return built.path, [f"{r['title']}\n{article_text(r)}" for r in pages.iter_rows(named=True)]


def judged_queries(path: Path) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, dict[str, int]]]]:
    """The world's query sets (module doc) and their qrels; a query without a judged page is left out."""
    world = path.name[: -len(".duckdb")]
    queries: dict[str, dict[str, str]] = defaultdict(dict)
    qrels: dict[str, dict[str, dict[str, int]]] = defaultdict(dict)
    for q in read_deep_questions(path):
        qid = f"{world}/{q.question_id}"
        for name, urls in (("deep/evidence", q.evidence_urls), ("deep/gold", q.gold_urls)):
            if urls:
                queries[name][qid], qrels[name][qid] = q.question, {u: 1 for u in urls}
    facts = read_corpus(path, None, dressed=False)[1]
    stating: dict[tuple, set[str]] = defaultdict(set)
    for url, t, k, c, s in facts.select("url", "table_name", "row_key", "column_name", "scope").unique().iter_rows():
        stating[(t, k, c, s or "")].add(url)
    for t in read_tasks(path):
        urls = set().union(*(stating.get((a, b, c, s or ""), set()) for a, b, c, s in t.extra["provenance"]["cells"]))
        if urls:
            qid = f"{world}/{t.instance_id}"
            queries["wide/gold"][qid], qrels["wide/gold"][qid] = t.question, {u: 1 for u in sorted(urls)}
    return dict(queries), dict(qrels)


def run_queries(world: str, wh: Path, queries: dict[str, str], retriever: str, k: int = 100) -> dict[str, dict[str, float]]:
    """A TREC run: ``{qid: {url: score}}`` of ``search()`` at depth ``k``."""
    warehouse = Warehouse(wh)
    return {qid: {h.url: float(h.score) for h in search(world, text, k, warehouse, retriever=retriever)} for qid, text in queries.items()}


def evaluate(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """Per-query measures (:data:`MEASURES`) by ``pytrec_eval``; a query the run left empty scores 0."""
    return pytrec_eval.RelevanceEvaluator(qrels, MEASURES).evaluate({q: run.get(q) or {"-": 0.0} for q in qrels})


def index_world_timed(w: World, model: Path, wh: Path) -> None:
    """BM25 and dense (exact) indexes of the world's corpus, fresh, timed (the model's load apart)."""
    t = time.perf_counter()
    build_index(w.path)
    w.build_s["bm25"] = time.perf_counter() - t
    cfg = RetrieverConfig("hybrid", EmbeddingConfig(str(model)))
    t = time.perf_counter()
    embedder(cfg.embedding)  # the model's load, once a process: timed apart from the index build
    w.build_s["model load"] = time.perf_counter() - t
    t = time.perf_counter()
    built = build_dense_index(w.path, None, cfg)
    w.build_s["dense"] = time.perf_counter() - t
    w.bytes["dense"] = built.bytes


def sq8_copy(w: World, model: Path, wh_sq8: Path) -> Path:
    """The world file copied into ``wh_sq8`` and indexed there with ``quantize="sq8"`` (a fresh embedding: timed), so
    that the exact and the sq8 dense index of one world are searched side by side."""
    import shutil

    wh_sq8.mkdir(parents=True, exist_ok=True)
    copy = wh_sq8 / w.path.name
    shutil.copy2(w.path, copy)
    build_index(copy)
    t = time.perf_counter()
    built = build_dense_index(copy, None, RetrieverConfig("dense", EmbeddingConfig(str(model)), "sq8"))
    w.build_s["dense-sq8"] = time.perf_counter() - t
    w.bytes["dense-sq8"] = built.bytes
    return copy


def speed(worlds: list[tuple[World, Path, Path]], per_world: int) -> dict[str, float]:
    """Queries/s of ``search()`` per retriever at k=10, on distinct queries (the worlds' query texts, then page
    titles with a word added, up to ``per_world`` a world), each searched once per retriever after a warm-up query."""
    qps = {}
    batches = []
    for w, wh, _ in worlds:
        texts = list(dict.fromkeys(x for qs in w.queries.values() for x in qs.values()))
        pages = read_corpus(w.path, None, dressed=False)[0]
        extra = [f"{t} {word}" for t, word in zip(pages["title"].to_list(), ("price", "date", "rank", "total", "record") * 10_000)]
        batches.append((w.name, Warehouse(wh), (texts + extra)[:per_world]))
    for how in ("bm25", "dense", "hybrid"):
        n, secs = 0, 0.0
        for name, wh, texts in batches:
            search(name, f"warm-up {how}", 10, wh, retriever=how)
            t = time.perf_counter()
            for x in texts:
                search(name, x, 10, wh, retriever=how)
            secs += time.perf_counter() - t
            n += len(texts)
        qps[how] = n / secs
    return qps


def metrics_table(rows: dict[tuple[str, str], list[dict[str, float]]]) -> list[str]:
    out = [f"{'query set':<14} {'retriever':<16} {'queries':>7} " + " ".join(f"{h:>8}" for _, h in COLUMNS)]
    for (qset, how), per_query in sorted(rows.items(), key=lambda kv: (kv[0][0], RETRIEVERS.index(kv[0][1]) if kv[0][1] in RETRIEVERS else 9, kv[0][1])):
        means = [statistics.mean(q[m] for q in per_query) for m, _ in COLUMNS]
        out.append(f"{qset:<14} {how:<16} {len(per_query):>7} " + " ".join(f"{v:>8.3f}" for v in means))
    return out


def specs_to_run(args, tmp: Path) -> list[Path]:
    specs = sorted((ROOT / "world_specs").glob("*.yaml"))
    if args.small:
        specs = specs[:1]
    if args.catalog:
        from worldforge.catalog.generate import generate_catalog

        specs += generate_catalog(args.catalog, 0, tmp / "catalog-specs").paths
    return specs


# --- training (``--train``) ------------------------------------------------------------------------------------------


def training_rows(tmp: Path, train_worlds: int) -> tuple[dict[str, list[str]], list[str], int, int]:
    """The training set of the held-out experiment: ``train_worlds`` catalog worlds (``generate_catalog(n, seed=7)``:
    topics of the archetype library, none of them a bundled world's), each built with its corpus and tasks, exported
    with ``worldforge export retriever`` (every world in the train split) and read back as sentence-transformers'
    columns (``anchor``, ``positive``, ``negative_1..3``). Returns ``(rows, the worlds' page texts, queries, worlds)``."""
    import polars as pl

    from worldforge.catalog.generate import generate_catalog
    from worldforge.datasets.retriever import export_retriever

    wh = tmp / "train-wh"
    names, texts = [], []
    for spec in generate_catalog(train_worlds, 7, tmp / "train-specs").paths:
        try:
            path, pages = build_bench_world(spec, wh)
        except SystemExit:  # a generated spec whose world breaks an invariant: not a training world
            continue
        names.append(path.name[: -len(".duckdb")])
        texts += pages
    export = export_retriever(Warehouse(wh), names, tmp / "train-export", test_share=0.0, validation_share=0.0)
    frame = pl.read_parquet(export.out / "train.parquet")
    return {c: frame[c].to_list() for c in frame.columns}, texts, export.kept, len(names)


def train_and_evaluate(tmp: Path, eval_worlds: list[World], train_worlds: int, epochs: int) -> list[str]:
    """The held-out experiment (module doc): a model trained on the retriever export of catalog worlds, evaluated on
    the benchmark's worlds (never trained on) against the untrained model of the same shape and tokenizer, and against
    BM25. Returns the table's lines."""
    import shutil


    t0 = time.perf_counter()
    rows, texts, queries, built = training_rows(tmp, train_worlds)
    base = build_tiny_embedding_model(tmp / "shared-untrained", texts=texts)
    t1 = time.perf_counter()
    trained = train_embedding_model(base, rows, tmp / "shared-trained", epochs=epochs).out_dir
    t2 = time.perf_counter()
    table: dict[tuple[str, str], list[dict[str, float]]] = defaultdict(list)
    for name, model in (("untrained", base), ("trained", trained)):
        for w in eval_worlds:
            wh = tmp / f"train-eval-{name}"
            wh.mkdir(exist_ok=True)
            copy = wh / w.path.name
            shutil.copy2(w.path, copy)
            build_index(copy)
            build_dense_index(copy, None, RetrieverConfig("hybrid", EmbeddingConfig(str(model))))
            for qset, qs in w.queries.items():
                if name == "untrained":
                    table[(qset, "bm25")] += evaluate(w.qrels[qset], run_queries(w.name, wh, qs, "bm25")).values()
                table[(qset, f"dense {name}")] += evaluate(w.qrels[qset], run_queries(w.name, wh, qs, "dense")).values()
                table[(qset, f"hybrid {name}")] += evaluate(w.qrels[qset], run_queries(w.name, wh, qs, "hybrid")).values()
    head = (f"training: the retriever export of {built} catalog worlds (generate_catalog seed 7), {queries} queries, "
            f"{len(rows['anchor'])} rows (anchor, positive, {sum(c.startswith('negative') for c in rows)} hard negatives); "
            f"worlds + export + tokenizer {t1 - t0:.0f} s, {epochs} epoch(s) of MultipleNegativesRankingLoss {t2 - t1:.0f} s; "
            f"evaluated on the {len(eval_worlds)} held-out benchmark world(s)")
    return [head, *metrics_table(table)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--small", action="store_true", help="one world, few speed queries (seconds, make test), not the figures")
    ap.add_argument("--catalog", type=int, default=0, metavar="N", help="also the first N worlds of generate_catalog(N, seed=0)")
    ap.add_argument("--speed-queries", type=int, default=400, help="distinct queries per world for queries/s")
    ap.add_argument("--train", action="store_true", help="also train a tiny model on other worlds and evaluate it on these")
    ap.add_argument("--train-worlds", type=int, default=8, help="--train: catalog worlds to train on")
    ap.add_argument("--epochs", type=int, default=1)
    args = ap.parse_args()
    if args.small:
        args.speed_queries = 60
    started = time.perf_counter()
    rows: dict[tuple[str, str], list[dict[str, float]]] = defaultdict(list)
    worlds: list[tuple[World, Path, Path]] = []
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        for i, spec in enumerate(specs_to_run(args, tmp)):
            wh = tmp / f"w{i}"
            path, texts = build_bench_world(spec, wh)
            w = World(path.name[: -len(".duckdb")], path, len(texts))
            w.queries, w.qrels = judged_queries(path)
            model = wh / "tiny-embedder"
            world_embedder(path, model)  # what `corpus embedder --world` builds
            index_world_timed(w, model, wh)
            copy = sq8_copy(w, model, tmp / f"w{i}-sq8")
            worlds.append((w, wh, copy.parent))
            for qset, queries in w.queries.items():
                for how in RETRIEVERS:
                    where, retr = (copy.parent, "dense") if how == "dense-sq8" else (wh, how)
                    rows[(qset, how)] += evaluate(w.qrels[qset], run_queries(w.name, where, queries, retr)).values()
        qps = speed(worlds, args.speed_queries)
        train_lines = train_and_evaluate(tmp, [w for w, _, _ in worlds], args.train_worlds, args.epochs) if args.train else []

    print(f"retrieval: {len(worlds)} world(s), tiny static model (dim 64, tokenizer trained on each world's pages, fine-tuned on its "
          f"title-passage pairs: `worldforge corpus embedder --world`), "
          f"{time.perf_counter() - started:.0f} s")
    for w, _, _ in worlds:
        print(f"  {w.name}: {w.pages} pages; queries " + ", ".join(f"{k} {len(v)}" for k, v in sorted(w.queries.items()))
              + f"; build BM25 {w.build_s['bm25'] * 1000:.0f} ms, dense {w.build_s['dense'] * 1000:.0f} ms "
              f"({w.bytes['dense'] / 1024:.0f} KiB; model load {w.build_s['model load'] * 1000:.0f} ms apart), dense sq8 {w.build_s['dense-sq8'] * 1000:.0f} ms ({w.bytes['dense-sq8'] / 1024:.0f} KiB, "
              f"{w.bytes['dense'] / max(1, w.bytes['dense-sq8']):.1f}x smaller)")
    print("\n".join(metrics_table(rows)))
    print("queries/s of search() (k=10, distinct queries, no hit cache): " + ", ".join(f"{h} {q:,.0f}" for h, q in qps.items()))
    ratio = qps["dense"] / qps["bm25"]
    print(f"ratio dense/bm25 queries/s: {ratio:.2f}x   [target: >= {QPS_TARGET}x]")
    if train_lines:
        print("\n".join(train_lines))
    ok = ratio >= QPS_TARGET
    print("PASS" if ok else "MISS")
    print(json.dumps({"qps": {h: round(q, 1) for h, q in qps.items()}, "ratio_dense_bm25": round(ratio, 3)}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
