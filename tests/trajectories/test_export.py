"""ATIF and OTel exports of the trajectory store read back into the same turns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from worldforge.cli import app
from worldforge.trajectories import Trajectory, ingest, read_path
from worldforge.trajectories.store import iter_trajectories
from worldforge.warehouse import Warehouse

TRAJECTORIES = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "trajectories"


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Warehouse:
    wh = Warehouse(tmp_path_factory.mktemp("wh"))
    ingest([TRAJECTORIES / "tau-bench", TRAJECTORIES / "swe-agent", TRAJECTORIES / "fireact"], wh)
    return wh


@pytest.mark.parametrize("fmt", ["atif", "otel"])
def test_export_reads_back_into_the_same_turns(warehouse, tmp_path, fmt):
    out = tmp_path / fmt
    result = CliRunner().invoke(app, ["trajectories", "export", "--format", fmt, "--out", str(out), "--warehouse", str(warehouse)])
    assert result.exit_code == 0, result.output
    stored = {tr.trajectory_id: tr for tr in iter_trajectories(warehouse.trajectory_store)}
    assert f"exported {len(stored):,} trajectories" in result.output
    back = [r for r in read_path([out]) if isinstance(r, Trajectory)]
    assert len(back) == len(stored)
    for r in back:
        # ATIF: one file per trajectory, named by its id; OTel: the trajectory id is the conversation id
        tr = stored[Path(r.source_path).stem] if fmt == "atif" else stored[r.locator.removeprefix("conversation ")]
        assert [(t.action, t.observation) for t in r.turns] == [(t.action, t.observation) for t in tr.turns]
        assert r.source == ("atif" if fmt == "atif" else "otel-genai")


def test_atif_export_is_valid_atif_with_mask_decisions(warehouse, tmp_path):
    CliRunner().invoke(app, ["trajectories", "export", "-f", "atif", "-o", str(tmp_path / "a"), "-w", str(warehouse), "--source", "swe-agent"])
    files = sorted((tmp_path / "a" / "swe-agent").glob("*.json"))
    assert files and not (tmp_path / "a" / "tau-bench").exists()
    doc = json.loads(files[0].read_text())
    assert doc["schema_version"] == "ATIF-v1.4" and doc["agent"]["name"] == "swe-agent"
    agent_steps = [s for s in doc["steps"] if s["source"] == "agent"]
    assert agent_steps and all({"informative", "mask_reason"} <= s["extra"].keys() for s in agent_steps)
    assert [s["step_id"] for s in doc["steps"]] == list(range(1, len(doc["steps"]) + 1))


def test_export_errors_are_one_line(tmp_path):
    r = CliRunner().invoke(app, ["trajectories", "export", "-o", str(tmp_path / "x"), "-w", str(tmp_path / "empty")])
    assert r.exit_code == 2 and "no trajectory store" in r.output
    r = CliRunner().invoke(app, ["trajectories", "export", "-f", "csv", "-o", str(tmp_path / "x"), "-w", str(tmp_path)])
    assert r.exit_code == 2 and "csv" in r.output
