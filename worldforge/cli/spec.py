"""``worldforge spec validate SPEC``: whether a spec builds; ``worldforge spec preview SPEC``: what its pages will say,
table by table, before any world is built."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape
from rich.table import Table

from worldforge.cli._common import err, out, user_errors

app = typer.Typer(help="Read a world spec as its pages will: kinds, genres, sentences, relations.", no_args_is_help=True)


@app.command("validate")
def validate(
    spec: Annotated[Path, typer.Argument(help="A world spec (YAML).")],
    seed: Annotated[Optional[int], typer.Option(help="Seed of the trial tables (default: the spec's).")] = None,
) -> None:
    """Check a spec without writing anything: read it (the spec language's fields and cross-references), draw its
    tables once with the seed and check their invariants (keys, foreign keys, declared constraints, row budget).
    Exit 2 on a spec that cannot be read or built, 1 when the drawn tables break an invariant."""
    from worldforge.spec import load_spec
    from worldforge.synth.generate import build_world
    from worldforge.synth.invariants import check_world

    with user_errors():
        loaded = load_spec(spec)
        tables = build_world(loaded, seed)
    violations = check_world(loaded, tables)
    if violations:
        used = loaded.seed if seed is None else seed
        err.print(f"error: {escape(str(spec))}: the spec reads, but the tables drawn with seed {used} break {len(violations)} "
                  "invariant(s):", soft_wrap=True)
        for v in violations:
            err.print(f"  {escape(v.table)} {escape(v.check)}: {v.rows} row(s), {escape(v.detail)}"
                      + (f" (e.g. row {escape(str(v.example))})" if v.example is not None else ""), soft_wrap=True)
        err.print("  widen the ranges or value lists these rows draw from (a unique column needs more values than rows; a "
                  "check needs date windows and ranges that can meet it), or give a check `enforce: resample`", soft_wrap=True)
        raise typer.Exit(1)
    rows = sum(f.height for f in tables.values())
    out.print(f"[green]ok[/] {escape(loaded.world)}: {len(tables)} tables, {rows} rows (seed {loaded.seed if seed is None else seed}); "
              "nothing written — `worldforge spec preview` shows how its pages will read", soft_wrap=True)


@app.command("preview")
def preview(
    spec: Annotated[Path, typer.Argument(help="A world spec (YAML).")],
    seed: Annotated[Optional[int], typer.Option(help="Seed of the sample tables (default: the spec's).")] = None,
) -> None:
    """Print, per table, what its rows are taken to be (person, event, measurement, thing), the genres they get, one
    sentence per column as an article states it, and each relation (reference, role, junction, hierarchy, optional)
    with how pages say it. Exit 2 on a spec that cannot be read or built."""
    from worldforge.corpus.lexicon import a_or_an
    from worldforge.corpus.preview import preview_spec
    from worldforge.spec import load_spec

    with user_errors():
        previews = preview_spec(load_spec(spec), seed)
    for p in previews:
        article = a_or_an(p.kind).split(" ", 1)[0]  # "an event", "a person"
        out.print(f"[bold]{escape(p.table)}[/bold]: {p.rows} {escape(p.plural)} — each {escape(p.noun)} is taken to be {article} "
                  f"[bold]{p.kind}[/bold]; pages: {', '.join(p.genres)}", soft_wrap=True)
        out.print(f"  sample row: {escape(p.sample)}", soft_wrap=True)
        cols = Table(show_header=True, header_style="bold", expand=False)
        for name in ("column", "label", "read as", "unit", "as pages say it"):
            cols.add_column(name, overflow="fold")
        for c in p.columns:
            cols.add_row(escape(c.column), escape(c.label), c.kind, escape(c.unit or ""), escape(c.sentence or ("(never stated on its own)" if c.kind == "composes the name" else "(tables and infobox only)")))
        out.print(cols)
        if p.relations:
            rels = Table(show_header=True, header_style="bold", expand=False)
            for name in ("reference", "parent", "shape", "bounds", "how pages say it"):
                rels.add_column(name, overflow="fold")
            for r in p.relations:
                rels.add_row(escape(r.column), escape(r.parent), r.shape, escape(r.bounds), escape(r.says))
            out.print(rels)
