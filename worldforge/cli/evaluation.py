"""``worldforge eval infer | judge | score``: a world model on AgentWorldBench-format files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from worldforge.agentworldbench.infer import MAX_TOKENS
from worldforge.cli._common import WarehouseOpt, out, print_tally, progress, user_errors, warehouse_of

app = typer.Typer(help="World-model evaluation over AgentWorldBench-format files.", no_args_is_help=True)

BaseUrlOpt = Annotated[Optional[str], typer.Option(help="openai: the endpoint, e.g. http://127.0.0.1:8000/v1 (default: WORLDFORGE_VLLM_URL).", show_default=False)]
ModelOpt = Annotated[Optional[str], typer.Option(help="Model name (openai: default WORLDFORGE_VLLM_MODEL, else the first served) or folder.", show_default=False)]


@app.command("infer")
def infer(
    input_path: Annotated[Path, typer.Argument(help="An AgentWorldBench-format JSONL file (<domain>_test.jsonl).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Predictions JSONL (one line per input line).")],
    backend: Annotated[str, typer.Option("--backend", "-b", help="openai | vllm | transformers | grounded.")] = "openai",
    base_url: BaseUrlOpt = None,
    model: ModelOpt = None,
    concurrency: Annotated[Optional[int], typer.Option(help="openai: requests in flight.")] = None,
    max_tokens: Annotated[int, typer.Option(help="Tokens per reply at most.")] = MAX_TOKENS,
    temperature: Annotated[float, typer.Option(help="Sampling temperature.")] = 0.7,
    seed: Annotated[int, typer.Option(help="Sampling seed.")] = 0,
    structured: Annotated[bool, typer.Option("--structured", help="Ask for the JSON form {think, predicted_observation} (openai, vllm).")] = False,
    cache: Annotated[Optional[Path], typer.Option(help="Completion cache (default OUTPUT.cache.sqlite); re-runs resume from it.")] = None,
    warehouse: WarehouseOpt = None,
) -> None:
    """Predict the observation of every record with a world model; failures are recorded, not fatal."""
    from worldforge.agentworldbench.infer import infer_file
    from worldforge.agentworldbench.parsing import PREDICTION_SCHEMA
    from worldforge.backends import world_model
    from worldforge.llm import GenerationParams

    with user_errors():
        wm = world_model(backend, base_url=base_url, model=model, concurrency=concurrency, warehouse=str(warehouse_of(warehouse)))
        params = GenerationParams(max_tokens=max_tokens, temperature=temperature, seed=seed, json_schema=PREDICTION_SCHEMA if structured else None)
        with progress() as bar:
            task = bar.add_task("world model", total=None)
            report = infer_file(input_path, output, wm, params, cache, progress=lambda d, t: bar.update(task, completed=d, total=t))
    print_tally(report.tally)
    retry = f"; {report.unanswered} got no reply (re-run to retry only those)" if report.unanswered else ""
    out.print(f"-> {report.output}: {report.generated} generated, {report.cached} from cache{retry}")


@app.command("judge")
def judge(
    predictions: Annotated[Path, typer.Argument(help="The predictions JSONL of `worldforge eval infer`.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Judged JSONL (rule metrics, judge scores).")],
    judge: Annotated[Optional[str], typer.Option("--judge", help="Judge backend (openai | vllm | transformers); none: rule metrics only.")] = None,
    base_url: BaseUrlOpt = None,
    model: ModelOpt = None,
    warehouse: WarehouseOpt = None,
) -> None:
    """Score predictions with the rule verifiers and, with --judge, the five judge dimensions (1-5 -> 0-100)."""
    from worldforge.agentworldbench.judge import judge_file
    from worldforge.backends import make_backend
    from worldforge.errors import WorldforgeError

    with user_errors():
        if judge is None and (base_url or model):
            raise WorldforgeError("--base-url/--model need --judge (e.g. --judge openai)")
        backend = make_backend(judge, base_url=base_url, model=model, warehouse=str(warehouse_of(warehouse))) if judge else None
        with progress() as bar:
            task = bar.add_task("judge", total=None)
            report = judge_file(predictions, output, backend, progress=lambda d, t: bar.update(task, completed=d, total=t))
    print_tally(report.lines)
    if judge:
        print_tally(report.judge)
    out.print(f"-> {report.output}" + ("" if judge else ": rule metrics only (no --judge)"))


@app.command("score")
def score(
    judged: Annotated[Path, typer.Argument(help="The output of `worldforge eval judge`.")],
    json_out: Annotated[Optional[Path], typer.Option("--json", help="Also write the scores as JSON here.")] = None,
) -> None:
    """Scores per domain and overall: rule metrics and judge dimensions on 0-100."""
    from worldforge.agentworldbench.judge import JUDGE_DIMENSIONS
    from worldforge.agentworldbench.score import score_file
    from worldforge.agentworldbench.verifiers import VERIFIERS

    with user_errors():
        scores = score_file(judged)
    table = Table(title=f"world-model scores, 0-100 ({judged})")
    table.add_column("metric")
    for d in scores:
        table.add_column(d, justify="right")

    def fmt(v: float | None) -> str:
        return "-" if v is None else f"{v:.1f}"

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
