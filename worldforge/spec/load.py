"""Loading world specs from YAML files, with errors that name the file and field path.

Hostile documents fail with a :class:`~worldforge.errors.SpecError` before validation: files over
``MAX_SPEC_BYTES``, nesting deeper than ``MAX_YAML_DEPTH`` (checked on the event stream, before
PyYAML's recursive composer sees it) and alias bombs or recursive aliases that expand past
``MAX_YAML_NODES`` values (:mod:`worldforge.spec.limits`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from worldforge.errors import SpecError
from worldforge.spec.limits import MAX_SPEC_BYTES, MAX_YAML_DEPTH, MAX_YAML_NODES
from worldforge.spec.models import WorldSpec


class _SpecLoader(yaml.SafeLoader):
    """PyYAML's safe loader without its timestamp resolver: an unquoted ``2032-01-05`` stays the text the
    spec language reads (so an impossible ``2032-02-30`` is a spec problem on its field, not a YAML error)."""


_SpecLoader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"] for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _yaml_depth_problem(text: str) -> str | None:
    """Scan the YAML event stream (no recursion) for nesting deeper than ``MAX_YAML_DEPTH``."""
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_YAML_DEPTH:
                mark = event.start_mark
                where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
                return f"{where}the document nests more than {MAX_YAML_DEPTH} levels deep"
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1
    return None


def _tree_problem(data: Any) -> str | None:
    """Nesting depth and expanded size of a parsed document (aliases share nodes; count them each time).

    Sizes are memoised per node, so an alias bomb costs its distinct nodes, not its expansion.
    """
    seen: dict[int, tuple[int, int]] = {}  # id -> (values, height)
    active: set[int] = set()
    deep = f"the document nests more than {MAX_YAML_DEPTH} levels deep (or an alias refers to itself)"

    def size(node: Any, depth: int) -> tuple[int, int]:
        if not isinstance(node, (dict, list)):
            return 1, 0
        if depth > MAX_YAML_DEPTH or id(node) in active:
            raise _TooBig(deep)
        if id(node) in seen:
            total, height = seen[id(node)]
            if depth + height > MAX_YAML_DEPTH:
                raise _TooBig(deep)
            return total, height
        active.add(id(node))
        children = [x for kv in node.items() for x in kv] if isinstance(node, dict) else node
        total, height = 1, 0
        for child in children:
            n, h = size(child, depth + 1)
            total, height = total + n, max(height, h + 1)
            if total > MAX_YAML_NODES:
                raise _TooBig(f"the document holds more than {MAX_YAML_NODES} values once its aliases are expanded")
        active.discard(id(node))
        seen[id(node)] = (total, height)
        return total, height

    try:
        size(data, 1)
    except _TooBig as exc:
        return str(exc)
    return None


class _TooBig(Exception):
    """Internal: a document over the limits."""


def _loc(loc: tuple[Any, ...]) -> str:
    """``tables.a.columns.x.number.min`` -> ``tables.a.columns.x.min`` (drop union tags)."""
    parts = []
    for i, p in enumerate(loc):
        if i >= 2 and loc[i - 2] in ("columns", "constraints") and isinstance(p, str) and p in _TAGS:
            continue
        parts.append(str(p))
    return ".".join(parts)


_TAGS = {
    "sequence", "faker", "choice", "number", "date", "format", "reference", "derive", "rank", "share",
    "aggregate", "unique", "range", "monotone", "check",
}


def spec_from_dict(data: Any, source: str = "<spec>") -> WorldSpec:
    """Validate a parsed spec document.

    Raises:
        SpecError: naming ``source``, each offending field path and what is expected.
    """
    if not isinstance(data, dict):
        raise SpecError(source, [("", f"expected a mapping at the top level, got {type(data).__name__}")])
    problem = _tree_problem(data)
    if problem:
        raise SpecError(source, [("", problem)])
    try:
        return WorldSpec.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors(include_url=False):
            msg = err["msg"].removeprefix("Value error, ").removeprefix("Assertion failed, ")
            if err["type"] == "extra_forbidden":
                msg = "unknown field (not part of the spec language)"
            elif err["type"] == "union_tag_invalid":
                msg = msg.replace("Input tag", "kind")
            problems.append((_loc(err["loc"]), msg))
        raise SpecError(source, problems) from None
    except SpecError as exc:  # cross-field problems found by the plan (worldforge.spec.plan)
        raise SpecError(source, exc.problems) from None
    except RecursionError:  # a backstop: the limits above should make this unreachable
        raise SpecError(source, [("", "the spec nests too deeply to validate")]) from None


def load_spec(path: str | Path) -> WorldSpec:
    """Read and validate one world spec YAML file.

    Raises:
        SpecError: the file is missing, is not YAML, or does not validate.
    """
    p = Path(path)
    if not p.is_file():
        raise SpecError(str(p), [("", "file not found")])
    if p.stat().st_size > MAX_SPEC_BYTES:
        raise SpecError(str(p), [("", f"the file has {p.stat().st_size} bytes, more than {MAX_SPEC_BYTES}")])
    try:
        text = p.read_text(encoding="utf-8")
        problem = _yaml_depth_problem(text)
        if problem:
            raise SpecError(str(p), [("", problem)])
        data = yaml.load(text, Loader=_SpecLoader)  # noqa: S506 (a SafeLoader subclass)
    except RecursionError:  # a backstop: the event scan above bounds the nesting
        raise SpecError(str(p), [("", "the document nests too deeply")]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise SpecError(str(p), [("", f"{where}not valid YAML ({getattr(exc, 'problem', exc)})")]) from None
    except UnicodeDecodeError:
        raise SpecError(str(p), [("", "not UTF-8 text")]) from None
    except ValueError as exc:  # e.g. an integer of thousands of digits (Python's int conversion limit)
        raise SpecError(str(p), [("", f"not a readable spec: {str(exc).splitlines()[0][:200]}")]) from None
    return spec_from_dict(data, str(p))


class _SpecDumper(yaml.SafeDumper):
    """Block style for the spec and its tables, flow style for each column and constraint (a mapping with a
    ``kind``), as the bundled specs are written."""


_SpecDumper.add_representer(
    dict, lambda dumper, data: dumper.represent_mapping("tag:yaml.org,2002:map", data.items(), flow_style="kind" in data))


def spec_yaml(spec: "WorldSpec | dict[str, Any]", header: str = "") -> str:
    """A spec (a :class:`WorldSpec`, dumped without unset fields, or a spec document) as YAML text that
    :func:`load_spec` reads back to the same spec; ``header`` (comment lines) goes first."""
    doc = spec.model_dump(mode="json", exclude_unset=True, exclude_none=True) if isinstance(spec, WorldSpec) else spec
    return header + yaml.dump(doc, Dumper=_SpecDumper, sort_keys=False, allow_unicode=True, width=120, default_flow_style=False)


def discover_specs(directory: str | Path) -> dict[str, Path]:
    """World spec files in a folder, by file stem (``*.yaml`` and ``*.yml``), sorted."""
    d = Path(directory)
    files = sorted([*d.glob("*.yaml"), *d.glob("*.yml")])
    return {f.stem: f for f in files}


def spec_hash(spec: WorldSpec) -> str:
    """SHA-256 of the spec's canonical JSON (field order, YAML formatting and unset optional fields do not matter)."""
    canon = json.dumps(spec.model_dump(mode="json", exclude_none=True), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode()).hexdigest()
