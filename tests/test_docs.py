"""The documentation: docs/ builds with MkDocs in strict mode (a broken link or anchor fails), and
the README stays the short front door whose links lead into it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

MKDOCS = [sys.executable, "-m", "mkdocs", "build", "--strict"]  # not --quiet: it hides the warnings strict mode counts
README_MAX_LINES = 250


def _build(project: Path, site: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([*MKDOCS, "-f", str(project / "mkdocs.yml"), "-d", str(site)], cwd=project, capture_output=True,
                          text=True, timeout=300, env=env)


def test_the_docs_build_in_strict_mode(tmp_path):
    proc = _build(ROOT, tmp_path / "site")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for page in (ROOT / "docs").rglob("*.md"):  # every page is built (directory URLs: cli.md -> cli/index.html)
        stem = page.relative_to(ROOT / "docs").with_suffix("")
        built = tmp_path / "site" / ("" if stem.name == "index" else stem) / "index.html"
        assert built.is_file(), f"{page.name} was not built"
    layout = (tmp_path / "site" / "layout" / "index.html").read_text(encoding="utf-8")
    assert "worldforge/simenv/" in layout  # the import map renders as a table page


@pytest.mark.parametrize("broken", ["[the spec reference](spec-reference.md)", "[the SQL views](sql.md#no-such-heading)"])
def test_a_broken_link_or_anchor_fails_the_build(tmp_path, broken):
    project = tmp_path / "project"
    shutil.copytree(ROOT / "docs", project / "docs")
    shutil.copy(ROOT / "mkdocs.yml", project / "mkdocs.yml")
    with (project / "docs" / "cli.md").open("a", encoding="utf-8") as fh:
        fh.write(f"\nSee {broken}.\n")
    proc = _build(project, tmp_path / "site")
    assert proc.returncode != 0
    target = re.search(r"\((.*?)\)", broken).group(1)
    assert target.split("#")[0] in proc.stdout + proc.stderr


def test_the_readme_is_a_short_front_door_into_the_docs():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES
    assert "make demo" in text and "make test" in text
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [link for link in links if not re.match(r"[a-z]+://", link)]
    assert local and all((ROOT / link).exists() for link in local), [link for link in local if not (ROOT / link).exists()]
    documented = {Path(link).name for link in local if link.startswith("docs/")}
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert pages <= documented, f"pages the README does not link: {sorted(pages - documented)}"
