"""The held-out evaluation export: AgentWorldBench-format ``<domain>_test.jsonl`` files.

The trajectories of the ``test`` split (:func:`~worldforge.datasets.sources.split_of`; never
used by the CPT or SFT builders) become one AgentWorldBench record per turn (fields as
published: ``task, id, prompt, response, current_prompt, system_str, turn_idx, total_turns``,
plus ``instruction``, ``domain``, ``source``, and ``world``/``scenario`` for simulated episodes so
the grounded backend can re-render them). ``task`` is the benchmark domain, as the reference
evaluation (QwenLM/Qwen-AgentWorld ``eval/eval.py``) reads it: trajectories of the ``tool``
domain are filed under ``mcp``. ``worldforge eval infer`` and the reference's ``eval.py`` read
these files as they are.

Files under ``<out>/``: ``<domain>_test.jsonl`` per benchmark domain, ``test.parquet`` (every
record, the list fields as lists), ``README.md`` and ``report.json``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from worldforge.agentworldbench.records import records_from_turns
from worldforge.datasets.card import md_table, render_card
from worldforge.datasets.config import ExportConfig
from worldforge.datasets.output import BuildReport, JsonlSink, ParquetSink, git_revision, write_report
from worldforge.datasets.sources import DatasetTrajectory, iter_split_trajectories
from worldforge.warehouse.atomic import atomic_dir
from worldforge.warehouse.layout import Warehouse
from worldforge.worldmodel.prompts import benchmark_domain

SCHEMA = pa.schema([
    ("id", pa.string()), ("task", pa.string()), ("instruction", pa.string()), ("domain", pa.string()), ("source", pa.string()),
    ("prompt", pa.list_(pa.string())), ("response", pa.list_(pa.string())), ("current_prompt", pa.string()),
    ("system_str", pa.string()), ("turn_idx", pa.int32()), ("total_turns", pa.int32()),
    ("world", pa.string()), ("scenario", pa.string()),
])


def build_agentworldbench(warehouse: Warehouse, out: str | Path, config: ExportConfig = ExportConfig(),
                          trajectories: Iterable[DatasetTrajectory] | None = None) -> BuildReport:
    """Write the test split as AgentWorldBench files.

    Returns:
        The report: turns in = records written + skipped (train split, over the domain cap).
    """
    report = BuildReport("agentworldbench", Path(out), config=config.model_dump())
    per_domain: Counter = Counter()
    sources: Counter = Counter()
    with atomic_dir(out) as tmp:
        parquet = ParquetSink(tmp / "test.parquet", SCHEMA)
        sinks: dict[str, JsonlSink] = {}
        trajs: dict[str, int] = defaultdict(int)
        for traj in (trajectories if trajectories is not None else iter_split_trajectories(warehouse, config)):
            n = len(traj.turns)
            report.tally.take(n)
            if traj.split != "test":
                report.tally.drop("train split (used by CPT/SFT)", n)
                continue
            if not n:
                continue
            domain = benchmark_domain(traj.domain)
            cap = config.max_records_per_domain
            room = n if cap is None else max(0, min(n, cap - per_domain[domain]))
            if room < n:
                report.tally.drop("over max_records_per_domain", n - room)
            if room == 0:
                continue
            sources[traj.source] += room
            trajs[domain] += 1
            recs = records_from_turns(traj.trajectory_id, traj.domain, traj.task, [(t.action, t.observation) for t in traj.turns],
                                      source=traj.source, **traj.extra)
            sink = sinks.get(domain) or sinks.setdefault(domain, JsonlSink(tmp / f"{domain}_test.jsonl"))
            for rec in recs[:room]:
                sink.add(rec.model_dump())
                parquet.add({k: v for k, v in rec.model_dump().items() if k in SCHEMA.names})
                report.tally.keep()
                report.samples += 1
                per_domain[domain] += 1
        for s in (parquet, *sinks.values()):
            s.close()
        report.files = {"test.parquet": parquet.count, **{s.path.name: s.count for s in sinks.values()}}
        report.stats.update({"sources": dict(sorted(sources.items())),
                             "by_domain": {d: {"trajectories": trajs[d], "records": per_domain[d]} for d in sorted(per_domain)}})
        write_report(tmp, report)
        rows = [{"domain": d, **v} for d, v in report.stats["by_domain"].items()]
        summary = ("Held-out next-state prediction records in the AgentWorldBench format (one `<domain>_test.jsonl` per domain, "
                   "one record per turn of each test-split trajectory; `task` is the benchmark domain, the agent's instruction is "
                   "in `instruction`), for `worldforge eval run` or the reference `eval.py` (QwenLM/Qwen-AgentWorld). "
                   "These trajectories are in neither the CPT nor the SFT dataset built with the same seed and test fraction.")
        (tmp / "README.md").write_text(render_card("worldforge AgentWorldBench export", summary, report, config.model_dump(), git_revision(),
                                                   {"test": "test.parquet"}, [("Records by domain", md_table(rows))]), encoding="utf-8")
    return report


def training_overlap(warehouse: Warehouse) -> tuple[int, list[str]]:
    """Held-out trajectories that also feed training data, re-read from the written files.

    Args:
        warehouse: the warehouse whose ``datasets/agentworldbench/test.parquet`` is compared with
            ``datasets/sft/sft.parquet`` and ``datasets/cpt/cpt.parquet`` (a missing training file counts as empty).

    Returns:
        ``(held-out trajectories, sorted ids found in SFT or CPT too)``.
    """
    test = warehouse.dataset("agentworldbench") / "test.parquet"
    held_out = {i.rsplit(":", 1)[0] for i in pq.read_table(test, columns=["id"]).column("id").to_pylist()}
    trained: set[str] = set()
    for path, column in ((warehouse.dataset("sft") / "sft.parquet", "trajectory_id"), (warehouse.dataset("cpt") / "cpt.parquet", "ref")):
        if path.exists():
            trained |= set(pq.read_table(path, columns=[column]).column(column).to_pylist())
    return len(held_out), sorted(held_out & trained)
