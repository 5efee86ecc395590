"""Hardened YAML documents: world specs and trajectory mappings are read through :func:`read_yaml`.

Hostile documents fail with a :class:`DocumentError` (one sentence) before any validation:

* files over ``MAX_SPEC_BYTES`` (:mod:`worldforge.spec.limits`), or not UTF-8;
* nesting deeper than ``MAX_YAML_DEPTH``, found on PyYAML's event stream before its recursive
  composer sees the document;
* alias bombs and recursive aliases that expand past ``MAX_YAML_NODES`` values
  (:func:`tree_problem`, which also guards documents that arrive parsed, as JSON);
* text PyYAML cannot read, with its line and column.

Unquoted dates stay text (:class:`SafeTextLoader`): the spec language parses them itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from worldforge.spec.limits import MAX_SPEC_BYTES, MAX_YAML_DEPTH, MAX_YAML_NODES

__all__ = ["DocumentError", "SafeTextLoader", "depth_problem", "read_yaml", "tree_problem"]


class DocumentError(ValueError):
    """A YAML document that cannot be read safely; the message is one sentence (no file name)."""


_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader where PyYAML was built with it (the loading pass about 9x faster on a spec; the nesting scan
before it stays pure Python), else the pure-Python one."""


class SafeTextLoader(_SafeLoader):  # type: ignore[misc, valid-type]
    """PyYAML's safe loader without its timestamp resolver: an unquoted ``2032-01-05`` stays the text the
    spec language reads (so an impossible ``2032-02-30`` is a spec problem on its field, not a YAML error)."""


SafeTextLoader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"] for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def depth_problem(text: str) -> str | None:
    """Scan the YAML event stream (no recursion) for nesting deeper than ``MAX_YAML_DEPTH``.

    Returns:
        The problem in words (with its line and column), or ``None``.
    """
    fast = getattr(yaml, "CSafeLoader", None)
    if fast is not None:  # libyaml's events, about 10x faster; it stops past 1,000 levels with its own words
        try:
            return _depth_scan(yaml.parse(text, Loader=fast))
        except yaml.YAMLError:
            pass  # the pure-Python scan below says it in ours (or raises the same kind of error)
    return _depth_scan(yaml.parse(text, Loader=yaml.SafeLoader))


def _depth_scan(events) -> str | None:
    depth = 0
    for event in events:
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_YAML_DEPTH:
                mark = event.start_mark
                where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
                return f"{where}the document nests more than {MAX_YAML_DEPTH} levels deep"
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1
    return None


class _TooBig(Exception):
    """Internal: a document over the limits."""


def tree_problem(data: Any) -> str | None:
    """Nesting depth and expanded size of a parsed document (aliases share nodes; count them each time).

    Sizes are memoised per node, so an alias bomb costs its distinct nodes, not its expansion.

    Returns:
        The problem in words, or ``None`` when the document is within ``MAX_YAML_DEPTH`` and
        ``MAX_YAML_NODES``.
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


def read_yaml(path: str | Path, what: str = "document") -> Any:
    """Read one YAML file within the limits above.

    Args:
        path: the file.
        what: what the file holds, for the last-resort message ("not a readable spec: ...").

    Returns:
        The parsed document (any YAML value; callers check its shape, and :func:`tree_problem`
        its expanded size).

    Raises:
        DocumentError: the file is missing, too big, not UTF-8, nests too deeply, or is not YAML.
    """
    p = Path(path)
    if not p.is_file():
        raise DocumentError("file not found")
    if p.stat().st_size > MAX_SPEC_BYTES:
        raise DocumentError(f"the file has {p.stat().st_size} bytes, more than {MAX_SPEC_BYTES}")
    try:
        text = p.read_text(encoding="utf-8")
        problem = depth_problem(text)
        if problem:
            raise DocumentError(problem)
        return yaml.load(text, Loader=SafeTextLoader)  # noqa: S506 (a SafeLoader subclass)
    except RecursionError:  # a backstop: the event scan above bounds the nesting
        raise DocumentError("the document nests too deeply") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise DocumentError(f"{where}not valid YAML ({getattr(exc, 'problem', exc)})") from None
    except UnicodeDecodeError:
        raise DocumentError("not UTF-8 text") from None
    except DocumentError:
        raise
    except ValueError as exc:  # e.g. an integer of thousands of digits (Python's int conversion limit)
        raise DocumentError(f"not a readable {what}: {str(exc).splitlines()[0][:200] if str(exc) else 'nests too deeply'}") from None
