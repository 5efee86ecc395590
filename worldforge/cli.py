"""The ``worldforge`` command line (typer + rich).

User mistakes (a malformed spec, a missing file, a broken warehouse file) print one clear
message and exit with status 2, without a traceback; failed checks exit with status 1.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Iterator, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from worldforge.errors import WorldforgeError

app = typer.Typer(help="worldforge: fictional worlds and agent-trajectory datasets for world models.", no_args_is_help=True, pretty_exceptions_enable=False)
world_app = typer.Typer(help="Build and check fictional worlds.", no_args_is_help=True)
traj_app = typer.Typer(help="Ingest real agent trajectories.", no_args_is_help=True)
corpus_app = typer.Typer(help="Search corpora of worlds: build, check, index, search.", no_args_is_help=True)
tasks_app = typer.Typer(help="WideSearch-style tasks: export from a world, score an answer.", no_args_is_help=True)
app.add_typer(world_app, name="world")
app.add_typer(traj_app, name="trajectories")
serve_app = typer.Typer(help="Serve environments over HTTP and MCP.", no_args_is_help=True)
app.add_typer(corpus_app, name="corpus")
app.add_typer(tasks_app, name="tasks")
app.add_typer(serve_app, name="serve")
dev_app = typer.Typer(help="Developer tools: a tiny local model, a local vLLM server.", no_args_is_help=True)
eval_app = typer.Typer(help="World-model evaluation over AgentWorldBench-format files.", no_args_is_help=True)
datasets_app = typer.Typer(help="Build CPT and SFT datasets and the AgentWorldBench export from the warehouse.", no_args_is_help=True)
build_app = typer.Typer(help="Build one dataset under WAREHOUSE/datasets/.", no_args_is_help=True)
app.add_typer(dev_app, name="dev")
app.add_typer(eval_app, name="eval")
app.add_typer(datasets_app, name="datasets")
datasets_app.add_typer(build_app, name="build")

out = Console()
err = Console(stderr=True)

DEFAULT_WAREHOUSE = os.environ.get("WORLDFORGE_WAREHOUSE", "warehouse")
WarehouseOpt = Annotated[Path, typer.Option("--warehouse", "-w", help="Warehouse folder (env WORLDFORGE_WAREHOUSE).")]


@contextmanager
def _user_errors() -> Iterator[None]:
    try:
        yield
    except WorldforgeError as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    except FileNotFoundError as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    except ValueError as exc:  # pydantic validation of settings (a ValueError subclass)
        err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None


def _progress() -> Progress:
    return Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=err, transient=True, disable=not err.is_terminal)


@world_app.command("build")
def world_build(
    spec: Annotated[Path, typer.Argument(help="World spec YAML file.")],
    seed: Annotated[int | None, typer.Option(help="Seed (default: the spec's).")] = None,
    warehouse: WarehouseOpt = Path(DEFAULT_WAREHOUSE),
) -> None:
    """Generate a world from SPEC and its scenarios, check their invariants and write WAREHOUSE/<world>.duckdb."""
    from worldforge.scenarios import build_scenarios
    from worldforge.spec import load_spec
    from worldforge.synth import build_world, check_world
    from worldforge.warehouse import write_world

    with _user_errors():
        with _progress() as prog:
            task = prog.add_task("validating spec", total=5)
            world_spec = load_spec(spec)
            prog.update(task, advance=1, description="generating tables")
            tables = build_world(world_spec, seed)
            prog.update(task, advance=1, description="checking invariants")
            violations = check_world(world_spec, tables)
            prog.update(task, advance=1, description="building scenarios")
            scenarios = build_scenarios(world_spec, tables) if not violations else {}
            prog.update(task, advance=1, description="writing DuckDB")
            if not violations:
                path = write_world(world_spec, tables, warehouse, seed, scenarios)
            prog.update(task, advance=1)
        if violations:
            _print_violations(violations)
            err.print(f"[red]not written[/]: {len(violations)} violation(s); the previous file (if any) is untouched")
            raise typer.Exit(1)
    table = Table(title=f"{world_spec.world} (seed {world_spec.seed if seed is None else seed}) → {path}")
    table.add_column("table")
    table.add_column("rows", justify="right")
    table.add_column("columns", justify="right")
    for name, frame in tables.items():
        table.add_row(name, str(frame.height), str(frame.width))
    table.add_row("[bold]total[/]", f"[bold]{sum(f.height for f in tables.values())}[/]", "")
    out.print(table)
    for name, stables in scenarios.items():
        out.print(f"scenario {name}: schema scenario_{name}, {sum(f.height for f in stables.values())} rows")


def _print_violations(violations) -> None:
    table = Table(title=f"{len(violations)} violation(s)", title_style="bold red")
    for col in ("table", "check", "rows", "detail"):
        table.add_column(col, overflow="fold")
    for v in violations:
        ex = f" (e.g. {v.example})" if v.example is not None else ""
        table.add_row(escape(v.table), escape(v.check), str(v.rows), escape(v.detail + ex))
    out.print(table)


@world_app.command("check")
def world_check(path: Annotated[Path, typer.Argument(help="A world file, WAREHOUSE/<world>.duckdb.")]) -> None:
    """Re-check a world file: keys, foreign keys, declared constraints, row budget. Exit 1 on any violation."""
    from worldforge.warehouse import check_world_file

    with _user_errors():
        wf, violations = check_world_file(path)
    if violations:
        _print_violations(violations)
        raise typer.Exit(1)
    rows = sum(f.height for f in wf.tables.values())
    out.print(f"[green]ok[/] {wf.spec.world}: {len(wf.tables)} tables, {rows} rows, seed {wf.meta['seed']}, no violations")


@traj_app.command("ingest")
def trajectories_ingest(
    paths: Annotated[list[Path], typer.Argument(help="Trajectory files or folders (walked recursively).")],
    warehouse: WarehouseOpt = Path(DEFAULT_WAREHOUSE),
) -> None:
    """Read trajectory files of any supported format into WAREHOUSE/trajectories.duckdb."""
    from worldforge.trajectories import discover, ingest

    with _user_errors():
        files, _ = discover(paths)
        with _progress() as prog:
            task = prog.add_task("reading trajectories", total=len(files))
            advance: Callable[[str], None] = lambda rel: prog.update(task, advance=1, description=rel[-60:])
            report = ingest(paths, warehouse, progress=advance)
    table = Table(title=f"ingested into {report.path}")
    for col in ("source", "trajectories", "turns"):
        table.add_column(col, justify="right" if col != "source" else "left")
    for src, (n_traj, n_turns) in sorted(report.by_source.items()):
        table.add_row(src, str(n_traj), str(n_turns))
    out.print(table)
    mark = "[green]balanced[/]" if report.balanced else "[red]NOT balanced[/]"
    out.print(
        f"records in {report.records_in} = trajectories kept {report.trajectories} + quarantined {report.quarantined}  {mark}\n"
        f"files read {report.files} (skipped {report.skipped} non-data files); turns {report.turns}; "
        f"informative share {report.informative_share:.1%}"
    )
    if report.quarantined:
        out.print("quarantined records: [bold]SELECT * FROM quarantine[/] in the store")
    if not report.balanced:
        raise typer.Exit(1)


@corpus_app.command("build")
def corpus_build(
    world: Annotated[str, typer.Argument(help="World name (WAREHOUSE/<world>.duckdb, built with `world build`).")],
    warehouse: WarehouseOpt = Path(DEFAULT_WAREHOUSE),
) -> None:
    """Generate the search corpus of WORLD and its scenarios, check every stated fact, and index it."""
    from worldforge.corpus import build_corpus, build_index, check_corpus
    from worldforge.warehouse import world_path

    path = world_path(warehouse, world)
    with _user_errors():
        with _progress() as prog:
            task = prog.add_task("generating pages", total=3)
            report = build_corpus(path)
            prog.update(task, advance=1, description="checking facts against the tables")
            bad = check_corpus(path)
            prog.update(task, advance=1, description="indexing")
            dirs = [build_index(path, scen) for scen in report.pages]
            prog.update(task, advance=1)
    table = Table(title=f"corpus of {world} → {path}")
    for col in ("corpus", "pages", "index"):
        table.add_column(col)
    for (scen, n), d in zip(report.pages.items(), dirs):
        table.add_row(scen or "(world)", str(n), str(d))
    out.print(table)
    out.print(f"facts stated: {report.facts}; contradicted: {bad.height}")
    if bad.height:
        out.print(bad.head(20))
        raise typer.Exit(1)


@corpus_app.command("search")
def corpus_search(
    world: Annotated[str, typer.Argument(help="World name.")],
    query: Annotated[str, typer.Argument(help="Free-text query.")],
    k: Annotated[int, typer.Option("-k", help="Results.")] = 10,
    scenario: Annotated[str | None, typer.Option(help="Search a scenario's corpus.")] = None,
    warehouse: WarehouseOpt = Path(DEFAULT_WAREHOUSE),
) -> None:
    """BM25 search over a world's corpus (results as the web_search tool shows them)."""
    from worldforge.corpus import search

    with _user_errors():
        hits = search(world, query, k, warehouse, scenario)
    for i, h in enumerate(hits, start=1):
        published = h.published or "N/A"
        out.print(f"[{i}] {h.url}\nTitle: {escape(h.title)}\nSnippet: {escape(h.snippet)}\nDate: {published}\n", highlight=False)
    if not hits:
        out.print("no results")


@tasks_app.command("export")
def tasks_export(
    out_dir: Annotated[Path, typer.Argument(help="Folder for tasks.jsonl and tables/<instance_id>.csv.")],
    world: Annotated[str, typer.Option("--world", help="World name.")],
    warehouse: WarehouseOpt = Path(DEFAULT_WAREHOUSE),
) -> None:
    """Generate WORLD's tasks (world and scenarios), check they are solvable in its corpus, and export them."""
    from worldforge.tasks import write_tasks
    from worldforge.tasks.store import build_tasks
    from worldforge.warehouse import world_path

    with _user_errors():
        built = build_tasks(world_path(warehouse, world))
        jsonl = write_tasks(built.tasks, out_dir)
    out.print(f"{len(built.tasks)} tasks → {jsonl} (+ {out_dir / 'tables'}/<instance_id>.csv); unsolvable: {len(built.unsolvable)}")
    for iid, problems in built.unsolvable.items():
        out.print(f"[red]{iid}[/]: {escape(problems[0])}")
    if built.unsolvable:
        raise typer.Exit(1)


@tasks_app.command("score")
def tasks_score(
    answer: Annotated[Path, typer.Argument(help="The answer: a file holding one Markdown table.")],
    tasks: Annotated[Path, typer.Option("--tasks", help="tasks.jsonl (gold tables in tables/ beside it).")],
    instance_id: Annotated[str, typer.Option("--id", help="The task's instance_id.")],
) -> None:
    """Score ANSWER against a WideSearch-format task; prints one JSON object."""
    import json

    from worldforge.tasks import TaskError, load_tasks, score_table

    with _user_errors():
        if not answer.is_file():
            raise FileNotFoundError(f"{answer}: no such answer file")
        loaded = load_tasks(tasks)
        if instance_id not in loaded:
            some = ", ".join(list(loaded)[:5])
            raise TaskError(f"{tasks}: no task {instance_id!r} (e.g. {some})")
        result = score_table(answer.read_text(encoding="utf-8"), loaded[instance_id])
    print(json.dumps(result.as_dict(), ensure_ascii=False))


def _count(path: Path, table: str) -> str:
    from worldforge.warehouse.duck import open_readonly, quote_ident

    con = open_readonly(path)
    try:
        if not con.execute("SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'main' AND table_name = ?", [table]).fetchall()[0][0]:
            return "-"
        return str(con.execute(f"SELECT count(*) FROM {quote_ident(table)}").fetchall()[0][0])
    finally:
        con.close()


@serve_app.command("search")
def serve_search(
    world: Annotated[str, typer.Option("--world", help="The default world of new sessions.")],
    port: Annotated[int, typer.Option(help="TCP port.")] = 8000,
    host: Annotated[str, typer.Option(help="Interface to bind (loopback by default).")] = "127.0.0.1",
    idle_timeout: Annotated[float, typer.Option(help="Seconds before an idle session expires.")] = 600.0,
    record: Annotated[bool, typer.Option(help="Record closed sessions in WAREHOUSE/episodes.duckdb.")] = True,
    warehouse: WarehouseOpt = Path(DEFAULT_WAREHOUSE),
) -> None:
    """Serve the simulated search environment: HTTP sessions at /sessions, MCP at /mcp."""
    import uvicorn

    from worldforge.simenv.server import create_app

    with _user_errors():
        api = create_app(world, warehouse, idle_timeout=idle_timeout, record=record)
    err.print(f"serving {world}: http://{host}:{port}/sessions (HTTP), http://{host}:{port}/mcp (MCP)")
    uvicorn.run(api, host=host, port=port, log_level="warning")


@app.command("sql")
def sql(
    name: Annotated[str, typer.Argument(help="A world name, or trajectories / episodes: WAREHOUSE/<name>.duckdb.")],
    query: Annotated[str, typer.Argument(help="SQL to run (read-only).")],
    limit: Annotated[int, typer.Option(help="Rows to print at most.")] = 50,
    warehouse: WarehouseOpt = Path(DEFAULT_WAREHOUSE),
) -> None:
    """Run SQL against a warehouse file opened read-only and print the result as a table.

    World files carry documented views: v_columns, v_pages, v_facts, v_tasks, v_task_rows
    (see `SELECT view_name, comment FROM duckdb_views() WHERE NOT internal`).
    """
    import duckdb

    from worldforge.warehouse.duck import open_readonly

    path = Path(warehouse) / f"{name}.duckdb"
    with _user_errors():
        con = open_readonly(path)
    try:
        rel = con.sql(query)
        if rel is None:
            err.print("[bold red]error:[/] the statement returned no rows (only SELECT-like queries are allowed here)")
            raise typer.Exit(2)
        frame = rel.limit(limit + 1).pl()
    except duckdb.Error as exc:
        first = str(exc).splitlines()[0]
        if "read-only" in first.lower():
            err.print(f"[bold red]error:[/] {escape(path.name)} is opened read-only: this statement would change it ({escape(first)})", soft_wrap=True)
        else:
            err.print(f"[bold red]error:[/] {escape(first)}", soft_wrap=True)
        raise typer.Exit(2) from None
    finally:
        con.close()
    table = Table(title=f"{path.name}: {min(frame.height, limit)} row(s)" + (" (more not shown)" if frame.height > limit else ""))
    for col in frame.columns:
        table.add_column(escape(col), overflow="fold")
    for row in frame.head(limit).iter_rows():
        table.add_row(*(escape("" if v is None else str(v)) for v in row))
    out.print(table)


@dev_app.command("tiny-model")
def dev_tiny_model(
    out_dir: Annotated[Path, typer.Argument(help="Folder to write the model to.")],
    hidden_size: Annotated[int, typer.Option(help="Model width (64-128 keeps it tiny).")] = 64,
    layers: Annotated[int, typer.Option(help="Decoder layers.")] = 2,
    seed: Annotated[int, typer.Option(help="Seeds the tokenizer text and the weights.")] = 0,
) -> None:
    """Build a tiny random-init Qwen2 chat model (BPE tokenizer trained here, ChatML template).

    Its text is noise: it exists to exercise servers and pipelines without a download.
    """
    from worldforge.llm.tiny import build_tiny_model

    with _user_errors():
        path = build_tiny_model(out_dir, hidden_size=hidden_size, layers=layers, seed=seed)
    out.print(f"tiny model written to {path} (serve it: worldforge dev serve {path})")


@dev_app.command("serve")
def dev_serve(
    model: Annotated[Path, typer.Argument(help="A model folder.")],
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1.")] = 8000,
    max_model_len: Annotated[int, typer.Option(help="Context length.")] = 4096,
    cache_dir: Annotated[Path, typer.Option(help="vLLM and inductor caches.")] = Path(".cache"),
) -> None:
    """Run `vllm serve` for a local model on 127.0.0.1 until Ctrl-C (stops every engine process)."""
    import time

    from worldforge.llm.server import VLLMServer

    server = VLLMServer(model, port=port, max_model_len=max_model_len, cache_dir=cache_dir)
    with _user_errors():
        server.start()
    out.print(f"serving {model} at {server.base_url} (log: {server.log_path}); Ctrl-C stops it")
    try:
        while server.proc is not None and server.proc.poll() is None:
            time.sleep(1)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


BackendOpt = Annotated[str, typer.Option("--backend", "-b", help="openai | vllm | transformers | grounded.")]


def _backend(kind: str, base_url: str | None, model: str | None, concurrency: int | None, warehouse: Path):
    """A backend from CLI options; options that do not apply to ``kind`` are a user error."""
    from worldforge.llm import make_backend

    settings: dict = {"model": model}
    if kind == "openai":
        settings |= {"base_url": base_url, "concurrency": concurrency}
    elif base_url is not None:
        raise WorldforgeError(f"--base-url applies to the openai backend only, not {kind!r}")
    if kind == "grounded":
        settings["warehouse"] = str(warehouse)
    return make_backend(kind, **settings)


@eval_app.command("infer")
def eval_infer(
    input_path: Annotated[Path, typer.Argument(help="An AgentWorldBench-format JSONL file (<domain>_test.jsonl).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Predictions JSONL (one line per input line).")],
    backend: BackendOpt = "openai",
    base_url: Annotated[Optional[str], typer.Option(help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1.")] = None,
    model: Annotated[Optional[str], typer.Option(help="Model name (openai: default the first served) or folder.")] = None,
    concurrency: Annotated[Optional[int], typer.Option(help="openai: requests in flight.")] = None,
    max_tokens: Annotated[int, typer.Option(help="Tokens per reply at most.")] = 1024,
    temperature: Annotated[float, typer.Option(help="Sampling temperature.")] = 0.7,
    seed: Annotated[int, typer.Option(help="Sampling seed.")] = 0,
    structured: Annotated[bool, typer.Option("--structured", help="Ask for the JSON form {think, predicted_observation} (openai, vllm).")] = False,
    cache: Annotated[Optional[Path], typer.Option(help="Completion cache (default OUTPUT.cache.sqlite); re-runs resume from it.")] = None,
    warehouse: WarehouseOpt = Path(DEFAULT_WAREHOUSE),
) -> None:
    """Predict the observation of every record with a world model; failures are recorded, not fatal."""
    from worldforge.llm import GenerationParams
    from worldforge.llm.infer import infer_file
    from worldforge.llm.prompts import PREDICTION_SCHEMA

    with _user_errors():
        wm = _backend(backend, base_url, model, concurrency, warehouse)
        params = GenerationParams(max_tokens=max_tokens, temperature=temperature, seed=seed, json_schema=PREDICTION_SCHEMA if structured else None)
        with _progress() as bar:
            task = bar.add_task("world model", total=None)
            report = infer_file(input_path, output, wm, params, cache, progress=lambda d, t: bar.update(task, completed=d, total=t))
    failed = ", ".join(f"{k}: {v}" for k, v in report.failed.most_common()) or "none"
    out.print(f"{report.lines} line(s) -> {report.output}: {report.ok} predicted, {sum(report.failed.values())} failed ({failed}); "
              f"{report.generated} generated, {report.cached} from cache")


TokenizerOpt = Annotated[Optional[str], typer.Option(help="Hugging Face tokenizer folder (env WORLDFORGE_TOKENIZER; default: a local BPE stand-in under WAREHOUSE/models/tokenizer).")]
SeedOpt = Annotated[int, typer.Option(help="Seeds the held-out split (and sampling).")]
TestFractionOpt = Annotated[float, typer.Option(help="Share of trajectories held out for the AgentWorldBench export.")]


def _tokenizer(tokenizer: str | None, warehouse: Path) -> str:
    from worldforge.datasets.tokenizer import default_tokenizer

    return tokenizer or os.environ.get("WORLDFORGE_TOKENIZER") or str(default_tokenizer(warehouse))


def _print_build(report) -> None:
    skipped = ", ".join(f"{k}: {v}" for k, v in report.skipped.most_common()) or "none"
    out.print(f"{report.name}: {report.inputs} in = {report.written} written + {sum(report.skipped.values())} skipped ({skipped}); "
              f"{report.samples} sample(s) -> {report.path}")
    for note in report.notes:
        out.print(f"  note: {note}")


@build_app.command("cpt")
def datasets_build_cpt(
    warehouse: WarehouseOpt = Path(DEFAULT_WAREHOUSE),
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Dataset folder (default WAREHOUSE/datasets/cpt).")] = None,
    tokenizer: TokenizerOpt = None,
    max_tokens: Annotated[int, typer.Option(help="Token budget per sample; longer trajectories are split.")] = 4096,
    mask_actions: Annotated[bool, typer.Option(help="No loss on the agent's actions.")] = True,
    pages: Annotated[bool, typer.Option(help="Add the world corpus pages as samples.")] = True,
    seed: SeedOpt = 0,
    test_fraction: TestFractionOpt = 0.1,
) -> None:
    """CPT samples: trajectories as text with turn-level loss masks, plus world pages (Parquet + JSONL + card)."""
    from worldforge.datasets.cpt import CPTConfig, build_cpt

    with _user_errors():
        config = CPTConfig(tokenizer=_tokenizer(tokenizer, warehouse), max_tokens=max_tokens, mask_actions=mask_actions,
                           include_pages=pages, seed=seed, test_fraction=test_fraction)
        with _progress() as bar:
            task = bar.add_task("cpt", total=None)
            report = build_cpt(warehouse, output or Path(warehouse) / "datasets" / "cpt", config, progress=lambda d: bar.update(task, completed=d))
    _print_build(report)
    out.print(f"  tokens: {report.stats['tokens']:,}, carrying loss: {report.stats['loss_tokens']:,} (share {report.stats['loss_share']:.3f})")


@build_app.command("sft")
def datasets_build_sft(
    warehouse: WarehouseOpt = Path(DEFAULT_WAREHOUSE),
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Dataset folder (default WAREHOUSE/datasets/sft).")] = None,
    tokenizer: TokenizerOpt = None,
    backend: Annotated[Optional[str], typer.Option("--backend", "-b", help="World model for rejection sampling (openai | vllm | transformers | grounded); none: the non-thinking variant.")] = None,
    base_url: Annotated[Optional[str], typer.Option(help="openai: the endpoint, e.g. http://127.0.0.1:8000/v1.")] = None,
    model: Annotated[Optional[str], typer.Option(help="Model name or folder.")] = None,
    k: Annotated[int, typer.Option("-k", help="Candidates per sample.")] = 4,
    threshold: Annotated[float, typer.Option(help="Aggregate verifier score (0-1) the best candidate needs.")] = 0.5,
    max_context_tokens: Annotated[int, typer.Option(help="Prompt + target token budget; the oldest context turns are dropped first.")] = 8192,
    all_turns: Annotated[bool, typer.Option("--all-turns", help="Targets on every turn, not only informative ones.")] = False,
    max_new_tokens: Annotated[int, typer.Option(help="Tokens per candidate at most.")] = 1024,
    seed: SeedOpt = 0,
    test_fraction: TestFractionOpt = 0.1,
) -> None:
    """SFT samples: next-state prediction, targets selected by rejection sampling (or the real observation without a backend)."""
    from worldforge.datasets.sft import SFTConfig, build_sft

    with _user_errors():
        config = SFTConfig(tokenizer=_tokenizer(tokenizer, warehouse), k=k, threshold=threshold, max_context_tokens=max_context_tokens,
                           targets="all" if all_turns else "informative", max_new_tokens=max_new_tokens, seed=seed, test_fraction=test_fraction)
        wm = _backend(backend, base_url, model, None, warehouse) if backend else None
        if wm is None and (base_url or model):
            raise WorldforgeError("--base-url/--model need --backend (e.g. --backend openai)")
        with _progress() as bar:
            task = bar.add_task("sft", total=None)
            report = build_sft(warehouse, output or Path(warehouse) / "datasets" / "sft", config, wm, progress=lambda d: bar.update(task, completed=d))
    _print_build(report)
    for d, a in report.stats["acceptance_by_domain"].items():
        out.print(f"  {d}: {a['accepted']}/{a['targets']} accepted ({a['rate']:.1%})")


@build_app.command("agentworldbench")
def datasets_build_agentworldbench(
    warehouse: WarehouseOpt = Path(DEFAULT_WAREHOUSE),
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Folder (default WAREHOUSE/datasets/agentworldbench).")] = None,
    max_per_domain: Annotated[Optional[int], typer.Option(help="Records per domain at most.")] = None,
    seed: SeedOpt = 0,
    test_fraction: TestFractionOpt = 0.1,
) -> None:
    """The held-out split as AgentWorldBench <domain>_test.jsonl files (for eval infer | judge | score)."""
    from worldforge.datasets.agentworldbench import ExportConfig, build_agentworldbench

    with _user_errors():
        config = ExportConfig(seed=seed, test_fraction=test_fraction, max_records_per_domain=max_per_domain)
        report = build_agentworldbench(warehouse, output or Path(warehouse) / "datasets" / "agentworldbench", config)
    _print_build(report)


@eval_app.command("judge")
def eval_judge(
    predictions: Annotated[Path, typer.Argument(help="The predictions JSONL of `worldforge eval infer`.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Judged JSONL (rule metrics, judge scores).")],
    judge: Annotated[Optional[str], typer.Option("--judge", help="Judge backend (openai | vllm | transformers); none: rule metrics only.")] = None,
    base_url: Annotated[Optional[str], typer.Option(help="openai: the judge endpoint.")] = None,
    model: Annotated[Optional[str], typer.Option(help="Judge model name or folder.")] = None,
    warehouse: WarehouseOpt = Path(DEFAULT_WAREHOUSE),
) -> None:
    """Score predictions with the rule verifiers and, with --judge, the five judge dimensions (1-5 -> 0-100)."""
    from worldforge.llm.judge import judge_file

    with _user_errors():
        if judge is None and (base_url or model):
            raise WorldforgeError("--base-url/--model need --judge (e.g. --judge openai)")
        backend = _backend(judge, base_url, model, None, warehouse) if judge else None
        with _progress() as bar:
            task = bar.add_task("judge", total=None)
            report = judge_file(predictions, output, backend, progress=lambda d, t: bar.update(task, completed=d, total=t))
    failed = ", ".join(f"{k}: {v}" for k, v in report.judge_failed.most_common()) or "none"
    out.print(f"{report.lines} line(s) -> {report.output}: {report.ok} predicted, {report.failed} failed predictions; "
              + (f"judged {report.judged}, judge failures {sum(report.judge_failed.values())} ({failed})" if judge else "rule metrics only (no --judge)"))


@eval_app.command("score")
def eval_score(
    judged: Annotated[Path, typer.Argument(help="The output of `worldforge eval judge`.")],
    json_out: Annotated[Optional[Path], typer.Option("--json", help="Also write the scores as JSON here.")] = None,
) -> None:
    """Scores per domain and overall: rule metrics and judge dimensions on 0-100."""
    import json

    from worldforge.datasets.verifiers import VERIFIERS
    from worldforge.llm.judge import JUDGE_DIMENSIONS, score_file

    with _user_errors():
        scores = score_file(judged)
    table = Table(title=f"world-model scores, 0-100 ({judged})")
    table.add_column("metric")
    for d in scores:
        table.add_column(d, justify="right")
    fmt = lambda v: "-" if v is None else f"{v:.1f}"  # noqa: E731
    table.add_row("lines", *(str(s["lines"]) for s in scores.values()))
    table.add_row("failed", *(str(s["failed"]) for s in scores.values()))
    for m in VERIFIERS:
        table.add_row(m, *(fmt(s["rules"][m]) for s in scores.values()))
    table.add_row("judged", *(str(s["judged"]) for s in scores.values()))
    for j in JUDGE_DIMENSIONS:
        table.add_row(f"judge {j}", *(fmt(s["judge"][j]) for s in scores.values()))
    out.print(table)
    if json_out:
        json_out.write_text(json.dumps(scores, indent=2) + "\n", encoding="utf-8")


@app.command("summary")
def summary(warehouse: WarehouseOpt = Path(DEFAULT_WAREHOUSE)) -> None:
    """Summarise the warehouse: worlds and rows, trajectories, turns, informative share."""
    from worldforge.simenv.episodes import EPISODES_NAME, read_episodes
    from worldforge.trajectories.store import STORE_NAME, load_store
    from worldforge.warehouse import read_world

    with _user_errors():
        worlds = sorted(p for p in Path(warehouse).glob("*.duckdb") if p.name not in (STORE_NAME, EPISODES_NAME))
        table = Table(title=f"worlds in {warehouse}")
        for col in ("world", "seed", "tables", "rows", "scenarios", "pages", "tasks"):
            table.add_column(col, justify="left" if col == "world" else "right")
        total = 0
        for p in worlds:
            wf = read_world(p)
            rows = sum(f.height for f in wf.tables.values())
            total += rows
            pages, tasks = _count(p, "corpus_pages"), _count(p, "search_tasks")
            table.add_row(wf.spec.world, str(wf.meta["seed"]), str(len(wf.tables)), str(rows), str(len(wf.scenarios)), pages, tasks)
        out.print(table)
        store_file = Path(warehouse) / STORE_NAME
        store = load_store(store_file)
        episodes = read_episodes(warehouse)
    share = store.turns["informative"].mean() if store.turns.height else None
    out.print(f"worlds: {len(worlds)} ({total} rows)")
    out.print(
        f"trajectories: {store.trajectories.height} from {store.trajectories['source'].n_unique()} sources; "
        f"turns: {store.turns.height}; quarantined records: {store.quarantine.height}; "
        f"informative share: {'n/a' if share is None else f'{share:.1%}'}"
    )
    if episodes.height:
        solved = episodes.filter(episodes["f1_by_item"] == 1.0).height
        out.print(f"simulated episodes: {episodes.height} ({episodes['agent'].value_counts().sort('agent').rows()}); "
                  f"finished {int(episodes['finished'].sum())}; F1 1.0 in {solved}")
    import json

    for name in ("cpt", "sft", "agentworldbench"):
        rep = Path(warehouse) / "datasets" / name / "report.json"
        if rep.is_file():
            r = json.loads(rep.read_text())
            extra = f"; loss share {r['stats']['loss_share']:.1%}" if "loss_share" in r["stats"] else ""
            extra += f"; {r['stats']['variant']} variant" if "variant" in r["stats"] else ""
            out.print(f"dataset {name}: {r['samples']} samples from {r['inputs']} inputs ({r['written']} written, "
                      f"{sum(r['skipped'].values())} skipped){extra} -> {rep.parent}")
    scores = Path(warehouse) / "datasets" / "eval" / "scores.json"
    if scores.is_file():
        overall = json.loads(scores.read_text()).get("overall", {})
        f1 = (overall.get("rules") or {}).get("token_f1")
        out.print(f"world-model eval: {overall.get('lines', 0)} records, {overall.get('failed', 0)} failed; token F1 "
                  f"{'n/a' if f1 is None else f'{f1:.1f}'} (worldforge eval score {scores.parent / 'judged.jsonl'})")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(app())
