"""Worlds' tasks as a Hugging Face dataset folder: ``datasets.load_dataset(DIR, "wide" | "deep")`` reads it offline.

The folder holds one configuration per task family, each split into ``train`` and ``test`` by world
(a world's tasks, scenarios included, are all in one split, so a model is tested on worlds it never
saw), as Parquet files, and a dataset card (``README.md``) whose YAML header declares the
configurations and their data files — the layout the Hub and ``load_dataset`` read
(huggingface.co/docs/datasets/repository_structure, "Define your splits and subsets in YAML"). Each data
file is named by its content (``wide/train-<sha1>.parquet``): ``datasets`` keys its cache of a local folder by the
folder's name, configuration and data file paths, so an export written again into the same folder must change its
paths, or ``load_dataset`` hands back the earlier export from its cache.

* ``wide`` — the WideSearch-style tasks (``search_tasks``): ``instance_id``, ``world``, ``scenario``,
  ``kind``, ``question`` (with its output requirements), ``required`` and ``unique_columns`` (lists),
  ``evaluation_json`` and ``gold_json`` (the WideSearch ``evaluation`` object and the gold rows, as JSON text),
  ``hops`` and ``oracle_calls`` (its difficulty: dependent lookups, the oracle's tool calls; null before the oracle ran).
* ``deep`` — the deep questions (``deep_questions``): ``question_id``, ``world``, ``scenario``, ``pattern``,
  ``hops``, ``question``, ``prompt`` (the question with BrowseComp's answer format), ``answer``,
  ``answer_type``, ``exact``, ``evidence_urls`` and ``gold_urls`` (lists), ``oracle_calls``.

The card states how the data was made (worlds, seeds' provenance, checks) and the counts per split.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from worldforge.datasets.output import export_worlds
from worldforge.warehouse.atomic import atomic_dir
from worldforge.warehouse.layout import Warehouse

__all__ = ["HFExport", "export_hf", "held_out_worlds"]


@dataclass(frozen=True)
class HFExport:
    """What :func:`export_hf` wrote: the folder and ``{config: {split: rows}}``."""

    out: Path
    worlds: list[str]
    rows: dict[str, dict[str, int]]


def held_out_worlds(worlds: list[str], share: float = 0.2) -> set[str]:
    """The worlds of the ``test`` split: those whose name hashes below ``share`` (stable whatever else is exported);
    when none does, ``share > 0`` and there are two or more worlds, the one hashing lowest (so a small export has a test
    split; that one choice depends on the worlds exported together). ``share`` 0: none."""
    def h(w: str) -> float:
        return int(hashlib.sha1(w.encode()).hexdigest()[:8], 16) / 0x1_0000_0000
    picked = {w for w in worlds if h(w) < share}
    if not picked and share > 0 and len(worlds) >= 2:
        picked = {min(worlds, key=h)}
    return picked


_WIDE = {"instance_id": pl.String, "world": pl.String, "scenario": pl.String, "kind": pl.String, "question": pl.String,
         "required": pl.List(pl.String), "unique_columns": pl.List(pl.String), "evaluation_json": pl.String, "gold_json": pl.String,
         "hops": pl.Int64, "oracle_calls": pl.Int64}
_DEEP = {"question_id": pl.String, "world": pl.String, "scenario": pl.String, "pattern": pl.String, "hops": pl.Int64, "question": pl.String,
         "prompt": pl.String, "answer": pl.String, "answer_type": pl.String, "exact": pl.Boolean, "evidence_urls": pl.List(pl.String),
         "gold_urls": pl.List(pl.String), "oracle_calls": pl.Int64}


def export_hf(warehouse: Warehouse, worlds: Iterable[str], out: str | Path, test_share: float = 0.2,
              progress: Callable[[str], None] | None = None) -> HFExport:
    """Write the worlds' wide tasks and deep questions as a Hugging Face dataset folder (module docstring).

    Args:
        warehouse: the warehouse holding the worlds (their tasks built).
        worlds: world names.
        out: the folder (replaced whole, atomically).
        test_share: the share of worlds in the ``test`` split (:func:`held_out_worlds`).
        progress: called with each world's name as it is read.

    Returns:
        The rows written per configuration and split.

    Raises:
        WorldforgeError: no world, a missing world, or a world whose tasks were never built.
    """
    from worldforge.tasks.deep import prompt, read_deep_questions
    from worldforge.tasks.store import read_tasks

    names = export_worlds(warehouse, worlds)
    wide, deep = [], []
    for w in names:
        if progress:
            progress(w)
        path = warehouse.world(w)
        for t in read_tasks(path, all_scenarios=True):
            wide.append({"instance_id": t.instance_id, "world": w, "scenario": t.extra.get("scenario"), "kind": t.extra.get("kind"),
                         "question": t.question, "required": t.required, "unique_columns": t.unique_columns,
                         "evaluation_json": json.dumps(t.evaluation, ensure_ascii=False), "gold_json": json.dumps(t.gold, ensure_ascii=False),
                         "hops": t.extra.get("hops"), "oracle_calls": t.extra.get("oracle_calls")})
        for q in read_deep_questions(path, all_scenarios=True):
            deep.append({"question_id": q.question_id, "world": w, "scenario": q.scenario, "pattern": q.pattern, "hops": q.hops,
                         "question": q.question, "prompt": prompt(q), "answer": q.answer, "answer_type": q.answer_type, "exact": q.exact,
                         "evidence_urls": q.evidence_urls, "gold_urls": q.gold_urls, "oracle_calls": q.oracle_calls})
    held_out = held_out_worlds(names, test_share)
    rows: dict[str, dict[str, int]] = {}
    files: dict[str, dict[str, str]] = {}
    out = Path(out)
    with atomic_dir(out) as tmp:
        for config, records, schema in (("wide", wide, _WIDE), ("deep", deep, _DEEP)):
            frame = pl.DataFrame(records, schema=schema)
            (tmp / config).mkdir()
            rows[config], files[config] = {}, {}
            for split in ("train", "test"):
                part = frame.filter(pl.col("world").is_in(sorted(held_out)) if split == "test" else ~pl.col("world").is_in(sorted(held_out)))
                rows[config][split] = part.height
                if not part.height and split == "test":  # no held-out world: no test split (load_dataset fails on an empty one)
                    continue
                buf = io.BytesIO()
                part.write_parquet(buf)
                name = f"{split}-{hashlib.sha1(buf.getvalue()).hexdigest()[:12]}.parquet"  # a new export, a new path (module docstring)
                (tmp / config / name).write_bytes(buf.getvalue())
                files[config][split] = f"{config}/{name}"
        (tmp / "README.md").write_text(_card(names, held_out, rows, files), encoding="utf-8")
    return HFExport(out, names, rows)


def _card(worlds: list[str], held_out: set[str], rows: dict[str, dict[str, int]], files: dict[str, dict[str, str]]) -> str:
    configs = "\n".join(f"- config_name: {c}\n  data_files:" + "".join(f"\n  - split: {split}\n    path: {path}" for split, path in files[c].items())
                        for c in ("wide", "deep"))
    table = "\n".join(f"| {c} | {rows[c]['train']:,} | {rows[c]['test']:,} |" for c in ("wide", "deep"))
    return f"""---
configs:
{configs}
language:
- en
task_categories:
- question-answering
tags:
- synthetic
- agents
- web-search
- worldforge
pretty_name: worldforge search tasks
---

# worldforge search tasks

Search tasks generated by worldforge from {len(worlds)} fictional world(s): seeded relational
databases of invented rows (time-shifted, with real brands and places but non-existent entities), each with a
web corpus whose every stated value is checked against its table cell. Nothing here exists outside these worlds,
so no model can have memorised an answer.

## Configurations

| config | train | test |
|---|---|---|
{table}

* **wide**: WideSearch-style table tasks (lookup, filter, join, aggregate, top-k, ranking, window, deep-wide,
  scenario differences). `gold_json` is the gold table computed from the world's rows; `evaluation_json` is
  WideSearch's `evaluation` object (unique columns, required columns, per-column preprocessing and metric).
  Every task was checked solvable in its corpus, and a scripted oracle reached item-F1 1.0 on it through the
  search environment's tools.
* **deep**: BrowseComp-style questions with one short answer at the end of a 2-6 hop chain across the tables (nine patterns),
  the starting entity described by blurred clues. DuckDB verified that exactly one row answers each; the oracle
  answered each through the tools alone. `prompt` carries BrowseComp's answer format (Explanation / Exact Answer /
  Confidence); `evidence_urls` are the pages stating a cell of the chain, `gold_urls` those stating the answer.

## Splits

By world: every task of a world (its time-shifted scenarios included) is in one split. Test worlds:
{", ".join(sorted(held_out)) or "none"}. Train worlds: {", ".join(w for w in worlds if w not in held_out) or "none"}.

## How it was made

`worldforge export hf` read the `search_tasks` and `deep_questions` tables of each world file; the worlds were
built by `worldforge world run` / `worldforge catalog build` (tables, scenarios, corpus with fact check, BM25
indexes, tasks, oracle episodes), every step's checks passing.
"""
