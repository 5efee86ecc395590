"""``worldforge corpus build | search``: a world's search corpus, checked and indexed; BM25 search."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from worldforge.cli._common import WarehouseOpt, out, print_frame, print_tally, progress, user_errors, warehouse_of

app = typer.Typer(help="Search corpora of worlds: build, check, index, search.", no_args_is_help=True)


@app.command("build")
def build(
    world: Annotated[str, typer.Argument(help="World name (WAREHOUSE/<world>.duckdb, built with `world build`).")],
    warehouse: WarehouseOpt = None,
) -> None:
    """Generate the search corpus of WORLD and its scenarios, check every stated fact, and index it."""
    from worldforge.corpus import publish_corpus
    from worldforge.warehouse import world_path

    path = world_path(warehouse_of(warehouse), world)
    with user_errors(), progress() as bar:
        task = bar.add_task("generating pages", total=2)
        built = publish_corpus(path, progress=lambda step: bar.update(task, advance=1, description=step))
    table = Table(title=f"corpus of {world} → {path}")
    for col in ("corpus", "pages", "index"):
        table.add_column(col)
    for (scen, n), d in zip(built.report.pages.items(), built.indexes):
        table.add_row(escape(scen or "(world)"), str(n), str(d))
    out.print(table)
    out.print(f"facts stated: {built.report.facts}; contradicted: {built.tally.dropped_total}")
    print_tally(built.tally)
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
