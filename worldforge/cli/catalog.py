"""``worldforge catalog generate | author | build | report``: a catalog of distinct worlds (:mod:`worldforge.catalog`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from worldforge.cli._common import err, fail, out, progress, user_errors

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

    if backend not in AUTHOR_BACKENDS:
        raise fail(f"--backend {backend!r} cannot author specs; use one of: {', '.join(AUTHOR_BACKENDS)} (an OpenAI-compatible server such as vllm serve)")
    with user_errors(), err.status("asking the world model for a spec", spinner="dots"):
        authored = author_spec(topic, base_url=base_url, model=model, api_key=api_key, max_rounds=max_rounds, max_tokens=max_tokens,
                               temperature=temperature, timeout=timeout, seed=seed, out=output)
    for i, problems in enumerate(authored.problems, 1):
        out.print(f"round {i}: {len(problems)} problem(s), sent back for repair", highlight=False)
    spec = authored.spec
    rows = f"{len(spec.tables)} tables ({', '.join(spec.tables)})"
    out.print(f"[green]ok[/] {escape(spec.world)}: {escape(rows)}, target year {spec.target_year}, "
              f"valid after {authored.rounds} round(s) → {escape(str(authored.path))}", soft_wrap=True)

# --- build ----------------------------------------------------------------------------------------

# --- report ---------------------------------------------------------------------------------------
