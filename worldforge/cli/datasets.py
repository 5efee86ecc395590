"""``worldforge datasets build cpt | sft | agentworldbench``: training and evaluation data from the warehouse."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape

from worldforge.cli._common import WarehouseOpt, out, print_tally, progress, user_errors, warehouse_of
from worldforge.datasets.config import CPTConfig, ExportConfig, SFTConfig, SplitConfig, default
from worldforge.settings import get_settings

app = typer.Typer(help="Build CPT and SFT datasets and the AgentWorldBench export from the warehouse.", no_args_is_help=True)
build_app = typer.Typer(help="Build one dataset under WAREHOUSE/datasets/.", no_args_is_help=True)
app.add_typer(build_app, name="build")

OutputOpt = Annotated[Optional[Path], typer.Option("--output", "-o", help="Dataset folder (default: WAREHOUSE/datasets/<name>).", show_default=False)]
TokenizerOpt = Annotated[Optional[str], typer.Option(help="Hugging Face tokenizer folder (default: WORLDFORGE_TOKENIZER, else a local BPE stand-in under WAREHOUSE/models/tokenizer).", show_default=False)]
SeedOpt = Annotated[int, typer.Option(help="Seeds the held-out split (and sampling).")]
TestFractionOpt = Annotated[float, typer.Option(help="Share of trajectories held out for the AgentWorldBench export.")]


def _print_build(report) -> None:
    out.print(f"{report.name}: {report.samples} sample(s) -> {report.path}")
    print_tally(report.tally)
    for note in report.notes:
        out.print(f"  note: {escape(note)}")


@build_app.command("cpt")
def cpt(
    warehouse: WarehouseOpt = None,
    output: OutputOpt = None,
    tokenizer: TokenizerOpt = None,
    max_tokens: Annotated[int, typer.Option(help="Token budget per sample; longer trajectories are split.")] = default(CPTConfig, "max_tokens"),
    mask_actions: Annotated[bool, typer.Option(help="No loss on the agent's actions.")] = default(CPTConfig, "mask_actions"),
    pages: Annotated[bool, typer.Option(help="Add the world corpus pages as samples.")] = default(CPTConfig, "include_pages"),
    seed: SeedOpt = default(SplitConfig, "seed"),
    test_fraction: TestFractionOpt = default(SplitConfig, "test_fraction"),
) -> None:
    """CPT samples: trajectories as text with turn-level loss masks, plus world pages (Parquet + JSONL + card)."""
    from worldforge.datasets.cpt import build_cpt

    with user_errors():
        wh = warehouse_of(warehouse)
        config = CPTConfig(tokenizer=tokenizer or get_settings().tokenizer or None, max_tokens=max_tokens, mask_actions=mask_actions,
                           include_pages=pages, seed=seed, test_fraction=test_fraction)
        with progress() as bar:
            task = bar.add_task("cpt", total=None)
            report = build_cpt(wh, output or wh.dataset("cpt"), config, progress=lambda d: bar.update(task, completed=d))
    _print_build(report)
    out.print(f"  tokens: {report.stats['tokens']:,}, carrying loss: {report.stats['loss_tokens']:,} (share {report.stats['loss_share']:.3f})")


@build_app.command("sft")
def sft(
    warehouse: WarehouseOpt = None,
    output: OutputOpt = None,
    tokenizer: TokenizerOpt = None,
    backend: Annotated[Optional[str], typer.Option("--backend", "-b", help="World model for rejection sampling (openai | vllm | transformers | grounded); none: the non-thinking variant.")] = None,
    base_url: Annotated[Optional[str], typer.Option(help="openai: the endpoint, e.g. http://127.0.0.1:8000/v1.")] = None,
    model: Annotated[Optional[str], typer.Option(help="Model name or folder.")] = None,
    k: Annotated[int, typer.Option("-k", help="Candidates per sample.")] = default(SFTConfig, "k"),
    threshold: Annotated[float, typer.Option(help="Aggregate verifier score (0-1) the best candidate needs.")] = default(SFTConfig, "threshold"),
    max_context_tokens: Annotated[int, typer.Option(help="Prompt + target token budget; the oldest context turns are dropped first.")] = default(SFTConfig, "max_context_tokens"),
    all_turns: Annotated[bool, typer.Option("--all-turns", help="Targets on every turn, not only informative ones.")] = False,
    max_new_tokens: Annotated[int, typer.Option(help="Tokens per candidate at most.")] = default(SFTConfig, "max_new_tokens"),
    seed: SeedOpt = default(SplitConfig, "seed"),
    test_fraction: TestFractionOpt = default(SplitConfig, "test_fraction"),
) -> None:
    """SFT samples: next-state prediction, targets selected by rejection sampling (or the real observation without a backend)."""
    from worldforge.datasets.sft import build_sft
    from worldforge.errors import WorldforgeError
    from worldforge.worldmodel.backends import world_model

    with user_errors():
        wh = warehouse_of(warehouse)
        if backend is None and (base_url or model):
            raise WorldforgeError("--base-url/--model need --backend (e.g. --backend openai)")
        config = SFTConfig(tokenizer=tokenizer or get_settings().tokenizer or None, k=k, threshold=threshold, max_context_tokens=max_context_tokens,
                           targets="all" if all_turns else "informative", max_new_tokens=max_new_tokens, seed=seed, test_fraction=test_fraction)
        wm = world_model(backend, base_url=base_url, model=model, warehouse=str(wh), settings=get_settings()) if backend else None
        with progress() as bar:
            task = bar.add_task("sft", total=None)
            report = build_sft(wh, output or wh.dataset("sft"), config, wm, progress=lambda d: bar.update(task, completed=d))
    _print_build(report)
    for d, a in report.stats["acceptance_by_domain"].items():
        out.print(f"  {d}: {a['accepted']}/{a['targets']} accepted ({a['rate']:.1%})")


@build_app.command("agentworldbench")
def agentworldbench(
    warehouse: WarehouseOpt = None,
    output: OutputOpt = None,
    max_per_domain: Annotated[Optional[int], typer.Option(help="Records per domain at most.")] = default(ExportConfig, "max_records_per_domain"),
    seed: SeedOpt = default(SplitConfig, "seed"),
    test_fraction: TestFractionOpt = default(SplitConfig, "test_fraction"),
) -> None:
    """The held-out split as AgentWorldBench <domain>_test.jsonl files (for eval infer | judge | score)."""
    from worldforge.datasets.agentworldbench import build_agentworldbench

    with user_errors():
        wh = warehouse_of(warehouse)
        config = ExportConfig(seed=seed, test_fraction=test_fraction, max_records_per_domain=max_per_domain)
        report = build_agentworldbench(wh, output or wh.dataset("agentworldbench"), config)
    _print_build(report)
