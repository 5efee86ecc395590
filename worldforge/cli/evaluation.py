"""``worldforge eval infer | judge | score | run``: a world model on AgentWorldBench-format files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape
from rich.table import Table

from worldforge.agentworldbench.infer import MAX_TOKENS
from worldforge.agentworldbench.judge import JUDGE_ATTEMPTS, JUDGE_MAX_TOKENS
from worldforge.cli._common import WarehouseOpt, out, print_tally, progress, user_errors, warehouse_of

app = typer.Typer(help="World-model evaluation over AgentWorldBench-format files.", no_args_is_help=True)

BaseUrlOpt = Annotated[Optional[str], typer.Option(help="openai: the endpoint, e.g. http://127.0.0.1:8000/v1 (default: WORLDFORGE_VLLM_URL).", show_default=False)]
ModelOpt = Annotated[Optional[str], typer.Option(help="Model name (openai: default WORLDFORGE_VLLM_MODEL, else the first served) or folder.", show_default=False)]
PromptsOpt = Annotated[Optional[Path], typer.Option(
    "--prompts", help="A checkout of the reference's prompt files (DIR/<domain>/system_prompt.txt and judge_system_prompt.txt, or a "
    "checkout root holding prompts/): they replace worldforge's own per domain.", show_default=False)]
MessagesOpt = Annotated[str, typer.Option("--messages", help="Message construction: reference (the reference eval.py's) | worldforge (adds the agent's instruction).")]
ConcurrencyOpt = Annotated[Optional[int], typer.Option(help="openai: requests in flight at most.")]
JudgeTemperatureOpt = Annotated[float, typer.Option("--judge-temperature", help="Judge sampling temperature (the reference: 0.6).")]
JudgeMaxTokensOpt = Annotated[int, typer.Option("--judge-max-tokens", help="Tokens per judge reply at most (the reference: 32768).")]
JudgeSeedOpt = Annotated[int, typer.Option("--judge-seed", help="Judge sampling seed (retries use the next seeds).")]
AttemptsOpt = Annotated[int, typer.Option("--attempts", help="Judge tries per unreadable verdict (the reference: 3).")]
JudgeStructuredOpt = Annotated[bool, typer.Option("--judge-structured", help="Constrain the judge to a JSON verdict of scores only (small local judges).")]


def _prompts(folder: Path | None):
    from worldforge.agentworldbench.rubrics import load_prompts

    return load_prompts(folder)


def _judge_backend(judge: str | None, base_url: str | None, model: str | None, concurrency: int | None, warehouse: Path | None):
    """A judge backend from ``--judge`` (a kind, or a URL meaning ``openai`` there), or ``None``."""
    from worldforge.errors import WorldforgeError
    from worldforge.worldmodel.backends import make_backend

    if judge is None:
        if base_url or model:
            raise WorldforgeError("--base-url/--model need --judge (e.g. --judge openai, or --judge http://HOST:PORT/v1)")
        return None
    if "://" in judge:
        judge, base_url = "openai", judge
    if judge == "openai" and not base_url:
        from worldforge.settings import get_settings

        base_url = get_settings().vllm_url  # WORLDFORGE_VLLM_URL
    return make_backend(judge, base_url=base_url, model=model, concurrency=concurrency if judge == "openai" else None, warehouse=str(warehouse_of(warehouse)))


@app.command("infer")
def infer(
    input_path: Annotated[Path, typer.Argument(help="An AgentWorldBench-format JSONL file (<domain>_test.jsonl; ours or the reference's).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Predictions JSONL (one line per input line).")],
    backend: Annotated[str, typer.Option("--backend", "-b", help="openai | vllm | transformers | grounded.")] = "openai",
    base_url: BaseUrlOpt = None,
    model: ModelOpt = None,
    concurrency: ConcurrencyOpt = None,
    max_tokens: Annotated[int, typer.Option(help="Tokens per reply at most.")] = MAX_TOKENS,
    temperature: Annotated[float, typer.Option(help="Sampling temperature.")] = 0.7,
    seed: Annotated[int, typer.Option(help="Sampling seed.")] = 0,
    structured: Annotated[bool, typer.Option("--structured", help="Ask for the JSON form {think, predicted_observation} (openai, vllm).")] = False,
    messages: MessagesOpt = "reference",
    prompts: PromptsOpt = None,
    cache: Annotated[Optional[Path], typer.Option(help="Completion cache (default OUTPUT.cache.sqlite); re-runs resume from it.")] = None,
    warehouse: WarehouseOpt = None,
) -> None:
    """Predict the observation of every record with a world model; failures are recorded, not fatal."""
    from worldforge.agentworldbench.infer import infer_file
    from worldforge.agentworldbench.messages import MESSAGE_STYLES
    from worldforge.errors import WorldforgeError
    from worldforge.llm import GenerationParams
    from worldforge.settings import get_settings
    from worldforge.worldmodel.backends import world_model
    from worldforge.worldmodel.parsing import PREDICTION_SCHEMA

    with user_errors():
        if messages not in MESSAGE_STYLES:
            raise WorldforgeError(f"--messages must be one of: {', '.join(MESSAGE_STYLES)} (got {messages!r})")
        prompt_set = _prompts(prompts) if prompts else None
        wm = world_model(backend, base_url=base_url, model=model, concurrency=concurrency, warehouse=str(warehouse_of(warehouse)), settings=get_settings())
        params = GenerationParams(max_tokens=max_tokens, temperature=temperature, seed=seed, json_schema=PREDICTION_SCHEMA if structured else None)
        with progress() as bar:
            task = bar.add_task("world model", total=None)
            report = infer_file(input_path, output, wm, params, cache, progress=lambda d, t: bar.update(task, completed=d, total=t),
                                style=messages, prompts=prompt_set)  # type: ignore[arg-type]
    print_tally(report.tally)
    retry = f"; {report.unanswered} got no reply (re-run to retry only those)" if report.unanswered else ""
    out.print(f"-> {report.output}: {report.generated} generated, {report.cached} from cache{retry}")


@app.command("judge")
def judge(
    predictions: Annotated[Path, typer.Argument(help="Predictions JSONL (`worldforge eval infer`, or the reference's eval.py infer).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Judged JSONL (rule metrics, judge scores).")],
    judge: Annotated[Optional[str], typer.Option("--judge", help="Judge backend (openai | vllm | transformers) or an OpenAI-compatible URL; none: rule metrics only.")] = None,
    base_url: BaseUrlOpt = None,
    model: ModelOpt = None,
    concurrency: ConcurrencyOpt = None,
    temperature: JudgeTemperatureOpt = 0.0,
    max_tokens: JudgeMaxTokensOpt = JUDGE_MAX_TOKENS,
    seed: JudgeSeedOpt = 0,
    attempts: AttemptsOpt = JUDGE_ATTEMPTS,
    structured: JudgeStructuredOpt = False,
    prompts: PromptsOpt = None,
    warehouse: WarehouseOpt = None,
) -> None:
    """Score predictions with the rule verifiers and, with --judge, the five judge dimensions (1-5 -> 0-100)."""
    from worldforge.agentworldbench.judge import judge_file
    from worldforge.llm import GenerationParams

    with user_errors():
        backend = _judge_backend(judge, base_url, model, concurrency, warehouse)
        prompt_set = _prompts(prompts)
        params = GenerationParams(temperature=temperature, max_tokens=max_tokens, seed=seed)
        with progress() as bar:
            task = bar.add_task("judge", total=None)
            report = judge_file(predictions, output, backend, params, progress=lambda d, t: bar.update(task, completed=d, total=t),
                                prompts=prompt_set, attempts=attempts, structured=structured)
    print_tally(report.lines)
    if backend is not None:
        print_tally(report.judge)
    out.print(f"-> {report.output}" + ("" if backend is not None else ": rule metrics only (no --judge)"))


def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.1f}"


def print_scores(scores: dict, title: str) -> None:
    """The scores as tables: per domain (the reference's domain names) with micro and macro
    columns, then the reference's own report, then the judge settings."""
    from worldforge.agentworldbench.judge import JUDGE_DIMENSIONS
    from worldforge.agentworldbench.score import display_name, reference_report
    from worldforge.agentworldbench.verifiers import VERIFIERS

    groups = {display_name(d): g for d, g in scores["domains"].items()} | {"micro": scores["overall"]}
    macro = scores["macro"]
    table = Table(title=escape(title))
    table.add_column("metric")
    for name in [*groups, "macro"]:
        table.add_column(name, justify="right")
    table.add_row("lines", *(str(g["lines"]) for g in groups.values()), "")
    table.add_row("failed predictions", *(str(g["failed"] - g.get("not_covered", 0)) for g in groups.values()), "")
    if any(g.get("not_covered") for g in groups.values()):
        table.add_row("not covered by the backend", *(str(g.get("not_covered", 0)) for g in groups.values()), "")
    for m in VERIFIERS:
        table.add_row(m, *(_fmt(g["rules"][m]) for g in groups.values()), _fmt(macro["rules"][m]))
    if any(g["judged"] or g["judge_failed"] for g in groups.values()):
        table.add_row("judged", *(str(g["judged"]) for g in groups.values()), "")
        for d in JUDGE_DIMENSIONS:
            table.add_row(f"judge {d}", *(_fmt(g["judge"][d]) for g in groups.values()), _fmt(macro["judge"][d]))
        table.add_row("judge total (failed excluded)", *(_fmt(g["total"]) for g in groups.values()), _fmt(macro["total"]))
        table.add_row("  bootstrap 95%", *("-" if not g["ci95"] else f"{g['ci95'][0]:.1f}-{g['ci95'][1]:.1f}" for g in groups.values()), "")
        table.add_row("judge total (failed as 0)", *(_fmt(g["total_failed_as_zero"]) for g in groups.values()), _fmt(macro["total_failed_as_zero"]))
    for k in ("prompt_tokens", "completion_tokens", "judge_prompt_tokens", "judge_completion_tokens"):
        if any(g["tokens"][k] for g in groups.values()):
            table.add_row(k.replace("_", " "), *(f"{g['tokens'][k]:,}" for g in groups.values()), "")
    out.print(table)
    if scores["overall"]["judged"] or scores["overall"]["judge_failed"]:
        out.print("as the reference eval.py score reports it:", style="bold")
        out.print(escape(reference_report(scores["reference"])), highlight=False)
    for meta in scores["judges"]:
        out.print(escape("judge: " + ", ".join(f"{k}={v}" for k, v in meta.items())), highlight=False, soft_wrap=True)


@app.command("score")
def score(
    judged: Annotated[Path, typer.Argument(help="A judged JSONL: `worldforge eval judge`'s or the reference eval.py judge's.")],
    json_out: Annotated[Optional[Path], typer.Option("--json", help="Also write the scores as JSON here.")] = None,
    compare: Annotated[Optional[Path], typer.Option("--compare", help="A second judged file of the same records (another judge or sample): agreement.")] = None,
    resamples: Annotated[int, typer.Option(help="Bootstrap draws per 95% interval.")] = 1000,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
) -> None:
    """Scores per domain, micro and macro: rule metrics and judge dimensions on 0-100, the reference's figures, intervals, tokens."""
    from worldforge.agentworldbench.score import agreement, score_file

    with user_errors():
        scores = score_file(judged, resamples, seed)
        agree = agreement(judged, compare) if compare else None
    print_scores(scores, f"world-model scores, 0-100 ({judged})")
    if agree is not None:
        scores["agreement"] = agree
        table = Table(title=escape(f"agreement with {compare}: {agree['both_valid']} records judged in both ({agree['unpaired']} unpaired)"))
        for col in ("dimension", "pairs", "exact", "within 1", "quadratic kappa"):
            table.add_column(col, justify="right")
        for d, a in agree["dimensions"].items():
            table.add_row(d, str(a["pairs"]), *("-" if a[k] is None else f"{a[k]:.2f}" for k in ("exact", "within_1", "kappa")))
        out.print(table)
        r, mad = agree["total"]["pearson"], agree["total"]["mean_abs_diff"]
        out.print(f"judge total: Pearson r {'-' if r is None else format(r, '.3f')}, "
                  f"mean absolute difference {'-' if mad is None else format(mad, '.1f')} points")
    if json_out:
        json_out.write_text(json.dumps(scores, indent=2) + "\n", encoding="utf-8")


@app.command("run")
def run(
    source: Annotated[Path, typer.Argument(help="An AgentWorldBench file or a folder of <domain>_test.jsonl (default: the warehouse's export).", show_default=False)] = None,  # type: ignore[assignment]
    model: Annotated[Optional[str], typer.Option("--model", help="The world model: an OpenAI-compatible URL, or a backend kind (default: the configured world model).")] = None,
    model_name: Annotated[Optional[str], typer.Option("--model-name", help="The served model name (default: the first the server lists).")] = None,
    judge: Annotated[Optional[str], typer.Option("--judge", help="The judge: an OpenAI-compatible URL or a backend kind; none: rule metrics only.")] = None,
    judge_model: Annotated[Optional[str], typer.Option("--judge-model", help="The judge's served model name.")] = None,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="The evaluation folder (default WAREHOUSE/datasets/eval).")] = None,
    max_records_per_source: Annotated[Optional[int], typer.Option(help="Records per source within each domain at most.")] = None,
    concurrency: ConcurrencyOpt = None,
    max_tokens: Annotated[int, typer.Option(help="Tokens per world-model reply at most.")] = MAX_TOKENS,
    temperature: Annotated[float, typer.Option(help="World-model sampling temperature.")] = 0.0,
    judge_temperature: JudgeTemperatureOpt = 0.0,
    judge_max_tokens: JudgeMaxTokensOpt = JUDGE_MAX_TOKENS,
    judge_seed: JudgeSeedOpt = 0,
    attempts: AttemptsOpt = JUDGE_ATTEMPTS,
    messages: MessagesOpt = "reference",
    prompts: PromptsOpt = None,
    warehouse: WarehouseOpt = None,
) -> None:
    """infer -> judge -> score in one command; a re-run redoes only failed or missing records."""
    from worldforge.agentworldbench.evaluate import evaluate_export
    from worldforge.agentworldbench.messages import MESSAGE_STYLES
    from worldforge.errors import WorldforgeError
    from worldforge.llm import GenerationParams
    from worldforge.settings import get_settings
    from worldforge.worldmodel.backends import world_model

    with user_errors():
        wh = warehouse_of(warehouse)
        if messages not in MESSAGE_STYLES:
            raise WorldforgeError(f"--messages must be one of: {', '.join(MESSAGE_STYLES)} (got {messages!r})")
        kind, url = (("openai", model) if model and "://" in model else (model, None))
        wm = world_model(kind, base_url=url, model=model_name, concurrency=concurrency, warehouse=str(wh), settings=get_settings())
        jb = _judge_backend(judge, None, judge_model, concurrency, warehouse)
        folder = output or wh.dataset("eval")
        with progress() as bar:
            tasks = {"infer": bar.add_task("world model", total=None), "judge": bar.add_task("judge", total=None)}
            result = evaluate_export(source or wh.dataset("agentworldbench"), folder, wm, jb, max_records_per_source,
                                     GenerationParams(temperature=temperature, max_tokens=max_tokens, seed=0),
                                     GenerationParams(temperature=judge_temperature, max_tokens=judge_max_tokens, seed=judge_seed),
                                     _prompts(prompts), messages, attempts,  # type: ignore[arg-type]
                                     progress=lambda s, d, t: bar.update(tasks[s], completed=d, total=t))
    print_tally(result.tally)
    if jb is not None and result.judge is not None:
        print_tally(result.judge.judge)
    print_scores(result.scores, f"world-model scores, 0-100 ({result.backend})")
    out.print(f"-> {result.folder}: input.jsonl, predictions.jsonl, judged.jsonl, scores.json")
