"""``worldforge world build | check | run | steps``: generate a world from its spec, re-check a world file, run a world's steps end to end."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from worldforge.cli._common import WarehouseOpt, out, print_frame, progress, settings_retriever, user_errors, warehouse_of

app = typer.Typer(help="Build and check fictional worlds.", no_args_is_help=True)


def _print_violations(violations) -> None:
    import polars as pl

    rows = [(v.table, v.check, v.rows, v.detail + (f" (e.g. {v.example})" if v.example is not None else "")) for v in violations]
    print_frame(pl.DataFrame(rows, schema=["table", "check", "rows", "detail"], orient="row"), f"{len(violations)} violation(s)")


@app.command("build")
def build(
    spec: Annotated[Path, typer.Argument(help="World spec YAML file.")],
    seed: Annotated[int | None, typer.Option(help="Seed (default: the spec's).")] = None,
    warehouse: WarehouseOpt = None,
) -> None:
    """Generate a world from SPEC and its scenarios, check their invariants and write WAREHOUSE/<world>.duckdb."""
    from worldforge.warehouse import build_world_file

    with user_errors(), progress() as bar:
        task = bar.add_task("validating spec", total=5)
        built = build_world_file(spec, warehouse_of(warehouse), seed, progress=lambda step: bar.update(task, advance=1, description=step))
    if built.violations:
        _print_violations(built.violations)
        out.print(f"[red]not written[/]: {len(built.violations)} violation(s); the previous file (if any) is untouched")
        raise typer.Exit(1)
    table = Table(title=f"{built.spec.world} (seed {built.seed}) → {built.path}")
    for col, justify in (("table", "left"), ("rows", "right"), ("columns", "right")):
        table.add_column(col, justify=justify)
    for name, frame in built.tables.items():
        table.add_row(name, str(frame.height), str(frame.width))
    table.add_row("[bold]total[/]", f"[bold]{sum(f.height for f in built.tables.values())}[/]", "")
    out.print(table)
    for name, tables in built.scenarios.items():
        out.print(f"scenario {escape(name)}: schema scenario_{escape(name)}, {sum(f.height for f in tables.values())} rows")


@app.command("check")
def check(path: Annotated[Path, typer.Argument(help="A world file, WAREHOUSE/<world>.duckdb.")]) -> None:
    """Re-check a world file: keys, foreign keys, declared constraints, row budget. Exit 1 on any violation."""
    from worldforge.warehouse import check_world_file

    with user_errors():
        wf, violations = check_world_file(path)
    if violations:
        _print_violations(violations)
        raise typer.Exit(1)
    rows = sum(f.height for f in wf.tables.values())
    out.print(f"[green]ok[/] {wf.spec.world}: {len(wf.tables)} tables, {rows} rows, seed {wf.meta['seed']}, no violations")


@app.command("steps")
def steps(select: Annotated[bool, typer.Option("--select", help="One line, comma-separated (dagster asset materialize --select).")] = False) -> None:
    """List a world's steps in order (the Dagster world assets have the same names)."""
    from worldforge.pipeline import WORLD_STEPS

    if select:
        out.print(",".join(s.name for s in WORLD_STEPS), soft_wrap=True)
        return
    for s in WORLD_STEPS:
        checks = ", ".join(c.name for c in s.checks) or "-"
        out.print(f"{s.name:<16} after {', '.join(s.after) or '-':<28} checks {checks}", soft_wrap=True, markup=False)


@app.command("run")
def run(
    spec: Annotated[Path, typer.Argument(help="World spec YAML file.")],
    warehouse: WarehouseOpt = None,
) -> None:
    """Build SPEC's world end to end, as its Dagster assets do: tables, scenarios, corpus, index, tasks, oracle episodes.

    Prints each step's checks; exits 1 when a check fails (the later steps do not run).
    """
    from worldforge.pipeline import WORLD_STEPS, run_world

    with user_errors(), progress() as bar:
        task = bar.add_task("starting", total=len(WORLD_STEPS))
        results = run_world(spec, warehouse_of(warehouse), progress=lambda name: bar.update(task, advance=1, description=name),
                            retriever=settings_retriever())
    failed = False
    for result in results:
        verdicts = ", ".join(f"{c.name} {'[green]passed[/]' if c.passed else '[red]FAILED[/]'}" for c in result.checks) or "no check"
        figures = ", ".join(f"{k} {v:,}" if isinstance(v, int) else f"{k} {v}" for k, v in result.figures.items())
        out.print(f"{result.step:<16} {result.seconds:6.1f} s  {verdicts}" + (f"  ({escape(figures)})" if figures else ""), soft_wrap=True)
        for c in result.failed_checks:
            failed = True
            out.print(f"  [red]{escape(c.name)}[/]: {escape(c.summary)}", soft_wrap=True)
    if failed:
        raise typer.Exit(1)
