"""The layout rules of the documentation's Layout page (docs/layout.md), checked on the code itself.

* every package of ``worldforge/`` imports only what the map lets it import (directly,
  or through what those may import), so imports flow one way, from the stores up to the datasets;
* no module imports another in a circle, even through imports deferred into a function or under
  ``TYPE_CHECKING``;
* the library never imports ``dagster`` or the code location (``assets``);
* ``simenv/`` never imports ``agentworldbench/``, directly, deferred or through what it imports;
* only the edges read ``worldforge.settings`` (:data:`SETTINGS_EDGES`);
* only the edges turn a folder into a ``Warehouse`` (:data:`PATH_EDGES`); the library takes one and uses it as is;
* every public module, function, class and method has a docstring;
* no two modules of one package, and no module beside a package, are one name in two forms (``page``/``pages``,
  ``build``/``builder``, ``record``/``records``);
* ``ruff`` (pyflakes and import order, configured in pyproject.toml) finds nothing.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from tests.conftest import ROOT

LIB = ROOT / "worldforge"
ANYTHING = "*"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(LIB.rglob("*.py"))}


def _part(module: str) -> str:
    """The map entry a module belongs to: ``spec`` for worldforge.spec.*, ``errors`` for worldforge.errors."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(module: str) -> list[tuple[str, bool]]:
    """``(imported module, at import time)`` for every import statement of a module.

    Imports inside functions and under ``if TYPE_CHECKING:`` do not run at import time; they
    still count for the layering rule.
    """
    path = _modules()[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[str, bool]] = []

    def visit(node: ast.AST, runtime: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                found.extend((a.name, runtime) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                for alias in child.names:  # ``from pkg import submodule`` imports the submodule, ``from mod import name`` the module
                    sub = f"{base}.{alias.name}"
                    found.append((sub if sub in _modules() else base, runtime))
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, False)
            elif isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                visit(child, False)
            else:
                visit(child, runtime)

    visit(tree, True)
    return found


def _resolve(name: str) -> str | None:
    """The worldforge module an imported name refers to (the longest known prefix), else None."""
    while name:
        if name in _modules():
            return name
        name = name.rpartition(".")[0]
    return None


@cache
def _layout_map() -> dict[str, set[str]]:
    """The Layout table of docs/layout.md: ``{entry: set of entries it may import}`` (``*``: anything)."""
    text = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
    section = text.split("# Layout", 1)[1].split("\n## ", 1)[0]
    rules: dict[str, set[str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        m = re.fullmatch(r"`worldforge/([\w]+)(?:/|\.py)`", cells[0]) if len(cells) == 3 else None
        if not m:
            continue
        may = cells[2]
        rules[m.group(1)] = {ANYTHING} if "everything" in may else set(re.findall(r"`(\w+)`", may))
    return rules


def _closure(entry: str) -> set[str]:
    rules, seen, todo = _layout_map(), set(), [entry]
    while todo:
        for dep in rules.get(todo.pop(), set()):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen


def test_the_readme_map_names_every_part_of_the_library_and_is_acyclic():
    rules = _layout_map()
    parts = {_part(m) for m in _modules()}
    assert parts - {"__init__"} <= set(rules), f"add these to the Layout table of docs/layout.md: {sorted(parts - {'__init__'} - set(rules))}"
    for entry in rules:
        assert entry not in _closure(entry), f"the Layout map has a circle through {entry}"
        assert _closure(entry) <= set(rules) | {ANYTHING}, f"{entry} may import an entry the map does not define"


def test_imports_follow_the_layout_map():
    wrong = []
    for module in _modules():
        src = _part(module)
        allowed = _closure(src)
        for name, _ in _imports(module):
            target = _resolve(name)
            if target is None or target == "worldforge":  # outside the library, or its version
                continue
            dst = _part(target)
            if dst != src and ANYTHING not in allowed and dst not in allowed:
                wrong.append(f"{module} imports {target} ({src} may not import {dst})")
    assert not wrong, "\n".join(sorted(set(wrong)))


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import circle found by a depth-first walk of ``graph`` (``{module: modules it imports}``)."""
    state: dict[str, int] = {}
    circles: list[list[str]] = []

    def walk(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                circles.append(path[path.index(nxt):] + [nxt] if nxt in path else [node, nxt])
            elif nxt not in state:
                walk(nxt, path + [nxt])
        state[node] = 2

    for m in sorted(graph):
        if m not in state:
            walk(m, [m])
    return circles


def test_no_import_circle_even_deferred():
    """No module imports another in a circle, counting the imports that only defer one: inside a
    function, or under ``if TYPE_CHECKING:`` (a circle hidden that way is still a circle)."""
    graph = {m: {t for n, _ in _imports(m) if (t := _resolve(n)) and t != m} for m in _modules()}
    circles = _circles(graph)
    assert not circles, "import circles:\n" + "\n".join(" -> ".join(c) for c in circles)


def test_the_circle_check_sees_deferred_imports(tmp_path, monkeypatch):
    """The check above would fail on a circle that only TYPE_CHECKING or a function-level import hides."""
    a, b, c = tmp_path / "a.py", tmp_path / "b.py", tmp_path / "c.py"
    a.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from worldforge.b import B\n")
    b.write_text("def f():\n    from worldforge.c import C\n")
    c.write_text("import worldforge.a\n")
    monkeypatch.setattr("tests.test_layout._modules", lambda: {"worldforge.a": a, "worldforge.b": b, "worldforge.c": c})
    graph = {m: {t for n, _ in _imports(m) if (t := _resolve(n)) and t != m} for m in ("worldforge.a", "worldforge.b", "worldforge.c")}
    assert _circles(graph) == [["worldforge.a", "worldforge.b", "worldforge.c", "worldforge.a"]]


def test_the_library_never_imports_dagster_or_the_code_location():
    bad = [f"{m} imports {n}" for m in _modules() for n, _ in _imports(m) if n.split(".")[0] in ("dagster", "assets")]
    assert not bad, "\n".join(bad)


def test_datasets_read_the_stores_and_write_no_sql():
    """datasets/ consumes the stores' typed reads: it never opens DuckDB itself."""
    bad = [f"{m} imports {n}" for m in _modules() if _part(m) == "datasets" for n, _ in _imports(m) if n.split(".")[0] == "duckdb"]
    sql = [str(p.relative_to(ROOT)) for p in (LIB / "datasets").rglob("*.py") if re.search(r"\bSELECT\b.*\bFROM\b", p.read_text(encoding="utf-8"))]
    assert not bad and not sql, bad + sql


def _reachable(start: str) -> dict[str, list[str]]:
    """Every library module ``start`` reaches through its imports (deferred ones included): ``{module: the chain to it}``."""
    chains, todo = {start: [start]}, [start]
    while todo:
        m = todo.pop()
        for name, _ in _imports(m):
            t = _resolve(name)
            if t and t not in chains:
                chains[t] = chains[m] + [t]
                todo.append(t)
    return chains


def test_simenv_never_imports_agentworldbench():
    """simenv/ is the environment alone: neither it nor anything it imports (directly, deferred into a
    function or under ``TYPE_CHECKING``) reaches the benchmark; the world model's contract is
    ``worldmodel/``, which sits above the environment."""
    assert "agentworldbench" not in _closure("simenv"), "the Layout table lets simenv import agentworldbench"
    bad = sorted({" -> ".join(chain) for m in _modules() if _part(m) == "simenv"
                  for t, chain in _reachable(m).items() if _part(t) == "agentworldbench"})
    assert not bad, "simenv reaches agentworldbench:\n" + "\n".join(bad)


def _missing_docstrings(folder: Path) -> list[str]:
    missing = []
    for path in sorted(folder.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = path.relative_to(ROOT)
        if not ast.get_docstring(tree):
            missing.append(f"{where}: module")

        def visit(body: list[ast.stmt], prefix: str) -> None:
            for node in body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
                    if not ast.get_docstring(node):
                        missing.append(f"{where}:{node.lineno} {prefix}{node.name}")
                    if isinstance(node, ast.ClassDef):
                        visit(node.body, f"{prefix}{node.name}.")

        visit(tree.body, "")
    return missing


def test_every_public_name_has_a_docstring():
    missing = _missing_docstrings(LIB) + _missing_docstrings(ROOT / "assets")  # an asset's docstring is its description in the UI
    assert not missing, f"{len(missing)} public names without a docstring:\n" + "\n".join(missing)


@pytest.mark.skipif(shutil.which("ruff", path=str(ROOT / ".venv" / "bin")) is None and shutil.which("ruff") is None,
                    reason="ruff is not installed (the dev extra installs it)")
def test_ruff_finds_nothing():
    ruff = shutil.which("ruff", path=str(ROOT / ".venv" / "bin")) or shutil.which("ruff")
    proc = subprocess.run([ruff, "check", "worldforge", "assets", "tests", "bench"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


WAREHOUSE_EDGES = {
    "worldforge.warehouse.layout": "Warehouse.configured itself",
    "worldforge.settings": "the settings model",
    "worldforge.rl.env": "SearchWorldEnv: trainers construct it with no arguments",
    "worldforge.rl.openenv": "SearchWorldEnvironment: OpenEnv's server constructs it with no arguments",
    "worldforge.rl.trl": "SearchWorldToolEnv: TRL's environment_factory constructs it with no arguments",
    "worldforge.rl.verifiers": "the verifiers taskset and tool server: vf-eval and prime-rl build them from flags (the warehouse optional)",
}
"""Modules of the library allowed to resolve the configured warehouse (besides ``worldforge.cli``: the options)."""


def _warehouse_from_settings(path: Path) -> list[str]:
    """Where a module resolves the warehouse itself instead of taking it: a ``warehouse`` parameter
    defaulting to ``None``, a call of ``Warehouse.configured``, or ``.warehouse`` read off the settings."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    from_settings = {t.id for node in ast.walk(tree) if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                     and getattr(node.value.func, "id", None) == "get_settings" for t in node.targets if isinstance(t, ast.Name)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            positional = args.posonlyargs + args.args
            pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults)) + list(zip(args.kwonlyargs, args.kw_defaults))
            found += [f"{path.name}:{node.lineno} {node.name}(warehouse=None)" for a, d in pairs
                      if a.arg == "warehouse" and isinstance(d, ast.Constant) and d.value is None]
        elif isinstance(node, ast.Attribute) and node.attr == "configured" and getattr(node.value, "id", None) == "Warehouse":
            found.append(f"{path.name}:{node.lineno} Warehouse.configured")
        elif isinstance(node, ast.Attribute) and node.attr == "warehouse" and (
                (isinstance(node.value, ast.Call) and getattr(node.value.func, "id", None) == "get_settings")
                or (isinstance(node.value, ast.Name) and node.value.id in from_settings)):
            found.append(f"{path.name}:{node.lineno} settings.warehouse")
    return found


def test_the_warehouse_is_resolved_only_at_the_edges():
    """The library takes its warehouse (a ``Warehouse``) from the caller; only the edges —
    the CLI's options, the Dagster resource, the environments a trainer constructs with no arguments —
    resolve the configured one (docs/layout.md)."""
    bad = [hit for m, p in _modules().items() if not m.startswith("worldforge.cli") and m not in WAREHOUSE_EDGES
           for hit in _warehouse_from_settings(p)]
    assert not bad, "the warehouse resolved below the edges:\n" + "\n".join(bad)


def test_the_edge_check_sees_each_way_of_reading_the_setting(tmp_path):
    mod = tmp_path / "m.py"
    mod.write_text("from worldforge.settings import get_settings\n"
                   "def f(world, warehouse=None): ...\n"
                   "def g(*, warehouse=None): ...\n"
                   "def h(): return get_settings().warehouse\n"
                   "def i():\n    s = get_settings()\n    return s.warehouse, Warehouse.configured()\n"
                   "def ok(warehouse, host=None): return get_settings().host\n")
    assert [hit.split(" ", 1)[1] for hit in _warehouse_from_settings(mod)] == [
        "f(warehouse=None)", "g(warehouse=None)", "settings.warehouse", "settings.warehouse", "Warehouse.configured"]


PATH_EDGES = {
    "worldforge.warehouse.layout": "Warehouse.of and WarehouseLike themselves",
    "worldforge.rl.env": "SearchWorldEnv: trainers construct it with a folder or nothing",
    "worldforge.rl.openenv": "SearchWorldEnvironment and its app: OpenEnv's server and `serve openenv` pass a folder or nothing",
    "worldforge.rl.trl": "SearchWorldToolEnv and prompt_rows: TRL's environment_factory and a trainer's script pass a folder or nothing",
    "worldforge.rl.verifiers": "the verifiers taskset and tool server: vf-eval and prime-rl build them from flags",
    "worldforge.rl.retrieve": "Retriever and the retrieval server: Search-R1's trainer points them at a folder",
    "worldforge.serving.search": "create_app and serve: the search server over a folder",
    "worldforge.recording.openai_proxy": "the recording OpenAI proxy (create_openai_proxy, serve_openai_proxy) over a folder",
    "worldforge.recording.mcp_proxy": "the recording MCP proxy's serve_mcp_proxy over a folder",
}
"""Modules of the library that may turn a caller's folder into a ``Warehouse`` (besides ``worldforge.cli``: the options)."""


def _warehouse_from_a_path(path: Path) -> list[str]:
    """Where a module converts a warehouse instead of using the one it is given: a ``Warehouse.of(...)`` call, or a
    ``WarehouseLike`` annotation (a parameter, a return or a variable that takes a folder as well as a ``Warehouse``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))

    def names_it(annotation: ast.expr | None) -> bool:
        return annotation is not None and any(
            (isinstance(n, ast.Name) and n.id == "WarehouseLike") or (isinstance(n, ast.Attribute) and n.attr == "WarehouseLike")
            or (isinstance(n, ast.Constant) and isinstance(n.value, str) and "WarehouseLike" in n.value) for n in ast.walk(annotation))

    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            params = a.posonlyargs + a.args + a.kwonlyargs + [x for x in (a.vararg, a.kwarg) if x is not None]
            found += [(p.lineno, f"{node.name}({p.arg}: WarehouseLike)") for p in params if names_it(p.annotation)]
            if names_it(node.returns):
                found.append((node.lineno, f"{node.name}() -> WarehouseLike"))
        elif isinstance(node, ast.AnnAssign) and names_it(node.annotation):
            found.append((node.lineno, f"{ast.unparse(node.target)}: WarehouseLike"))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "of"
              and "Warehouse" in (getattr(node.func.value, "id", None), getattr(node.func.value, "attr", None))):
            found.append((node.lineno, "Warehouse.of"))
    return [f"{path.name}:{line} {what}" for line, what in sorted(found)]


def test_the_library_takes_a_warehouse_and_never_converts_one_below_the_edges():
    """A library function takes a ``Warehouse`` and uses it as is; only the edges — the CLI's options, the entry points
    that users, trainers and protocol runtimes construct with a folder (:data:`PATH_EDGES`) — turn a folder into one,
    once, and pass it down (docs/layout.md)."""
    bad = [hit for m, p in _modules().items() if not m.startswith("worldforge.cli") and m not in PATH_EDGES
           for hit in _warehouse_from_a_path(p)]
    assert not bad, "a warehouse converted below the edges (take a Warehouse and pass the caller's):\n" + "\n".join(bad)
    assert set(PATH_EDGES) <= set(_modules()), "an edge that is no module: " + ", ".join(sorted(set(PATH_EDGES) - set(_modules())))


def test_the_conversion_check_sees_each_form(tmp_path):
    mod = tmp_path / "m.py"
    mod.write_text("from worldforge.warehouse import layout\n"
                   "from worldforge.warehouse.layout import Warehouse, WarehouseLike\n"
                   "def f(world, warehouse: WarehouseLike): ...\n"
                   "def g(*, warehouse: 'WarehouseLike | None' = None): ...\n"
                   "def h(warehouse): return Warehouse.of(warehouse)\n"
                   "def i(warehouse): return layout.Warehouse.of(warehouse)\n"
                   "def j(folder) -> layout.WarehouseLike: return folder\n"
                   "where: WarehouseLike = '.'\n"
                   "def ok(warehouse: Warehouse) -> Warehouse: return warehouse.world('w'), Warehouse(warehouse.root)\n")
    assert [hit.split(" ", 1)[1] for hit in _warehouse_from_a_path(mod)] == [
        "f(warehouse: WarehouseLike)", "g(warehouse: WarehouseLike)", "Warehouse.of", "Warehouse.of", "j() -> WarehouseLike",
        "where: WarehouseLike"]


SESSION_STORE_OWNERS = {
    "worldforge.recording.openai_proxy": ("SessionRegistry", "sessions of live upstream traffic being recorded, not agent episodes"),
    "worldforge.recording.mcp_proxy": ("SessionRegistry", "the same, for MCP upstreams"),
    "worldforge.warehouse.cache": ("LRUCache", "world files' contents, not sessions"),
}
"""Modules outside ``serving/`` that may construct one kind of store, with the reason."""

ENVIRONMENT_OWNERS = ("worldforge.simenv", "worldforge.agents", "worldforge.worldmodel")
"""Where a ``SearchEnv`` may be built outside ``serving/``: the environment itself, and agents and the grounded
backend that run their own in-process episodes (the oracle, the world model's replay)."""


def _within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def _session_stores(path: Path) -> list[str]:
    """Where a module keeps sessions of its own: a ``SessionRegistry(...)`` or a ``cachetools`` cache, an environment
    (``SearchEnv(...)``) built by a protocol adapter instead of the episode service, or an adapter reaching into the
    service's registry (``x.registry.open(...)``: past its logging) other than to read ``max_sessions``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if name in ("SessionRegistry", "LRUCache", "TTLCache", "SearchEnv"):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}(...)")
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) and node.value.attr == "registry"
              and node.attr != "max_sessions"):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno} registry.{node.attr}")
    return found


def _allowed(module: str, hit: str) -> bool:
    kind = hit.split(" ", 1)[1]
    if kind == "SearchEnv(...)":
        return _within(module, ENVIRONMENT_OWNERS)
    owner = SESSION_STORE_OWNERS.get(module)
    if owner is not None and owner[0] == "SessionRegistry" and kind.startswith("registry."):
        return True  # a registry's owner works its own registry
    return owner is not None and kind == f"{owner[0]}(...)"


def test_no_session_store_outside_serving():
    """Every episode is opened, kept, expired and logged by ``serving.episodes.EpisodeService``: outside
    ``serving/`` no adapter (``rl/``: TRL, OpenEnv, verifiers, ``/retrieve``) builds an environment, keeps
    sessions itself or works the service's registry past it (:data:`ENVIRONMENT_OWNERS`,
    :data:`SESSION_STORE_OWNERS` name the exceptions, with their reasons)."""
    bad = [hit for m, p in _modules().items() if not _within(m, ("worldforge.serving",))
           for hit in _session_stores(p) if not _allowed(m, hit)]
    assert not bad, "sessions kept outside serving/ (use serving.episodes.EpisodeService):\n" + "\n".join(bad)


def test_the_session_store_check_sees_each_kind(tmp_path):
    mod = tmp_path / "m.py"
    mod.write_text("from cachetools import LRUCache\nsessions = LRUCache(8)\nregistry = SessionRegistry(8)\n"
                   "def f(w): return SearchEnv(w, warehouse=None)\ndef ok(): return EpisodeService(None, agent='x')\n"
                   "def g(s): s.episodes.registry.open('k', 1); return s.episodes.registry.max_sessions\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sys.modules[__name__], "ROOT", tmp_path)
        hits = [h.split(" ", 1)[1] for h in _session_stores(mod)]
    assert hits == ["LRUCache(...)", "SessionRegistry(...)", "SearchEnv(...)", "registry.open"]
    assert not _allowed("worldforge.simenv.server", "x SessionRegistry(...)")  # simenv may build environments, not keep sessions
    assert _allowed("worldforge.simenv.env", "x SearchEnv(...)") and not _allowed("worldforge.simenvx", "x SearchEnv(...)")
    assert not _allowed("worldforge.rl.verifiers", "x LRUCache(...)") and _allowed("worldforge.warehouse.cache", "x LRUCache(...)")
    assert not _allowed("worldforge.rl.retrieve", "x registry.acquire") and _allowed("worldforge.recording.mcp_proxy", "x registry.pop")


SETTINGS_EDGES = {
    "worldforge.warehouse.layout:Warehouse.configured": "the configured warehouse itself (only edges call it: the warehouse rule above)",
    "worldforge.runtime:apply_settings": "the process-wide settings (the world caches' bound), applied by the edges (only they call it: this rule)",
    "worldforge.serving.search:serve": "the search server's entry point (`worldforge serve search`)",
    "worldforge.rl.retrieve:serve_retrieve": "the /retrieve server's entry point",
    "worldforge.rl.openenv:serve": "the OpenEnv server's entry point",
    "worldforge.recording.mcp_proxy:serve_mcp_proxy": "the recording MCP proxy's entry point",
    "worldforge.recording.openai_proxy:serve_openai_proxy": "the recording OpenAI proxy's entry point",
    "worldforge.llm.server:VLLMServer.__init__": "the vLLM server launcher (host and model cache of the machine it starts on)",
    "worldforge.rl.env:SearchWorldEnv.__init__": "trainers construct it with no arguments",
    "worldforge.rl.verifiers:WorldforgeTaskset.load": "vf-eval and prime-rl build the taskset from flags, the warehouse optional",
    "worldforge.rl.verifiers:WorldforgeTaskset.toolsets": "as load: the taskset's tool servers, built by the verifiers runtime",
    "worldforge.rl.verifiers:WorldToolset.setup": "the verifiers tool server, set up by the verifiers runtime with no warehouse",
    "worldforge.rl.verifiers:WorldTask._graded": "grading inside the verifiers runtime, which passes no warehouse",
}
"""Functions of the library allowed to read ``worldforge.settings`` (``get_settings``, ``Settings(``,
``.configured(``), ``module:qualified name`` → why it is an edge; besides ``worldforge.cli`` (the
options) and ``worldforge.settings`` itself. ``assets/`` (the Dagster resources) is outside the library."""

def _settings_reads(path: Path) -> set[str]:
    """``qualified name`` of each function or class (``<module>`` at top level) that calls ``get_settings``,
    ``Settings(...)`` or ``<anything>.configured(...)``."""
    found: set[str] = set()

    def visit(node: ast.AST, scope: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            inner = scope + [child.name] if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else scope
            if isinstance(child, ast.Call):
                f = child.func
                if (isinstance(f, ast.Name) and f.id in ("get_settings", "apply_settings", "Settings")) or (
                        isinstance(f, ast.Attribute) and f.attr in ("get_settings", "apply_settings", "Settings", "configured")):
                    found.add(".".join(scope) or "<module>")
            visit(child, inner)

    visit(ast.parse(path.read_text(encoding="utf-8")), [])
    return found


def _settings_readers() -> set[str]:
    return {f"{m}:{q}" for m, p in _modules().items() if not m.startswith("worldforge.cli") and m != "worldforge.settings"
            for q in _settings_reads(p)}


def test_settings_are_read_only_at_the_edges():
    """Below the edges (CLI, server entry points, the constructors trainers call with no arguments) the library
    takes every setting as an argument from its caller; a new reader anywhere else fails here."""
    readers = _settings_readers()
    new = sorted(readers - SETTINGS_EDGES.keys())
    assert not new, "settings read below the edges (take the value as an argument, or name a new edge):\n" + "\n".join(new)
    stale = sorted(SETTINGS_EDGES.keys() - readers)
    assert not stale, "listed as reading settings but no longer does (remove them):\n" + "\n".join(stale)


def test_the_settings_check_sees_each_way_of_reading_them(tmp_path):
    mod = tmp_path / "m.py"
    mod.write_text("from worldforge.settings import Settings, get_settings\n"
                   "import worldforge.settings as ws\n"
                   "def f(): return get_settings().host\n"
                   "class C:\n    def m(self): return Settings()\n"
                   "    x = ws.get_settings()\n"
                   "def g(): return Warehouse.configured(None)\n"
                   "def a(): return apply_settings().host\n"
                   "def ok(host): return host\n")
    assert _settings_reads(mod) == {"f", "C.m", "C", "g", "a"}


def test_the_library_defaults_match_the_settings_defaults():
    """A value the library takes as an argument keeps a default of its own for callers that give none; it must
    be the default of the setting the edges read, or the same run would behave differently by its entry point."""
    from worldforge.llm.openai_backend import DEFAULT_BASE_URL
    from worldforge.serving.sessions import DEFAULT_IDLE_S
    from worldforge.settings import Settings
    from worldforge.trajectories.readers import DEFAULT_MAX_RECORD_MB
    from worldforge.trajectories.store import DEFAULT_STORE_MEMORY_MB

    library = {"session_idle_s": DEFAULT_IDLE_S, "max_record_mb": DEFAULT_MAX_RECORD_MB,
               "store_memory_mb": DEFAULT_STORE_MEMORY_MB, "vllm_url": DEFAULT_BASE_URL}
    settings = {name: Settings.model_fields[name].default for name in library}
    assert library == settings


WORD_FORMS = ("s", "es", "r", "er", "ers")
"""Endings that make another form of one word: a plural (``page``/``pages``) or an agent noun (``build``/``builder``)."""


def _one_word(a: str, b: str) -> bool:
    """``a`` and ``b`` are one word in two forms: one is the other with an ending of :data:`WORD_FORMS`."""
    return any(b == a + end or a == b + end for end in WORD_FORMS)


def _same_word_siblings(modules: dict[str, Path]) -> list[str]:
    """``a ~ b`` for two modules (or a module and a package) of one package whose names are one word in two forms."""
    by_parent: dict[str, list[str]] = {}
    for m in modules:
        parent, _, leaf = m.rpartition(".")
        by_parent.setdefault(parent, []).append(leaf)
    hits = []
    for parent, leaves in by_parent.items():
        leaves = sorted(set(leaves))
        hits += [f"{parent}.{a} ~ {parent}.{b}" for i, a in enumerate(leaves) for b in leaves[i + 1:] if _one_word(a, b)]
    return hits


def test_no_package_holds_one_name_in_two_forms():
    """A reader must not have to open both ``page.py`` and ``pages.py`` to learn which is which (issue 50):
    siblings in a package are different words."""
    hits = _same_word_siblings(_modules())  # a package is named as a module of its parent: a module beside it counts too
    assert not hits, "modules of one package that are one name in two forms:\n" + "\n".join(hits)


def test_the_sibling_check_sees_each_form():
    mods = {"w.corpus.page": Path(), "w.corpus.pages": Path(), "w.corpus.build": Path(), "w.corpus.builder": Path(),
            "w.record": Path(), "w.records": Path(), "w.corpus.index": Path(), "w.corpus.steps": Path(), "w.tasks.page": Path()}
    assert sorted(_same_word_siblings(mods)) == ["w.corpus.build ~ w.corpus.builder", "w.corpus.page ~ w.corpus.pages", "w.record ~ w.records"]
