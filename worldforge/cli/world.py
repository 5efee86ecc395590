"""``worldforge world run | build | check | steps``: run a world's steps (all, or a selection), re-check a world file, list the steps.

``world run`` is the one way into the steps (:data:`worldforge.pipeline.WORLD_STEPS`); ``world build``, ``corpus build``
and ``tasks export`` are aliases of selections of it, showing their results as they always have.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

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
    progress,
    settings_retriever,
    user_errors,
    warehouse_of,
)

if TYPE_CHECKING:
    from worldforge.corpus import RetrieverConfig
    from worldforge.corpus.rewriter import RewriterConfig
    from worldforge.pipeline import StepResult

app = typer.Typer(help="Build and check fictional worlds.", no_args_is_help=True)


def _print_violations(violations) -> None:
    import polars as pl

    rows = [(v.table, v.check, v.rows, v.detail + (f" (e.g. {v.example})" if v.example is not None else "")) for v in violations]
    print_frame(pl.DataFrame(rows, schema=["table", "check", "rows", "detail"], orient="row"), f"{len(violations)} violation(s)")


def run_steps(target: str | Path, warehouse: Path | None, steps: str | Sequence[str] | None = None, *, seed: int | None = None,
              rewriter: RewriterConfig | None = None, retriever: RetrieverConfig | None = None, tasks_dir: Path | None = None) -> list[StepResult]:
    """Run the selected steps for one spec file or built world, with a progress bar: what ``world run`` and its aliases share.

    Args:
        target: a spec file (``*.yaml``/``*.yml``, or any existing file), else a built world's name (the selection
            must then skip ``world_tables``).
        warehouse: the ``--warehouse`` option.
        steps: step names (:func:`~worldforge.pipeline.select_steps`); ``None``: every step.
        seed, rewriter, retriever, tasks_dir: :func:`~worldforge.pipeline.run_world`'s.

    A built world whose file is stale (another generator version) is rebuilt from its stored spec first, with every step
    the selection comes after (:func:`~worldforge.pipeline.run_world`): a line says so, and the results include those steps.

    Returns:
        The steps' results (the last one has failed checks when the run stopped early).

    Raises:
        typer.Exit: 2 on a user error (one line, :func:`user_errors`); 1 when the world's tables break an invariant
            (their list is printed, nothing was written).
    """
    from worldforge.pipeline import StepFailed, run_world, select_steps

    path = Path(target)
    spec, world = (path, None) if path.suffix in (".yaml", ".yml") or path.is_file() else (None, str(target))
    with user_errors():
        chosen = select_steps(steps)
        try:
            with progress() as bar:
                task = bar.add_task("starting", total=len(chosen))
                pages = bar.add_task("writing pages", total=None, visible=rewriter is not None)
                results = run_world(spec, warehouse_of(warehouse), rewriter=rewriter, steps=chosen, retriever=retriever, world=world, seed=seed,
                                    tasks_dir=tasks_dir, progress=lambda name: bar.update(task, advance=1, description=name),
                                    on_page=lambda done, total: bar.update(pages, completed=done, total=total))
            for result in results:
                if "rebuilt_stale" in result.metadata:
                    out.print(f"[yellow]stale world[/]: {escape(result.metadata['rebuilt_stale'])}", soft_wrap=True)
            return results
        except StepFailed as exc:
            built = exc.value
            if exc.step != "world_tables" or built is None or not built.violations:
                raise
            _print_violations(built.violations)
            out.print(f"[red]not written[/]: {len(built.violations)} violation(s); the previous file (if any) is untouched")
            raise typer.Exit(1) from None


def step_result(results: Sequence[StepResult], name: str) -> StepResult:
    """The result of step ``name`` among ``results`` (what the aliases of ``world run`` show). When it did not run, an
    earlier step of a stale world's rebuild failed a check: its failures are printed and the command exits 1."""
    for result in results:
        if result.step == name:
            return result
    for result in results:
        for c in result.failed_checks:
            out.print(f"[red]{escape(result.step)}: {escape(c.name)}[/]: {escape(c.summary)}", soft_wrap=True)
    raise typer.Exit(1)


def rewriter_of(writer: str, **options) -> RewriterConfig | None:
    """:func:`~worldforge.corpus.rewriter.rewriter_config` of the ``--writer`` options (``None``: template pages); a bad one exits 2.
    ``base_url`` and ``model`` not given: ``WORLDFORGE_VLLM_URL`` and ``WORLDFORGE_VLLM_MODEL``."""
    from worldforge.corpus import rewriter_config
    from worldforge.settings import get_settings

    with user_errors():
        settings = get_settings()
        if options.get("base_url") is None:
            options["base_url"] = settings.vllm_url
        if options.get("model") is None:
            options["model"] = settings.vllm_model
        return rewriter_config(writer, **options)


@app.command("run")
def run(
    target: Annotated[str, typer.Argument(metavar="SPEC_OR_WORLD", help="World spec YAML file; or, when --steps skips world_tables, "
                                                                        "a built world's name (WAREHOUSE/<world>.duckdb).")],
    steps: Annotated[Optional[str], typer.Option("--steps", help="Run only these steps, comma-separated (`worldforge world steps`), "
                                                                 "in the steps' order; default: all.", show_default=False)] = None,
    seed: Annotated[Optional[int], typer.Option(help="world_tables: the seed (default: the spec's).", show_default=False)] = None,
    tasks_out: Annotated[Optional[Path], typer.Option("--tasks-out", help="search_tasks: write the WideSearch files (tasks.jsonl, "
                                                      "tables/) here (default: WAREHOUSE/tasks/<world>/).", show_default=False)] = None,
    warehouse: WarehouseOpt = None,
    writer: WriterOpt = "template",
    base_url: WriterUrlOpt = None,
    model: WriterModelOpt = None,
    api_key: WriterKeyOpt = None,
    max_rounds: WriterRoundsOpt = 2,
    concurrency: WriterConcurrencyOpt = 8,
    limit: WriterLimitOpt = None,
) -> None:
    """Run SPEC's world steps, as its Dagster assets do: tables, scenarios, corpus, index, tasks, oracle episodes (or --steps' selection).

    Prints each step's checks; exits 1 when a check fails (the later steps do not run), 2 on a user error.
    The search index uses the retriever of the settings (WORLDFORGE_RETRIEVER).
    """
    config = rewriter_of(writer, base_url=base_url, model=model, api_key=api_key, max_rounds=max_rounds, concurrency=concurrency, limit=limit)
    with user_errors():
        retriever = settings_retriever()
    results = run_steps(target, warehouse, steps, seed=seed, rewriter=config, retriever=retriever, tasks_dir=tasks_out)
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


@app.command("build")
def build(
    spec: Annotated[Path, typer.Argument(help="World spec YAML file.")],
    seed: Annotated[int | None, typer.Option(help="Seed (default: the spec's).")] = None,
    warehouse: WarehouseOpt = None,
) -> None:
    """Generate a world from SPEC and its scenarios, check their invariants and write WAREHOUSE/<world>.duckdb
    (`world run SPEC --steps world_tables,scenario_tables`, showing the tables)."""
    results = run_steps(spec, warehouse, "world_tables,scenario_tables", seed=seed)
    built = results[0].value
    table = Table(title=f"{built.spec.world} (seed {built.seed}) → {built.path}")
    for col, justify in (("table", "left"), ("rows", "right"), ("columns", "right")):
        table.add_column(col, justify=justify)
    for name, frame in built.tables.items():
        table.add_row(name, str(frame.height), str(frame.width))
    table.add_row("[bold]total[/]", f"[bold]{sum(f.height for f in built.tables.values())}[/]", "")
    out.print(table)
    for name, tables in built.scenarios.items():
        out.print(f"scenario {escape(name)}: schema scenario_{escape(name)}, {sum(f.height for f in tables.values())} rows")
    for result in results:
        for c in result.failed_checks:  # the file as read back breaks what the generated tables did not: never expected
            out.print(f"[red]{escape(c.name)}[/]: {escape(c.summary)}", soft_wrap=True)
    if any(r.failed_checks for r in results):
        raise typer.Exit(1)


@app.command("check")
def check(path: Annotated[Path, typer.Argument(help="A world file, WAREHOUSE/<world>.duckdb.")]) -> None:
    """Re-check a world file: keys, foreign keys, declared constraints, row budget. Exit 1 on any violation."""
    from worldforge.world import check_world_file

    with user_errors():
        wf, violations = check_world_file(path)
    if violations:
        _print_violations(violations)
        raise typer.Exit(1)
    rows = sum(f.height for f in wf.tables.values())
    out.print(f"[green]ok[/] {wf.spec.world}: {len(wf.tables)} tables, {rows} rows, seed {wf.meta['seed']}, no violations")


@app.command("steps")
def steps(select: Annotated[bool, typer.Option("--select", help="One line, comma-separated (dagster asset materialize --select).")] = False) -> None:
    """List a world's steps in order (the Dagster world assets have the same names; `world run --steps` takes them)."""
    from worldforge.pipeline import WORLD_STEPS

    if select:
        out.print(",".join(s.name for s in WORLD_STEPS), soft_wrap=True)
        return
    for s in WORLD_STEPS:
        checks = ", ".join(c.name for c in s.checks) or "-"
        out.print(f"{s.name:<16} after {', '.join(s.after) or '-':<28} checks {checks}", soft_wrap=True, markup=False)
