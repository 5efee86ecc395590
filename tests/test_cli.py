import re
import shutil
import subprocess
import sys

import duckdb
import pytest
import yaml
from typer.testing import CliRunner

from tests.conftest import ROOT, SPECS_DIR, TRAJECTORIES
from worldforge.cli import app
from worldforge.warehouse import Warehouse

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def test_build_then_check(tmp_path):
    r = run("world", "build", SPECS_DIR / "esports_2031.yaml", "--seed", 9, "--warehouse", tmp_path)
    assert r.exit_code == 0, r.output
    assert "esports_2031" in r.output and "players" in r.output and "total" in r.output
    r = run("world", "check", tmp_path / "esports_2031.duckdb")
    assert r.exit_code == 0 and "no violations" in r.output and "seed 9" in r.output


def test_check_exits_1_with_a_readable_list(tmp_path):
    assert run("world", "build", SPECS_DIR / "smartphones_2029.yaml", "-w", tmp_path).exit_code == 0
    path = tmp_path / "smartphones_2029.duckdb"
    con = duckdb.connect(str(path))
    con.execute("UPDATE brands SET market_rank = 15 - market_rank")  # invert the ranking
    con.close()
    r = run("world", "check", path)
    assert r.exit_code == 1
    assert "monotone" in r.output and "brands" in r.output and "market_rank" in r.output


def test_malformed_spec_names_file_and_field_and_writes_nothing(tmp_path):
    doc = yaml.safe_load((SPECS_DIR / "mars_colony_2030.yaml").read_text())
    doc["tables"]["residents"]["columns"]["role"]["weights"] = [1, 2]
    bad = tmp_path / "mars.yaml"
    bad.write_text(yaml.safe_dump(doc))
    wh = tmp_path / "wh"
    proc = subprocess.run(
        [sys.executable, "-m", "worldforge.cli", "world", "build", str(bad), "--warehouse", str(wh)],
        capture_output=True, text=True, cwd=ROOT,
    )
    assert proc.returncode == 2
    assert f"{bad}: invalid world spec" in proc.stderr
    assert "tables.residents.columns.role: weights has 2 entries but values has 8" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert not wh.exists()


def test_check_of_a_non_world_file(tmp_path):
    r = run("world", "check", SPECS_DIR / "mars_colony_2030.yaml")
    assert r.exit_code == 2 and "cannot open as DuckDB" in r.output


def test_ingest_prints_the_balance(tmp_path):
    src = tmp_path / "in"
    shutil.copytree(TRAJECTORIES / "toolbench", src / "toolbench")
    (src / "broken.json").write_text("{nope")
    r = run("trajectories", "ingest", src, "--warehouse", tmp_path / "wh")
    assert r.exit_code == 0, r.output
    assert "records in 19 = trajectories 13 + quarantined 6" in r.output and "balanced" in r.output
    from worldforge.trajectories.episodes import record_episodes

    _legacy_store = tmp_path / "wh" / "episodes.duckdb"  # an earlier version's episode store is not a world
    duckdb.connect(str(_legacy_store)).close()
    record_episodes(Warehouse(tmp_path / "wh"), [])
    duckdb.connect(str(tmp_path / "wh" / "catalog.duckdb")).close()  # nor the catalog (make demo builds one)
    r = run("summary", "--warehouse", tmp_path / "wh")
    assert r.exit_code == 0 and "trajectories: 13 from 1 sources" in r.output


def test_ingest_missing_path(tmp_path):
    r = run("trajectories", "ingest", tmp_path / "missing", "--warehouse", tmp_path)
    assert r.exit_code == 2 and "no such file or folder" in r.output


@pytest.mark.parametrize("args", [["--help"], ["world", "--help"], ["trajectories", "ingest", "--help"]])
def test_help(args):
    assert run(*args).exit_code == 0


def test_output_in_a_log_never_wraps_names_or_paths(tmp_path):
    """Without a terminal (a log, CI), rich would wrap at 80 columns and cut names: the CLI writes wide lines instead."""
    import os

    doc = yaml.safe_load((SPECS_DIR / "esports_2031.yaml").read_text())
    doc["world"] = "esports_circuit_with_a_name_long_enough_to_wrap_2031"
    spec = tmp_path / "long.yaml"
    spec.write_text(yaml.safe_dump(doc))
    wh = tmp_path / "a_warehouse_folder_with_a_long_name" / "and_another_level_below_it"
    assert run("world", "build", spec, "--warehouse", wh).exit_code == 0
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    proc = subprocess.run([sys.executable, "-m", "worldforge.cli", "summary", "--warehouse", str(wh)],
                          capture_output=True, text=True, cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stderr
    assert doc["world"] in proc.stdout  # whole, on one line: not folded nor cut with an ellipsis
    assert f"worlds in {wh}" in proc.stdout


def test_spec_validate_draws_and_checks_without_writing(tmp_path, monkeypatch):
    """`spec validate`: ok and the row count for a spec that builds, nothing written anywhere; exit 2 with the field for a
    spec the language refuses, exit 2 for a file that is not there."""
    monkeypatch.chdir(tmp_path)
    r = run("spec", "validate", SPECS_DIR / "esports_2031.yaml", "--seed", 3)
    assert r.exit_code == 0, r.output
    assert r.output.startswith("ok esports_2031:") and "rows (seed 3)" in r.output and "nothing written" in r.output
    assert not any(tmp_path.iterdir())
    doc = yaml.safe_load((SPECS_DIR / "esports_2031.yaml").read_text())
    table = next(iter(doc["tables"].values()))
    table["columns"][next(iter(table["columns"]))]["colour"] = "blue"
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(doc))
    r = run("spec", "validate", bad)
    assert r.exit_code == 2 and "colour" in r.output, r.output
    assert run("spec", "validate", tmp_path / "missing.yaml").exit_code == 2
    doc = yaml.safe_load((SPECS_DIR / "esports_2031.yaml").read_text())
    doc["tables"]["teams"]["constraints"].append({"kind": "check", "expr": "wins > 100"})  # reads, but no drawn row can meet it
    broken = tmp_path / "broken.yaml"
    broken.write_text(yaml.safe_dump(doc))
    done = subprocess.run([sys.executable, "-m", "worldforge.cli", "spec", "validate", str(broken)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"error: {broken}: the spec reads, but the tables drawn with seed {doc['seed']} break"), done.stderr
    assert "teams check" in done.stderr and "wins > 100" in done.stderr


def test_spec_preview_says_what_rows_are_with_the_right_article():
    r = run("spec", "preview", SPECS_DIR / "smartphones_2029.yaml")
    assert r.exit_code == 0, r.output
    assert "is taken to be a thing" in r.output or "is taken to be a product" in r.output
    kinds = re.findall(r"is taken to be (an?) (\w+)", r.output)
    assert kinds and all(art == ("an" if kind[0] in "aeiou" else "a") for art, kind in kinds), kinds
