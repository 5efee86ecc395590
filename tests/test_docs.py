"""The documentation: docs/ builds with MkDocs in strict mode (a broken link or anchor fails, and so
does a public name without a docstring in the API reference), every package of worldforge/ has its API
page, and the README stays the short front door whose links lead into it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

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
    assert proc.stderr.count("WARNING") == 0, proc.stderr
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
    for page in (project / "docs" / "api").glob("*.md"):  # the API pages stay, not rendered: a faster build
        page.write_text(re.sub(r"^::: .*$", "", page.read_text(encoding="utf-8"), flags=re.M), encoding="utf-8")
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


API = ROOT / "docs" / "api"
DIRECTIVE = re.compile(r"^::: (worldforge(?:\.\w+)*)\s*$", re.M)


def _nav_pages(nav) -> list[str]:
    """Every page file the nav of mkdocs.yml lists, however deep."""
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in _nav_pages(value)]
    return [page for item in nav for page in _nav_pages(item)]


def _documented() -> dict[str, str]:
    """``{module or package: API page}`` for every ``::: worldforge...`` directive of docs/api/."""
    return {name: page.name for page in sorted(API.glob("*.md")) for name in DIRECTIVE.findall(page.read_text(encoding="utf-8"))}


def test_every_package_has_its_api_page():
    """One API page per package of worldforge/ (its submodules render on it, so modules move freely within and
    between packages), the top-level modules on api/worldforge.md, each page in the nav, no page for a package gone."""
    lib = ROOT / "worldforge"
    documented = _documented()
    nav = set(_nav_pages(yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]))
    problems = []
    for package in sorted(p.parent.name for p in lib.glob("*/__init__.py")):
        page = f"docs/api/{package}.md"
        if documented.get(f"worldforge.{package}") != f"{package}.md":
            problems.append(f"worldforge/{package}/ has no API page: add {page} with the line `::: worldforge.{package}`")
        if f"api/{package}.md" not in nav:
            problems.append(f"{page} is not in mkdocs.yml's nav: add `- worldforge.{package}: api/{package}.md` under API reference")
    for module in sorted(p.stem for p in lib.glob("*.py") if p.stem != "__init__"):
        if documented.get(f"worldforge.{module}") != "worldforge.md":
            problems.append(f"worldforge/{module}.py is not in the API reference: add `::: worldforge.{module}` to docs/api/worldforge.md")
    for name, page in documented.items():
        path = lib.joinpath(*name.split(".")[1:])
        if not (path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()):
            problems.append(f"docs/api/{page} documents {name}, which no longer exists: remove its page (and nav entry) or line")
    for page in sorted(API.glob("*.md")):
        if f"api/{page.name}" not in nav:
            problems.append(f"docs/api/{page.name} is not in mkdocs.yml's nav")
    assert not problems, "\n".join(problems)


def _demo_project(tmp_path: Path, body: str) -> Path:
    """A one-page MkDocs project with the real mkdocs.yml's API settings, rendering the package ``wfdemo``."""
    project = tmp_path / "project"
    (project / "wfdemo").mkdir(parents=True)
    (project / "wfdemo" / "__init__.py").write_text(body, encoding="utf-8")
    shutil.copytree(ROOT / "docs" / "_ext", project / "docs" / "_ext")
    (project / "docs" / "index.md").write_text("# Demo\n\n::: wfdemo\n", encoding="utf-8")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    plugin = next(p["mkdocstrings"] for p in config["plugins"] if isinstance(p, dict) and "mkdocstrings" in p)
    python = plugin["handlers"]["python"]
    python["paths"] = [str(project)]
    for extension in python["options"]["extensions"]:
        for options in extension.values():
            options["packages"] = ["wfdemo"]
    config["nav"] = ["index.md"]
    (project / "mkdocs.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return project


DEMO = '''"""A package for the docs test."""


def documented():
    """Has a docstring."""


def _private():
    pass


class Thing:
    """Has a docstring."""

    def method(self):{method}
'''


@pytest.mark.parametrize("documented", [True, False])
def test_an_undocumented_public_name_fails_the_build(tmp_path, documented):
    """The Griffe extension docs/_ext/undocumented.py warns on a public function or method without a
    docstring, and the strict build fails naming it; a private name needs none."""
    body = DEMO.format(method='\n        """Has one too."""' if documented else "\n        pass")
    if not documented:
        body += "\n\ndef undocumented():\n    pass\n"
    project = _demo_project(tmp_path, body)
    proc = _build(project, tmp_path / "site")
    output = proc.stdout + proc.stderr
    if documented:
        assert proc.returncode == 0, output
    else:
        assert proc.returncode != 0
        assert "no docstring for the public name" in output
        assert "wfdemo.undocumented" in output and "wfdemo.Thing.method" in output, output
        assert "wfdemo._private" not in output and "wfdemo.documented" not in output
