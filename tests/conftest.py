"""Shared fixtures: paths to the bundled specs and the real data in ../shared/data."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
SPECS_DIR = ROOT / "world_specs"
SHARED_DATA = ROOT.parent / "shared" / "data"
TRAJECTORIES = SHARED_DATA / "trajectories"
BUNDLED = sorted(p.stem for p in SPECS_DIR.glob("*.yaml"))

pytest_plugins = ["tests.conftest_models", "tests.conftest_datasets"]  # shared by several test folders


def pytest_configure(config):
    if not TRAJECTORIES.is_dir():
        raise pytest.UsageError(f"real trajectories not found at {TRAJECTORIES} (../shared/data must sit beside the repo)")


@pytest.fixture(scope="session")
def spec_docs() -> dict[str, dict]:
    """The bundled specs as parsed YAML (deep-copy before editing)."""
    return {name: yaml.safe_load((SPECS_DIR / f"{name}.yaml").read_text()) for name in BUNDLED}


@pytest.fixture
def phone_doc(spec_docs) -> dict:
    return copy.deepcopy(spec_docs["smartphones_2029"])


@pytest.fixture(scope="session")
def specs():
    from worldforge.spec import load_spec

    return {name: load_spec(SPECS_DIR / f"{name}.yaml") for name in BUNDLED}
