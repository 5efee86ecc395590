"""``worldforge catalog generate | author | build | report``: a catalog of distinct worlds (:mod:`worldforge.catalog`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from worldforge.cli._common import out, progress, user_errors

app = typer.Typer(help="Generate, author, build and report a catalog of distinct fictional worlds.", no_args_is_help=True)

# --- generate -------------------------------------------------------------------------------------


@app.command("generate")
def generate(
    out_dir: Annotated[Path, typer.Argument(help="Folder for the spec files (created if missing).")],
    n: Annotated[int, typer.Option("--n", help="Number of world specs.")] = 1000,
    seed: Annotated[int, typer.Option(help="Catalog seed: the same n and seed write the same bytes.")] = 0,
    archetype: Annotated[list[str] | None, typer.Option("--archetype", "-a", help="Only these archetypes (repeatable).")] = None,
) -> None:
    """Write N valid world specs drawn from the archetype library to OUT_DIR (deterministic, no LLM)."""
    from worldforge.catalog.generate import generate_catalog

    with user_errors(), progress() as bar:
        task = bar.add_task("generating specs", total=n)
        made = generate_catalog(n, seed, out_dir, archetypes=archetype or None, progress=lambda k: bar.update(task, completed=k))
    out.print(f"wrote {len(made.paths)} specs to {escape(str(out_dir))}: {len(made.archetypes)} archetypes, "
              f"{made.signatures} distinct schema signatures ({made.redraws} draws redrawn for a repeated signature)")
    if made.others:
        out.print(f"[yellow]note[/]: {len(made.others)} other spec file(s) in {escape(str(out_dir))} are not part of this catalog "
                  f"(e.g. {escape(made.others[0].name)}); `worldforge catalog build` builds every spec of the folder")


@app.command("archetypes")
def archetypes(
    draws: Annotated[int, typer.Option(help="Draws per archetype to measure its variety.")] = 0,
) -> None:
    """List the archetype library: domain, tables and (with --draws N) how many distinct schemas N draws give."""
    from worldforge.catalog.archetype import load_archetypes
    from worldforge.catalog.generate import archetype_variety

    with user_errors():
        library = load_archetypes()
        table = Table(title=f"{len(library)} archetypes")
        for col in ["archetype", "domain", "tables (optional*)"] + (["valid", "signatures", "table-name sets"] if draws else []):
            table.add_column(col, overflow="fold")
        for name, arch in library.items():
            tables = ", ".join(t + ("*" if spec.p < 1 else "") for t, spec in arch.tables.items())
            extra = [str(x) for x in archetype_variety(arch, draws)] if draws else []
            table.add_row(name, escape(arch.domain), tables, *extra)
    out.print(table)

# --- author ---------------------------------------------------------------------------------------

# --- build ----------------------------------------------------------------------------------------

# --- report ---------------------------------------------------------------------------------------
