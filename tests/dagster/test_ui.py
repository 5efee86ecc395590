"""The Dagster UI, for real: `dagster dev` on 127.0.0.1, headless Chromium driven by Playwright
launches a materialization of one world partition from the asset page, the run succeeds, and a
screenshot of the successful run is saved.

Skips with the reason when Debian's Chromium (/usr/bin/chromium; `make test` installs it) or the
Playwright package is missing.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import ROOT
from tests.servers import wait_http
from worldforge.net import free_port

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = [
    pytest.mark.dagster,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Chromium is not installed at /usr/bin/chromium (Debian package `chromium`; `make test` installs it)"),
    pytest.mark.skipif(importlib.util.find_spec("playwright") is None, reason="playwright is not installed (`pip install -e '.[dev]'`)"),
]
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
RUNS_QUERY = "{ runsOrError { ... on Runs { results { runId status tags { key value } } } } }"


@pytest.fixture
def dagster_dev(tmp_path):
    """`dagster dev` in its own session (setsid), with a fresh DAGSTER_HOME and warehouse; stopped by PID."""
    home, warehouse = tmp_path / "dagster_home", tmp_path / "warehouse"
    home.mkdir()
    shutil.copy(ROOT / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    port = free_port()
    env = os.environ | {"DAGSTER_HOME": str(home), "WORLDFORGE_WAREHOUSE": str(warehouse)}
    log = open(tmp_path / "dagster-dev.log", "wb")
    proc = subprocess.Popen([str(Path(sys.executable).parent / "dagster"), "dev", "-m", "assets.definitions", "-h", "127.0.0.1", "-p", str(port)],
                            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        problem = wait_http(f"{url}/server_info", 180, proc, interval_s=1)
        if problem is not None:
            pytest.fail(f"dagster dev {problem}: {(tmp_path / 'dagster-dev.log').read_text()[-2000:]}")
        yield url, warehouse
    finally:
        for sig, wait in ((signal.SIGINT, 30), (signal.SIGKILL, 10)):  # dagster dev shuts down its children on SIGINT
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                proc.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue
        try:  # nothing of the group may survive
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        log.close()


def _runs(url: str) -> list[dict]:
    r = httpx.post(f"{url}/graphql", json={"query": RUNS_QUERY}, timeout=10)
    r.raise_for_status()
    return r.json()["data"]["runsOrError"]["results"]


def test_materialize_a_world_partition_from_the_ui(dagster_dev, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    url, warehouse = dagster_dev
    from worldforge.settings import get_settings
    from worldforge.warehouse.layout import Warehouse

    # the configured warehouse's reports (make test: ./warehouse/reports), or WORLDFORGE_UI_SCREENSHOT
    shot = Path(os.environ.get("WORLDFORGE_UI_SCREENSHOT") or Warehouse.of(get_settings().warehouse).reports() / "ui-materialization.png")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(f"{url}/assets/world_tables", wait_until="networkidle")
            try:  # the first visit of an instance offers a newsletter
                page.get_by_role("button", name="Skip").click(timeout=5000)
            except Exception:  # noqa: BLE001 - not shown: nothing to dismiss
                pass
            page.get_by_role("button", name="Materialize…").click()
            dialog = page.get_by_role("dialog")
            dialog.get_by_text("Select a partition or create one").click()
            page.locator("[role=menuitem], [role=option]").filter(has_text="mars_colony_2030").first.click()
            page.keyboard.press("Escape")
            dialog.get_by_role("button", name="Launch 1 run").click()

            deadline, run = time.monotonic() + 240, None
            while time.monotonic() < deadline:
                runs = [r for r in _runs(url) if {"key": "dagster/partition", "value": "mars_colony_2030"} in r["tags"]]
                if runs and runs[0]["status"] in ("SUCCESS", "FAILURE", "CANCELED"):
                    run = runs[0]
                    break
                time.sleep(2)
            assert run is not None, "the run launched from the UI did not finish within 240 s"
            assert run["status"] == "SUCCESS", run

            page.goto(f"{url}/runs/{run['runId']}", wait_until="networkidle")
            expect(page.get_by_text("Success").first).to_be_visible(timeout=30000)
            page.goto(f"{url}/assets/world_tables?view=partitions", wait_until="networkidle")
            expect(page.get_by_text("mars_colony_2030").first).to_be_visible(timeout=30000)
            page.goto(f"{url}/runs/{run['runId']}", wait_until="networkidle")
            page.wait_for_timeout(1500)
            shot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    assert shot.stat().st_size > 10_000
    # the materialization was real: the world file exists in the warehouse dagster dev was given
    assert (warehouse / "mars_colony_2030.duckdb").is_file()
