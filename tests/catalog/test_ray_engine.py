"""The catalog on Ray: a dozen generated worlds built on a real local cluster (``ray start --head``, stopped by
PID) twice — as Ray tasks by ``worldforge catalog build --engine ray`` (worldforge.catalog.ray_engine), and as
Dagster runs whose steps are Ray jobs (``WORLDFORGE_EXECUTOR=ray``) — with the rows and the content of every
world file equal to the process pool's, a failing spec isolated in its row, and a re-run that skips what is built."""

from __future__ import annotations

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from tests.catalog.test_build import _stable  # rows without their timings
from tests.conftest import ROOT
from tests.ray_cluster import AUTH, RayHead
from worldforge.catalog.build import build_catalog, read_catalog
from worldforge.catalog.generate import generate_catalog
from worldforge.cli import app
from worldforge.warehouse import Warehouse
from worldforge.warehouse.worlds import content_digests

pytestmark = pytest.mark.ray

N = 12


@pytest.fixture(scope="module")
def head():
    with pytest.MonkeyPatch.context() as mp, RayHead() as cluster:
        for name, value in AUTH.items():  # this process joins the cluster too (ray.init in `catalog build`)
            mp.setenv(name, value)
        yield cluster
    assert not cluster.alive(), f"Ray processes left running: {cluster.alive()}"


@pytest.fixture(scope="module")
def spec_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ray_specs")
    generate_catalog(N, 0, folder)
    (folder / "zz_broken.yaml").write_text("world: broken_2031\nbogus: 1\n")  # fails validation: its row only
    return folder


@pytest.fixture(scope="module")
def on_processes(spec_dir, tmp_path_factory):
    """The default engine's catalog of the same specs: the reference."""
    wh = Warehouse(tmp_path_factory.mktemp("wh_process"))
    return wh, build_catalog(spec_dir, wh, workers=2)


@pytest.mark.timeout(900)
def test_ray_builds_the_same_worlds_as_the_process_pool(head, spec_dir, on_processes, tmp_path):
    ref_wh, ref = on_processes
    assert ref.built == N and [r.world for r in ref.failed] == ["zz_broken"]  # its world name is unknown: the file stem
    wh = Warehouse(tmp_path / "wh")
    run = CliRunner().invoke(app, ["catalog", "build", str(spec_dir), "--warehouse", str(wh), "--engine", "ray",
                                   "--address", head.address, "--workers", "2"])
    assert run.exit_code == 1, run.output  # the broken spec fails, alone
    assert f"built {N}, failed 1, skipped 0" in run.output and "Ray task(s) in flight at most" in run.output
    assert _stable(read_catalog(wh)) == _stable(read_catalog(ref_wh))
    for row in read_catalog(ref_wh):
        if row.status == "built":  # every table of every world, row for row
            assert content_digests(wh.world(row.world)) == content_digests(ref_wh.world(row.world)), row.world

    again = CliRunner().invoke(app, ["catalog", "build", str(spec_dir), "--warehouse", str(wh), "--engine", "ray",
                                     "--address", head.address])
    assert again.exit_code == 1 and f"built 0, failed 1, skipped {N} (unchanged)" in again.output, again.output


def test_an_unreachable_cluster_is_one_line_and_nothing_is_built(spec_dir, tmp_path):
    from worldforge.net import free_port

    wh = tmp_path / "wh"
    run = CliRunner().invoke(app, ["catalog", "build", str(spec_dir), "--warehouse", str(wh), "--engine", "ray",
                                   "--address", f"127.0.0.1:{free_port()}"])
    assert run.exit_code == 2 and "cannot reach the Ray cluster at 127.0.0.1:" in run.output, run.output
    assert not read_catalog(Warehouse(wh))


def test_engine_options_are_checked(spec_dir, tmp_path):
    run = CliRunner().invoke(app, ["catalog", "build", str(spec_dir), "--warehouse", str(tmp_path), "--engine", "spark"])
    assert run.exit_code == 2 and "--engine must be one of: process, ray" in run.output
    run = CliRunner().invoke(app, ["catalog", "build", str(spec_dir), "--warehouse", str(tmp_path), "--address", "127.0.0.1:1"])
    assert run.exit_code == 2 and "--address goes with --engine ray" in run.output


@pytest.mark.dagster
@pytest.mark.timeout(1200)
def test_dagster_runs_the_catalog_worlds_on_ray(head, spec_dir, on_processes, tmp_path):
    """``WORLDFORGE_EXECUTOR=ray``: each ``catalog_world`` partition's step is a Ray job on the cluster
    (dagster-ray's executor), launched as a user would (``dagster asset materialize``), and every world
    holds what the process pool built."""
    from concurrent.futures import ThreadPoolExecutor

    from dagster import DagsterInstance
    from ray.job_submission import JobStatus, JobSubmissionClient

    ref_wh, _ = on_processes
    home, wh = tmp_path / "dagster_home", Warehouse(tmp_path / "wh")
    home.mkdir()
    keys = sorted(p.stem for p in spec_dir.glob("*.yaml") if p.stem != "zz_broken")
    with DagsterInstance.from_config(str(home)) as instance:  # what the catalog_spec_folder sensor adds
        instance.add_dynamic_partitions("catalog_worlds", keys)
    env = {**head.env, "DAGSTER_HOME": str(home), "WORLDFORGE_EXECUTOR": "ray", "WORLDFORGE_RAY_JOBS_URL": head.jobs_url,
           "WORLDFORGE_WAREHOUSE": str(wh), "WORLDFORGE_CATALOG_SPECS": str(spec_dir)}

    def materialize(key: str) -> tuple[str, int, str]:
        proc = subprocess.run([sys.executable, "-m", "dagster", "asset", "materialize", "-m", "assets.definitions",
                               "--select", "catalog_world", "--partition", key], env=env, cwd=ROOT, capture_output=True, text=True, timeout=900)
        return key, proc.returncode, proc.stdout[-2000:] + proc.stderr[-3000:]

    with ThreadPoolExecutor(4) as pool:
        failed = [(k, log) for k, rc, log in pool.map(materialize, keys) if rc != 0]
    assert not failed, failed[0]
    jobs = JobSubmissionClient(head.jobs_url).list_jobs()
    steps = [j for j in jobs if (j.metadata or {}).get("dagster/op") == "catalog_world"]
    assert len(steps) == len(keys) and all(j.status == JobStatus.SUCCEEDED for j in steps)  # every step ran on Ray
    rows = {r.world: r for r in read_catalog(wh)}
    assert sorted(rows) == keys and all(r.status == "built" for r in rows.values())
    for key in keys:
        assert content_digests(wh.world(key)) == content_digests(ref_wh.world(key)), key
