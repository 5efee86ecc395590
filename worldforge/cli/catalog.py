"""``worldforge catalog generate | author | build | report``: a catalog of distinct worlds (:mod:`worldforge.catalog`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape
from rich.table import Table

from worldforge.cli._common import WarehouseOpt, err, fail, out, print_frame, progress, user_errors, warehouse_of

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

AUTHOR_BACKENDS = ("openai",)
"""World-model backends ``catalog author`` can use: those with structured output from a server."""


@app.command("author")
def author(
    topic: Annotated[str, typer.Argument(help='What the world is about, e.g. "a 2032 market of solid-state EV battery cells".')],
    output: Annotated[Path, typer.Option("--output", "-o", help="The spec YAML file to write (replaced atomically; untouched on failure).")],
    backend: Annotated[str, typer.Option(help="World-model backend: openai (any OpenAI-compatible server, e.g. vllm serve).")] = "openai",
    base_url: Annotated[str | None, typer.Option(help="The server's API root (default: WORLDFORGE_VLLM_URL).", show_default=False)] = None,
    model: Annotated[str | None, typer.Option(help="The served model (default: WORLDFORGE_VLLM_MODEL, else the first one served).", show_default=False)] = None,
    api_key: Annotated[str | None, typer.Option(help="Bearer token for the server.", show_default=False)] = None,
    max_rounds: Annotated[int, typer.Option(min=1, help="Requests at most: the first and the repairs after failed validation.")] = 3,
    max_tokens: Annotated[int, typer.Option(min=1, help="The most tokens per reply.")] = 6000,
    temperature: Annotated[float, typer.Option(min=0.0, help="Sampling temperature.")] = 0.6,
    timeout: Annotated[float, typer.Option(min=1.0, help="Seconds per request attempt.")] = 600.0,
    seed: Annotated[int | None, typer.Option(help="Sampling seed of the first round (default: unseeded).", show_default=False)] = None,
) -> None:
    """Ask a world model for a spec on TOPIC, validate it, send the problems back for repair (up to --max-rounds), write it."""
    from worldforge.catalog.author import author_spec
    from worldforge.settings import get_settings

    if backend not in AUTHOR_BACKENDS:
        raise fail(f"--backend {backend!r} cannot author specs; use one of: {', '.join(AUTHOR_BACKENDS)} (an OpenAI-compatible server such as vllm serve)")
    with user_errors(), err.status("asking the world model for a spec", spinner="dots"):
        settings = get_settings()
        authored = author_spec(topic, base_url=base_url or settings.vllm_url, model=model if model is not None else settings.vllm_model, api_key=api_key, max_rounds=max_rounds, max_tokens=max_tokens,
                               temperature=temperature, timeout=timeout, seed=seed, out=output)
    for i, problems in enumerate(authored.problems, 1):
        out.print(f"round {i}: {len(problems)} problem(s), sent back for repair", highlight=False)
    spec = authored.spec
    rows = f"{len(spec.tables)} tables ({', '.join(spec.tables)})"
    out.print(f"[green]ok[/] {escape(spec.world)}: {escape(rows)}, target year {spec.target_year}, "
              f"valid after {authored.rounds} round(s) → {escape(str(authored.path))}", soft_wrap=True)

# --- build ----------------------------------------------------------------------------------------


@app.command("build")
def build(
    spec_dir: Annotated[Path, typer.Argument(help="Folder of world specs (*.yaml, *.yml).")],
    warehouse: WarehouseOpt = None,
    workers: Annotated[Optional[int], typer.Option("--workers", "-j", min=1, help="Worker processes (default: WORLDFORGE_CATALOG_WORKERS, else one per CPU).", show_default=False)] = None,
    force: Annotated[bool, typer.Option("--force", help="Rebuild unchanged specs too (stale worlds, built by another generator "
                                                       "version, are rebuilt without it).")] = False,
    writer: Annotated[str, typer.Option(help="Who writes the corpus's prose pages: template, or openai (a model behind an OpenAI-compatible "
                                             "server; a page is kept only when every value checks out).")] = "template",
    base_url: Annotated[Optional[str], typer.Option(help="--writer openai: the server's API root (default: WORLDFORGE_VLLM_URL).", show_default=False)] = None,
    model: Annotated[Optional[str], typer.Option(help="--writer openai: the served model (default: WORLDFORGE_VLLM_MODEL, else the first one served).",
                                                 show_default=False)] = None,
    engine: Annotated[str, typer.Option("--engine", help="Where worlds run: process (a process pool here) or ray (Ray tasks on a cluster).")] = "process",
    address: Annotated[Optional[str], typer.Option("--address", help="--engine ray: the cluster, HOST:PORT of `ray start --head` "
                                                   "(default: WORLDFORGE_RAY_ADDRESS; empty: a local cluster for this build).", show_default=False)] = None,
) -> None:
    """Build every spec of SPEC_DIR end to end (world, scenarios, corpus, index, tasks, oracle) into WAREHOUSE/catalog.duckdb.

    Unchanged specs already built are skipped, unless their world is stale (built by another generator version: rebuilt,
    and said so); a failing world is recorded with its error and the others go on. Exit 1 when any world failed, 2 on a missing folder or a folder without specs.
    """
    import time

    import polars as pl
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from worldforge.catalog.build import ENGINES, build_catalog, catalog_specs, default_workers
    from worldforge.corpus.rewriter import rewriter_config
    from worldforge.errors import WorldforgeError
    from worldforge.settings import get_settings

    with user_errors():
        if engine not in ENGINES:
            raise WorldforgeError(f"--engine must be one of: {', '.join(ENGINES)} (got {engine!r})")
        if address is not None and engine != "ray":
            raise WorldforgeError("--address goes with --engine ray")
        address = (address or get_settings().ray_address or None) if engine == "ray" else None
        specs = catalog_specs(spec_dir)
        config = rewriter_config(writer, base_url=base_url if base_url is not None else get_settings().vllm_url,
                               model=model if model is not None else get_settings().vllm_model)
    if not specs:
        raise fail(f"{spec_dir}: no world specs (*.yaml, *.yml) in this folder")
    counts = {"built": 0, "failed": 0, "skipped": 0}
    start = time.perf_counter()
    bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   TextColumn("{task.fields[rate]}"), console=err, transient=True, disable=not err.is_terminal)

    def tick(row, outcome: str) -> None:
        counts[outcome] += 1
        done = counts["built"] + counts["failed"]
        minutes = (time.perf_counter() - start) / 60
        bar.update(task, advance=1, description=f"built {counts['built']}  failed {counts['failed']}  skipped {counts['skipped']}",
                   rate=f"{done / minutes:.1f} worlds/min" if minutes > 0 and done else "")
        if outcome == "failed" and bar.live.is_started:
            bar.console.print(f"[red]failed[/] {escape(row.world)}: {escape((row.error or '').splitlines()[0] if row.error else '')}", soft_wrap=True)

    n = workers or default_workers(get_settings().catalog_workers)
    with user_errors(), bar:
        where = f"Ray tasks ({address or 'local cluster'})" if engine == "ray" else "workers"
        task = bar.add_task(f"building {len(specs)} worlds on {n} {where}", total=len(specs), rate="")
        result = build_catalog(spec_dir, warehouse_of(warehouse), workers=n, progress=tick, force=force, rewriter=config,
                               engine=engine, address=address)
    if result.rows:
        print_frame(pl.DataFrame([{"world": r.world, "status": r.status, "archetype": r.archetype, "rows": r.rows, "pages": r.pages,
                                   "tasks": r.tasks, "oracle F1 min": r.oracle_f1_min, "build s": r.build_s}
                                  for r in result.rows]).sort("world"),
                    f"{result.path}: {len(result.rows)} world(s) this run")
    for r in sorted(result.failed, key=lambda r: r.world):
        out.print(f"[red]failed[/] {escape(r.world)}: {escape(r.error or '')}", soft_wrap=True)
    if result.stale:
        from worldforge import GENERATOR_VERSION

        names = ", ".join(sorted(r.world for r in result.stale))
        out.print(f"rebuilt {len(result.stale)} stale world(s), built by another generator version than {GENERATOR_VERSION} "
                  f"though their specs were unchanged: {escape(names)}", soft_wrap=True)
    out.print(f"built {result.built}, failed {len(result.failed)}, skipped {len(result.skipped)} (unchanged) in {result.wall_s:.1f} s"
              f" on {result.workers} {'Ray task(s) in flight at most' if engine == 'ray' else 'worker(s)'}: {result.worlds_per_min:.1f} worlds/min")
    if result.failed:
        raise typer.Exit(1)

# --- report ---------------------------------------------------------------------------------------


@app.command("report")
def report(warehouse: WarehouseOpt = None) -> None:
    """The catalog's diversity: archetypes, schema signatures, table/column names, entity-name overlap, rows, tasks, years."""
    import polars as pl

    from worldforge.catalog.report import catalog_report

    with user_errors():
        rep = catalog_report(warehouse_of(warehouse))
    table = Table(title="catalog diversity")
    table.add_column("figure")
    table.add_column("value", justify="right")
    for name, value in rep.figures().items():
        table.add_row(escape(name), escape(value))
    out.print(table)
    if rep.archetypes:
        print_frame(pl.DataFrame({"archetype": list(rep.archetypes), "worlds": list(rep.archetypes.values())}), "built worlds per archetype")
    if rep.world_tasks:
        wt = rep.world_tasks
        print_frame(pl.DataFrame({"world": list(wt), "tasks": [w.tasks for w in wt.values()], "base-world tasks": [w.base for w in wt.values()],
                                  "median gold rows": [float(w.median_gold) for w in wt.values()], "largest gold": [w.max_gold for w in wt.values()]}),
                    "wide tasks per world (gold rows of the base world's)")
    if rep.stale:
        from worldforge import GENERATOR_VERSION

        out.print(f"{len(rep.stale)} stale world(s), built by another generator version than {GENERATOR_VERSION} "
                  f"(`worldforge catalog build` rebuilds them): {escape(', '.join(rep.stale))}", soft_wrap=True)
    if rep.failures:
        print_frame(pl.DataFrame({"world": [w for w, _ in rep.failures], "error": [e[:160] for _, e in rep.failures]}),
                    f"{len(rep.failures)} failed world(s)")
