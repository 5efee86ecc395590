"""``worldforge corpus build | index | search | embedder``: a world's search corpus, checked and indexed (BM25, dense or
hybrid); search it; build the tiny embedding model."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape
from rich.table import Table

from worldforge.cli._common import (
    WarehouseOpt,
    WriterConcurrencyOpt,
    WriterKeyOpt,
    WriterLimitOpt,
    WriterModelOpt,
    WriterOpt,
    WriterRoundsOpt,
    WriterUrlOpt,
    out,
    print_frame,
    print_tally,
    progress,
    user_errors,
    warehouse_of,
)

app = typer.Typer(help="Search corpora of worlds: build, check, index, search.", no_args_is_help=True)



@app.command("build")
def build(
    world: Annotated[str, typer.Argument(help="World name (WAREHOUSE/<world>.duckdb, built with `world build`).")],
    warehouse: WarehouseOpt = None,
    writer: WriterOpt = "template",
    base_url: WriterUrlOpt = None,
    model: WriterModelOpt = None,
    api_key: WriterKeyOpt = None,
    max_rounds: WriterRoundsOpt = 2,
    concurrency: WriterConcurrencyOpt = 8,
    limit: WriterLimitOpt = None,
) -> None:
    """Generate the search corpus of WORLD and its scenarios, check every stated fact, and index it
    (`world run WORLD --steps search_corpus,search_index`, showing the corpus; contradicted facts: exit 1, not indexed)."""
    from worldforge.cli.world import rewriter_of, run_steps, step_result

    config = rewriter_of(writer, base_url=base_url, model=model, api_key=api_key, max_rounds=max_rounds, concurrency=concurrency, limit=limit)
    with user_errors():
        path = warehouse_of(warehouse).world(world)
    results = run_steps(world, warehouse, "search_corpus,search_index", rewriter=config)
    built = step_result(results, "search_corpus").value  # a stale world's rebuild runs the steps before it first
    index = next((r for r in results if r.step == "search_index"), None)
    indexes = [bm25 for _, bm25, _ in index.value] if index is not None else []
    table = Table(title=f"corpus of {world} → {path}")
    for col in ("corpus", "pages", "index"):
        table.add_column(col)
    for i, (scen, n) in enumerate(built.report.pages.items()):
        table.add_row(escape(scen or "(world)"), str(n), str(indexes[i]) if i < len(indexes) else "-")
    out.print(table)
    out.print(f"facts stated: {built.report.facts} (derived claims: {built.report.claims}); contradicted: {built.tally.dropped_total}")
    print_tally(built.tally)
    if built.rewriter is not None:
        mark = "[green]balanced[/]" if built.rewriter.balanced else "[red]NOT balanced[/]"
        out.print(f"writer: {escape(built.rewriter.summary())}  {mark}", soft_wrap=True)
    if built.contradictions.height:
        print_frame(built.contradictions.head(20), "contradicted facts (first 20)")
        raise typer.Exit(1)


@app.command("index")
def index(
    world: Annotated[str, typer.Argument(help="World name (its corpus built with `corpus build` or `world run`).")],
    retriever: Annotated[Optional[str], typer.Option(help="bm25, dense or hybrid (default: WORLDFORGE_RETRIEVER; unset: each corpus keeps the "
                                                          "retriever and model it was indexed with).", show_default=False)] = None,
    embedding_model: Annotated[Optional[str], typer.Option(help="dense/hybrid: a sentence-transformers model folder, or the served model's "
                                                                "name with --embedding-url (default: WORLDFORGE_EMBEDDING_MODEL).", show_default=False)] = None,
    embedding_url: Annotated[Optional[str], typer.Option(help="An OpenAI-compatible /v1/embeddings endpoint, e.g. `vllm serve MODEL --runner pooling` "
                                                              "(default: WORLDFORGE_EMBEDDING_URL).", show_default=False)] = None,
    query_prompt: Annotated[Optional[str], typer.Option(help="Prepended to queries (e5: 'query: '; default: the model's own).", show_default=False)] = None,
    document_prompt: Annotated[Optional[str], typer.Option(help="Prepended to pages (e5: 'passage: '; default: the model's own).", show_default=False)] = None,
    quantize: Annotated[Optional[str], typer.Option(help="Page vectors as float32 (none) or 8-bit codes (sq8, about 4x smaller).", show_default=False)] = None,
    passage_words: Annotated[Optional[int], typer.Option(min=0, help="A page's vector: its title and lead (0), or its title and the first N "
                                                                  "words of its article (default: WORLDFORGE_EMBEDDING_PASSAGE_WORDS).",
                                                         show_default=False)] = None,
    api_key: Annotated[Optional[str], typer.Option(help="--embedding-url: bearer token for the endpoint.", show_default=False)] = None,
    warehouse: WarehouseOpt = None,
) -> None:
    """(Re)build the search indexes of WORLD's corpus and its scenarios': BM25 always, and with --retriever dense or hybrid a
    dense index (a rebuild embeds only the pages that changed). The corpus is then searched with that retriever by every
    entry point (web_search, the servers, /retrieve)."""
    from worldforge.corpus import RetrieverConfig, index_world
    from worldforge.settings import get_settings

    with user_errors():
        path = warehouse_of(warehouse).world(world)
        config = RetrieverConfig.over_settings(get_settings(), retriever, embedding_model, embedding_url, query_prompt, document_prompt,
                                               quantize, api_key or "", passage_words)
    with user_errors(), progress() as bar:
        task = bar.add_task("embedding pages", total=None, visible=config is None or config.retriever != "bm25")
        built = index_world(path, config, progress=lambda name, done, total: bar.update(task, completed=done, total=total,
                                                                                       description=f"embedding {name}"))
    table = Table(title=f"indexes of {world} ({config.retriever if config else 'each corpus its own retriever'})")
    for col in ("corpus", "BM25 index", "dense index", "vectors", "embedded", "bytes"):
        table.add_column(col)
    for scen, bm25, dense in built:
        table.add_row(escape(scen or "(world)"), str(bm25), str(dense.folder) if dense else "-", str(dense.vectors) if dense else "-",
                      str(dense.embedded) if dense else "-", f"{dense.bytes:,}" if dense else "-")
    out.print(table)


@app.command("search")
def search(
    world: Annotated[str, typer.Argument(help="World name.")],
    query: Annotated[str, typer.Argument(help="Free-text query.")],
    k: Annotated[int, typer.Option("-k", help="Results.")] = 10,
    scenario: Annotated[str | None, typer.Option(help="Search a scenario's corpus.")] = None,
    retriever: Annotated[Optional[str], typer.Option(help="bm25, dense or hybrid (default: the retriever the corpus was indexed with).",
                                                     show_default=False)] = None,
    warehouse: WarehouseOpt = None,
) -> None:
    """Search a world's corpus (results as the web_search tool shows them)."""
    from worldforge.corpus import search as corpus_search

    with user_errors():
        hits = corpus_search(world, query, k, warehouse_of(warehouse), scenario, retriever=retriever)
    for i, h in enumerate(hits, start=1):
        out.print(f"[{i}] {h.url}\nTitle: {escape(h.title)}\nSnippet: {escape(h.snippet)}\nDate: {h.published or 'N/A'}\n", highlight=False)
    if not hits:
        out.print("no results")


@app.command("embedder")
def embedder(
    out_dir: Annotated[Path, typer.Argument(help="Folder to write the model to.")],
    world: Annotated[Optional[str], typer.Option(help="Train the tokenizer on this world's pages and fine-tune the model on its "
                                                      "title-passage pairs (default: generated words, untrained).", show_default=False)] = None,
    dim: Annotated[int, typer.Option(min=8, max=4096, help="Embedding dimension.")] = 64,
    epochs: Annotated[int, typer.Option(min=0, help="With --world: passes over its title-passage pairs (0: leave the model untrained).")] = 3,
    seed: Annotated[int, typer.Option(help="Seeds the weights and the training.")] = 0,
    warehouse: WarehouseOpt = None,
) -> None:
    """Build the tiny embedding model: a static sentence-transformers model (the mean of its token vectors), its tokenizer
    trained here, and with --world fine-tuned on that world's page titles and passages (no model can be downloaded on an
    offline machine). Train it further on `worldforge export retriever` data (docs/search.md)."""
    from worldforge.corpus.index import world_embedder
    from worldforge.retrieval.tiny import build_tiny_embedding_model

    with user_errors():
        report = None
        if world is None:
            build_tiny_embedding_model(out_dir, dim=dim, seed=seed)
        else:
            with progress() as bar:
                bar.add_task(f"building and fine-tuning on {world}'s title-passage pairs", total=None)
                report = world_embedder(warehouse_of(warehouse).world(world), out_dir, dim=dim, epochs=epochs, seed=seed)
    if report is not None:
        out.print(f"fine-tuned: {report.examples} pairs, {report.steps} steps, loss {report.loss:.4f}")
    out.print(f"embedding model ({dim} dimensions) → {out_dir}")
