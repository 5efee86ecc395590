"""Dataset assets: ``cpt_dataset``, ``sft_dataset``, ``agentworldbench_export`` and ``world_model_eval``.

Each calls one builder of :mod:`worldforge.datasets` (or the evaluation of
:mod:`worldforge.agentworldbench`) and writes under ``WAREHOUSE/datasets/``; checks re-read what was written.
"""

import base64
import json

from dagster import AssetCheckResult, AssetCheckSeverity, AssetCheckSpec, AssetExecutionContext, MaterializeResult, MetadataValue, asset

from assets.metadata import balance_check, md_table, tally_metadata
from assets.resources import DatasetsResource, WarehouseResource, WorldModelResource
from assets.trajectories import turn_mask_stats
from worldforge.datasets.agentworldbench import build_agentworldbench, training_overlap
from worldforge.datasets.config import CPTConfig, ExportConfig, SFTConfig
from worldforge.datasets.cpt import build_cpt, mask_mismatches
from worldforge.datasets.sft import build_sft
from worldforge.reports import acceptance_png

WORLD_DEPS = ["search_corpus", "oracle_episodes"]


def _counts(report) -> dict:
    return {**tally_metadata(report.tally), "samples": report.samples,
            "path": MetadataValue.path(str(report.path)), "card": MetadataValue.path(str(report.path / "README.md"))}


@asset(
    group_name="datasets",
    pool="datasets",
    deps=[turn_mask_stats, *WORLD_DEPS],
    check_specs=[AssetCheckSpec("records_balance", asset="cpt_dataset"), AssetCheckSpec("mask_matches_informative", asset="cpt_dataset"),
                 AssetCheckSpec("loss_share", asset="cpt_dataset")],
)
def cpt_dataset(context: AssetExecutionContext, warehouse: WarehouseResource, datasets: DatasetsResource) -> MaterializeResult:
    """CPT samples: trajectories (train split) with turn-level loss masks and world pages, tokenized (WAREHOUSE/datasets/cpt)."""
    wh = warehouse.get()
    config = CPTConfig(tokenizer=datasets.resolved_tokenizer(), max_tokens=datasets.cpt_max_tokens, **datasets.split())
    report = build_cpt(wh, wh.dataset("cpt"), config)
    context.log.info("cpt: %s; %d samples", report.tally.summary(), report.samples)
    bad, checked = mask_mismatches(report.path / "cpt.parquet")
    share = report.stats["loss_share"]
    by_domain = [{"domain": d, **v} for d, v in report.stats["by_domain"].items()]
    return MaterializeResult(
        metadata={**_counts(report), "tokens": report.stats["tokens"], "loss_tokens": report.stats["loss_tokens"], "loss_share": share,
                  "by_domain": md_table(by_domain), "tokenizer": report.config["tokenizer"]},
        check_results=[
            balance_check(report.tally),
            AssetCheckResult(check_name="mask_matches_informative", passed=bad == 0, metadata={"spans_checked": checked, "mismatches": bad}),
            AssetCheckResult(check_name="loss_share", passed=0.0 < share < 1.0, metadata={"loss_share": share}),
        ],
    )


@asset(
    group_name="datasets",
    pool="datasets",
    deps=[turn_mask_stats, *WORLD_DEPS],
    check_specs=[AssetCheckSpec("records_balance", asset="sft_dataset"), AssetCheckSpec("acceptance_rates", asset="sft_dataset")],
)
def sft_dataset(context: AssetExecutionContext, warehouse: WarehouseResource, datasets: DatasetsResource, world_model: WorldModelResource) -> MaterializeResult:
    """SFT next-state prediction samples; with a world model (WORLDFORGE_ENV=gpu) targets come from rejection sampling (WAREHOUSE/datasets/sft)."""
    wh = warehouse.get()
    config = SFTConfig(tokenizer=datasets.resolved_tokenizer(), max_context_tokens=datasets.sft_max_context_tokens, k=datasets.sft_k,
                       threshold=datasets.sft_threshold, **datasets.split())
    backend = world_model.backend(wh)
    # the grounded renderer has no reasoning to sample: locally the builder writes the non-thinking variant
    report = build_sft(wh, wh.dataset("sft"), config, None if backend.kind == "grounded" else backend)
    for note in report.notes:
        context.log.info(note)
    acc, ver = report.stats["acceptance_by_domain"], report.stats["acceptance_by_verifier"]
    png = acceptance_png(acc, ver)
    (wh.reports() / "sft_acceptance.png").write_bytes(png)
    low = {d: a["rate"] for d, a in acc.items() if a["targets"] and a["rate"] < 0.05}
    return MaterializeResult(
        metadata={**_counts(report), "variant": report.stats["variant"],
                  "acceptance_by_domain": md_table([{"domain": d, **a} for d, a in acc.items()]),
                  "acceptance_by_verifier": md_table([{"verifier": v, **c} for v, c in ver.items()]),
                  "plot_acceptance": MetadataValue.md(f"![acceptance](data:image/png;base64,{base64.b64encode(png).decode()})")},
        check_results=[
            balance_check(report.tally),
            AssetCheckResult(check_name="acceptance_rates", passed=not low, severity=AssetCheckSeverity.WARN,
                             metadata={"domains_below_5_percent": json.dumps(low), "variant": report.stats["variant"]}),
        ],
    )


@asset(
    group_name="datasets",
    pool="datasets",
    deps=[turn_mask_stats, *WORLD_DEPS, cpt_dataset, sft_dataset],  # after them: the check compares the three
    check_specs=[AssetCheckSpec("records_balance", asset="agentworldbench_export"), AssetCheckSpec("disjoint_from_training", asset="agentworldbench_export")],
)
def agentworldbench_export(context: AssetExecutionContext, warehouse: WarehouseResource, datasets: DatasetsResource) -> MaterializeResult:
    """The held-out split as AgentWorldBench <domain>_test.jsonl files (WAREHOUSE/datasets/agentworldbench)."""
    wh = warehouse.get()
    report = build_agentworldbench(wh, wh.dataset("agentworldbench"),
                                   ExportConfig(**datasets.split()))
    held_out, overlap = training_overlap(wh)
    rows = [{"domain": d, **v} for d, v in report.stats["by_domain"].items()]
    return MaterializeResult(
        metadata={**_counts(report), "by_domain": md_table(rows)},
        check_results=[
            balance_check(report.tally),
            AssetCheckResult(check_name="disjoint_from_training", passed=not overlap,
                             metadata={"held_out_trajectories": held_out, "in_training_data": len(overlap), "examples": json.dumps(overlap[:5])}),
        ],
    )


@asset(
    group_name="eval",
    pool="datasets",
    deps=[agentworldbench_export],
    check_specs=[AssetCheckSpec("predictions_balance", asset="world_model_eval")],
)
def world_model_eval(context: AssetExecutionContext, warehouse: WarehouseResource, datasets: DatasetsResource, world_model: WorldModelResource) -> MaterializeResult:
    """The world model on the AgentWorldBench export: eval infer, rule-metric judge and scores per domain (WAREHOUSE/datasets/eval)."""
    wh = warehouse.get()
    from worldforge.agentworldbench.evaluate import evaluate_export
    from worldforge.agentworldbench.score import display_name

    result = evaluate_export(wh.dataset("agentworldbench"), wh.dataset("eval"),
                             world_model.backend(wh), max_records_per_source=datasets.eval_max_records_per_source)
    scores = result.scores
    overall = scores["overall"]
    rows = [{"domain": display_name(d), "lines": s["lines"], "failed": s["failed"], **s["rules"], "judge_total": s["total"]}
            for d, s in scores["domains"].items()]
    rows.append({"domain": "micro", "lines": overall["lines"], "failed": overall["failed"], **overall["rules"], "judge_total": overall["total"]})
    return MaterializeResult(
        metadata={"backend": result.backend, **tally_metadata(result.tally), "scores": md_table(rows),
                  "token_f1_overall": overall["rules"].get("token_f1"), "judge_total_overall": overall["total"],
                  "path": MetadataValue.path(str(result.folder))},
        check_results=[balance_check(result.tally, "predictions_balance")],
    )
