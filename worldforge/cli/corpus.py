"""``worldforge corpus build | search``: a world's search corpus, checked and indexed; BM25 search."""

from __future__ import annotations

from typing import Annotated, Optional

import typer
from rich.markup import escape
from rich.table import Table

from worldforge.cli._common import WarehouseOpt, out, print_frame, print_tally, progress, user_errors, warehouse_of

app = typer.Typer(help="Search corpora of worlds: build, check, index, search.", no_args_is_help=True)


@app.command("build")
def build(
    world: Annotated[str, typer.Argument(help="World name (WAREHOUSE/<world>.duckdb, built with `world build`).")],
    warehouse: WarehouseOpt = None,
    writer: Annotated[str, typer.Option(help="Who writes the prose pages (news, press releases, forum, rumors): template, or openai "
                                             "(a model behind an OpenAI-compatible server rewrites them; a page is kept only when every value checks out).")] = "template",
    base_url: Annotated[Optional[str], typer.Option(help="--writer openai: the server's API root (default: WORLDFORGE_VLLM_URL).", show_default=False)] = None,
    model: Annotated[Optional[str], typer.Option(help="--writer openai: the served model (default: WORLDFORGE_VLLM_MODEL, else the first one served).",
                                                 show_default=False)] = None,
    api_key: Annotated[Optional[str], typer.Option(help="--writer openai: bearer token for the server.", show_default=False)] = None,
    max_rounds: Annotated[int, typer.Option(min=1, help="--writer openai: requests per page at most (the first and the repairs).")] = 2,
    concurrency: Annotated[int, typer.Option(min=1, help="--writer openai: requests in flight at most.")] = 8,
    limit: Annotated[Optional[int], typer.Option(min=0, help="--writer openai: rewrite at most this many prose pages.", show_default=False)] = None,
) -> None:
    """Generate the search corpus of WORLD and its scenarios, check every stated fact, and index it."""
    from worldforge.corpus import publish_corpus, writer_config
    with user_errors():
        path = warehouse_of(warehouse).world(world)
        config = writer_config(writer, base_url=base_url, model=model, api_key=api_key, max_rounds=max_rounds, concurrency=concurrency, limit=limit)
    with user_errors(), progress() as bar:
        task = bar.add_task("generating pages", total=2)
        pages = bar.add_task("writing pages", total=None, visible=config is not None)
        built = publish_corpus(path, progress=lambda step: bar.update(task, advance=1, description=step), writer=config,
                               on_page=lambda done, total: bar.update(pages, completed=done, total=total))
    table = Table(title=f"corpus of {world} → {path}")
    for col in ("corpus", "pages", "index"):
        table.add_column(col)
    for (scen, n), d in zip(built.report.pages.items(), built.indexes):
        table.add_row(escape(scen or "(world)"), str(n), str(d))
    out.print(table)
    out.print(f"facts stated: {built.report.facts} (derived claims: {built.report.claims}); contradicted: {built.tally.dropped_total}")
    print_tally(built.tally)
    if built.writer is not None:
        mark = "[green]balanced[/]" if built.writer.balanced else "[red]NOT balanced[/]"
        out.print(f"writer: {escape(built.writer.summary())}  {mark}", soft_wrap=True)
    if built.contradictions.height:
        print_frame(built.contradictions.head(20), "contradicted facts (first 20)")
        raise typer.Exit(1)


@app.command("search")
def search(
    world: Annotated[str, typer.Argument(help="World name.")],
    query: Annotated[str, typer.Argument(help="Free-text query.")],
    k: Annotated[int, typer.Option("-k", help="Results.")] = 10,
    scenario: Annotated[str | None, typer.Option(help="Search a scenario's corpus.")] = None,
    warehouse: WarehouseOpt = None,
) -> None:
    """BM25 search over a world's corpus (results as the web_search tool shows them)."""
    from worldforge.corpus import search as corpus_search

    with user_errors():
        hits = corpus_search(world, query, k, warehouse_of(warehouse), scenario)
    for i, h in enumerate(hits, start=1):
        out.print(f"[{i}] {h.url}\nTitle: {escape(h.title)}\nSnippet: {escape(h.snippet)}\nDate: {h.published or 'N/A'}\n", highlight=False)
    if not hits:
        out.print("no results")
