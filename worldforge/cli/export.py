"""``worldforge export browsecomp-plus | hf | search-r1 | retriever``: worlds' deep questions and corpora in BrowseComp-Plus's layout; tasks as a Hugging Face dataset; deep questions as Search-R1 training data; queries with positive and hard-negative pages for sentence-transformers."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from worldforge.cli._common import WarehouseOpt, out, user_errors, warehouse_of
from worldforge.errors import WorldforgeError

app = typer.Typer(help="Export worlds in other benchmarks' layouts.", no_args_is_help=True)


def _replaceable(folder: Path, marker: str, warehouse: Path) -> None:
    """Refuse to replace a folder that is not an earlier export of this kind (it holds ``marker``), or that holds the warehouse.

    Raises:
        WorldforgeError: the folder is a file, holds the warehouse, or is a non-empty folder without ``marker``.
    """
    folder, wh = folder.resolve(), warehouse.resolve()
    if folder.is_file():
        raise WorldforgeError(f"{folder}: is a file; name a folder to write")
    if folder == wh or folder in wh.parents:
        raise WorldforgeError(f"{folder}: holds the warehouse; name a new folder to write")
    if folder.is_dir() and any(folder.iterdir()) and not (folder / marker).exists():
        raise WorldforgeError(f"{folder}: is not empty and is not an earlier export (no {marker}); name a new or empty folder")


def _export(output: Path, worlds: list[str] | None, warehouse: Path | None, marker: str, write):
    """Run ``write(warehouse, names, output, progress)`` for the worlds named (comma-separated or repeated; none: every
    world of the warehouse) into ``output`` once :func:`_replaceable` allows it, with a status line; returns its result."""
    wh = warehouse_of(warehouse)
    names = [w.strip() for item in (worlds or []) for w in item.split(",") if w.strip()] or [p.stem for p in wh.world_files()]
    with user_errors():
        _replaceable(output, marker, wh.root)
        with out.status("reading worlds") as status:
            return write(wh, names, output, lambda w: status.update(f"reading {w}"))


@app.command("browsecomp-plus")
def browsecomp_plus(
    output: Annotated[Path, typer.Option("-o", "--out", help="The folder to write (replaced whole).")],
    worlds: Annotated[Optional[list[str]], typer.Option("--worlds", help="World names, repeated or comma-separated; default: every world of the warehouse.", show_default=False)] = None,
    scenario: Annotated[Optional[str], typer.Option("--scenario", help="Export this time-shifted scenario's corpora and questions instead of the worlds' own.", show_default=False)] = None,
    warehouse: WarehouseOpt = None,
) -> None:
    """Write the worlds' deep questions and their corpora as BrowseComp-Plus reads them: corpus.parquet (docid, text, url),
    topics-qrels/queries.tsv, TREC qrels for evidence and gold documents, browsecomp_plus.jsonl (its ground truth) and
    corpus_jsonl/docs.jsonl ({"id", "contents"}, for Pyserini's BM25 index)."""
    from worldforge.datasets.browsecomp_plus import export_browsecomp_plus

    done = _export(output, worlds, warehouse, "docids.tsv",
                   lambda wh, names, folder, progress: export_browsecomp_plus(wh, names, folder, scenario, progress=progress))
    out.print(f"{done.queries:,} queries over {done.documents:,} documents from {len(done.worlds)} world(s) → {done.out} "
              f"(evidence pairs {done.evidence:,}, gold pairs {done.gold:,})")


@app.command("hf")
def hf(
    output: Annotated[Path, typer.Option("-o", "--out", help="The dataset folder to write (replaced whole).")],
    worlds: Annotated[Optional[list[str]], typer.Option("--worlds", help="World names, repeated or comma-separated; default: every world of the warehouse.", show_default=False)] = None,
    test_share: Annotated[float, typer.Option("--test-share", min=0.0, max=1.0, help="Share of worlds in the test split.")] = 0.2,
    warehouse: WarehouseOpt = None,
) -> None:
    """Write the worlds' wide tasks and deep questions as a Hugging Face dataset folder (configs wide and deep, train/test
    split by world, a dataset card): datasets.load_dataset(DIR, "deep") reads it offline."""
    from worldforge.datasets.hf import export_hf

    done = _export(output, worlds, warehouse, "wide/train.parquet",
                   lambda wh, names, folder, progress: export_hf(wh, names, folder, test_share, progress=progress))
    parts = "; ".join(f"{c}: train {r['train']:,}, test {r['test']:,}" for c, r in done.rows.items())
    out.print(f"{len(done.worlds)} world(s) → {done.out} ({parts})")


@app.command("search-r1")
def search_r1(
    output: Annotated[Path, typer.Option("-o", "--out", help="The folder to write (replaced whole): train.parquet and test.parquet.")],
    worlds: Annotated[Optional[list[str]], typer.Option("--worlds", help="World names, repeated or comma-separated; default: every world of the warehouse.", show_default=False)] = None,
    scenario: Annotated[Optional[str], typer.Option("--scenario", help="Export this time-shifted scenario's questions instead of the worlds' own.", show_default=False)] = None,
    data_source: Annotated[str, typer.Option("--data-source", help="Every row's data_source: Search-R1 picks its reward function by it (nq, hotpotqa, ... use its exact match).")] = "worldforge",
    test_share: Annotated[float, typer.Option("--test-share", min=0.0, max=1.0, help="Share of worlds in the test split.")] = 0.2,
    warehouse: WarehouseOpt = None,
) -> None:
    """Write the worlds' deep questions as Search-R1 training data (train.parquet, test.parquet: prompt, golden_answers,
    reward_model, extra_info), for a policy searching them through `worldforge serve retrieve`."""
    from worldforge.datasets.search_r1 import export_search_r1

    done = _export(output, worlds, warehouse, "train.parquet",
                   lambda wh, names, folder, progress: export_search_r1(wh, names, folder, scenario, data_source, test_share, progress=progress))
    out.print(f"{len(done.worlds)} world(s) → {done.out} (train {done.rows['train']:,}, test {done.rows['test']:,} questions)")


@app.command("retriever")
def retriever(
    output: Annotated[Path, typer.Option("-o", "--out", help="The folder to write (replaced whole): train/validation/test.parquet, ids/, queries.parquet, qrels.txt, a card.")],
    worlds: Annotated[Optional[list[str]], typer.Option("--worlds", help="World names, repeated or comma-separated; default: every world of the warehouse.", show_default=False)] = None,
    negatives: Annotated[int, typer.Option("--negatives", help="Hard negatives a row (columns negative_1 ... negative_N; one: negative).")] = 3,
    positives: Annotated[int, typer.Option("--positives", help="Rows a query at most: its best positive pages, one row each.")] = 3,
    pool: Annotated[int, typer.Option("--pool", help="BM25 hits read per query to find its hard negatives.")] = 100,
    scenario: Annotated[Optional[str], typer.Option("--scenario", help="Export this time-shifted scenario's corpora and queries instead of the worlds' own.", show_default=False)] = None,
    holdout: Annotated[Optional[list[str]], typer.Option("--holdout", help="Test worlds, repeated or comma-separated; default: picked by --test-share.", show_default=False)] = None,
    test_share: Annotated[float, typer.Option("--test-share", min=0.0, max=1.0, help="Share of worlds in the test split (without --holdout).")] = 0.1,
    validation_share: Annotated[float, typer.Option("--validation-share", min=0.0, max=1.0, help="Share of worlds in the validation split.")] = 0.1,
    warehouse: WarehouseOpt = None,
) -> None:
    """Write retriever training data: one row per query and positive page with hard negatives (anchor, positive,
    negative_1 ... negative_N), the layout sentence-transformers' MultipleNegativesRankingLoss reads; queries are deep
    questions and wide tasks, negatives BM25 hits that are not positives and state no answer cell; split by world."""
    from worldforge.datasets.retriever import export_retriever

    held = [w.strip() for item in holdout for w in item.split(",") if w.strip()] if holdout else None
    done = _export(output, worlds, warehouse, "qrels.txt",
                   lambda wh, names, folder, progress: export_retriever(wh, names, folder, negatives, positives, pool, scenario, held,
                                                                         test_share, validation_share, progress=progress))
    rows = ", ".join(f"{s} {n:,}" for s, n in done.rows.items() if n)
    lost = "; ".join(f"{n:,} {why}" for why, n in sorted(done.dropped.items()))
    out.print(f"{done.kept:,} of {done.queries:,} queries from {len(done.worlds)} world(s) → {done.out} (rows: {rows})"
              + (f"; dropped: {lost}" if lost else ""))
