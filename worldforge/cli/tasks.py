"""``worldforge tasks export | score``: WideSearch-format tasks of a world; score an answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape

from worldforge.cli._common import WarehouseOpt, out, print_tally, user_errors, warehouse_of

app = typer.Typer(help="WideSearch-style tasks: export from a world, score an answer.", no_args_is_help=True)


@app.command("export")
def export(
    out_dir: Annotated[Path, typer.Argument(help="Folder for tasks.jsonl and tables/<instance_id>.csv.")],
    world: Annotated[str, typer.Option("--world", help="World name.")],
    warehouse: WarehouseOpt = None,
) -> None:
    """Generate WORLD's tasks (world and scenarios), keep those solvable in its corpus, and export them (exit 1: none is)
    (`world run WORLD --steps search_tasks --tasks-out OUT_DIR`, listing the rejected tasks)."""
    from worldforge.cli.world import run_steps, step_result

    built = step_result(run_steps(world, warehouse, "search_tasks", tasks_dir=out_dir), "search_tasks").value
    out.print(f"{len(built.kept)} tasks → {out_dir / 'tasks.jsonl'} (+ {out_dir / 'tables'}/<instance_id>.csv)")
    print_tally(built.tally)
    for iid, problems in built.unsolvable.items():  # rejected: not stored, not exported
        out.print(f"[yellow]{escape(iid)}[/] not stored: {escape(problems[0])}")
    if not built.kept:
        raise typer.Exit(1)


@app.command("score")
def score(
    answer: Annotated[Path, typer.Argument(help="The answer: a file holding one Markdown table.")],
    tasks: Annotated[Path, typer.Option("--tasks", help="tasks.jsonl (gold tables in tables/ beside it).")],
    instance_id: Annotated[str, typer.Option("--id", help="The task's instance_id.")],
    judge: Annotated[Optional[str], typer.Option("--judge", help="Judge backend for llm_judge columns (openai | vllm | transformers); none: normalised exact match.")] = None,
    base_url: Annotated[Optional[str], typer.Option(help="openai: the judge endpoint (default: WORLDFORGE_VLLM_URL).", show_default=False)] = None,
    model: Annotated[Optional[str], typer.Option(help="Judge model name or folder.", show_default=False)] = None,
    rules: Annotated[str, typer.Option("--rules", help="Scoring rules: worldforge, or widesearch (WideSearch's official scorer, "
                                       "quirks included; adds its success rate, 'score'; the judge also aligns columns and keys).")] = "worldforge",
    warehouse: WarehouseOpt = None,
) -> None:
    """Score ANSWER against a WideSearch-format task; prints one JSON object."""
    from worldforge.errors import WorldforgeError
    from worldforge.settings import get_settings
    from worldforge.tasks import score_answer
    from worldforge.tasks.judge import LLMJudge
    from worldforge.tasks.scorer import check_rules
    from worldforge.worldmodel.backends import make_backend

    with user_errors():
        check_rules(rules)
        if judge is None and (base_url or model):
            raise WorldforgeError("--base-url/--model need --judge (e.g. --judge openai)")
        if judge == "openai" and not base_url:
            base_url = get_settings().vllm_url  # WORLDFORGE_VLLM_URL
        llm = LLMJudge(make_backend(judge, base_url=base_url, model=model), warehouse_of(warehouse).cache / "llm-judge.sqlite") if judge else None
        try:
            result = score_answer(answer, tasks, instance_id, llm, rules)
        finally:
            if llm is not None:
                llm.close()
    print(json.dumps(result.as_dict(), ensure_ascii=False))
