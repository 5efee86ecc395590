"""No float noise reaches a reader: built end to end, no page, task (question or gold), deep question (question or
answer) or exported task file writes a number like ``-4.859999999999999`` or ``3.3600000000000003``.

The worlds: the bundled specs, the user's case (bench/specs/sensor_means.yaml, and the same with its means' decimals
left out, whose means and per-region breakdowns wrote such cells before their decimals were derived) and a few
catalog draws with float sums, maxima and derived columns.
"""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest
import yaml

from tests.conftest import BUNDLED, ROOT, SPECS_DIR
from tests.spec.test_precision import sensors_without_decimals
from worldforge.pipeline import run_world
from worldforge.warehouse.layout import Warehouse

NOISE = re.compile(r"\d\.\d*9999999|\d\.\d*0000000\d")
"""A float written with its binary noise (``0.30000000000000004``, ``24.299999999999997``)."""

CATALOG = ["coffee_market", "telecom_operators", "esports_circuit"]
"""Archetypes whose draws aggregate and derive floats (a max of cup scores, a min of prices, a sum of prizes)."""

TEXTS = {"corpus_pages": ["title", "lead", "body_md"], "search_tasks": ["question", "gold_json"], "deep_questions": ["question", "answer"]}


@pytest.fixture(scope="module")
def spec_files(tmp_path_factory) -> dict[str, Path]:
    from worldforge.catalog.generate import generate_catalog

    folder = tmp_path_factory.mktemp("noise_specs")
    files = {name: SPECS_DIR / f"{name}.yaml" for name in BUNDLED}
    files["sensor_means"] = ROOT / "bench" / "specs" / "sensor_means.yaml"
    bare = folder / "sensor_means_bare.yaml"
    doc = sensors_without_decimals()
    doc["world"] = "sensor_means_bare"
    bare.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    files["sensor_means_bare"] = bare
    for path in generate_catalog(len(CATALOG), 0, folder / "catalog", archetypes=CATALOG).paths:
        files[Path(path).stem] = Path(path)
    return files


def noisy_cells(world_file: Path, tasks_dir: Path) -> list[str]:
    """Every noisy number the world's pages, tasks and deep questions and its exported task files write, in context."""
    found = []
    con = duckdb.connect(str(world_file), read_only=True)
    try:
        for table, columns in TEXTS.items():
            for row in con.execute(f"SELECT {', '.join(columns)} FROM {table}").fetchall():
                for column, text in zip(columns, row):
                    found += [f"{table}.{column}: ...{text[max(0, m.start() - 60):m.end()]}" for m in NOISE.finditer(text or "")]
    finally:
        con.close()
    for f in sorted(tasks_dir.rglob("*")):
        if f.is_file():
            text = f.read_text(errors="replace")
            found += [f"{f.name}: ...{text[max(0, m.start() - 60):m.end()]}" for m in NOISE.finditer(text)]
    return found


def test_no_world_writes_float_noise(spec_files, tmp_path):
    assert len(spec_files) == len(BUNDLED) + 2 + len(CATALOG)
    problems = {}
    for name, path in spec_files.items():
        wh = Warehouse(tmp_path / name)
        results = run_world(path, wh)
        failed = [f"{r.step}: {c.summary}" for r in results for c in r.failed_checks]
        assert not failed, (name, failed)
        world = results[0].metadata["path"]
        if hits := noisy_cells(Path(world), wh.tasks(Path(world).stem)):
            problems[name] = hits[:5]
    assert not problems, problems
