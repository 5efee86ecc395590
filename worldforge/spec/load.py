"""Loading world specs from YAML files, with errors that name the file and field path."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from worldforge.errors import SpecError
from worldforge.spec.models import WorldSpec


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


def load_spec(path: str | Path) -> WorldSpec:
    """Read and validate one world spec YAML file.

    Raises:
        SpecError: the file is missing, is not YAML, or does not validate.
    """
    p = Path(path)
    if not p.is_file():
        raise SpecError(str(p), [("", "file not found")])
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise SpecError(str(p), [("", f"{where}not valid YAML ({getattr(exc, 'problem', exc)})")]) from None
    except UnicodeDecodeError:
        raise SpecError(str(p), [("", "not UTF-8 text")]) from None
    return spec_from_dict(data, str(p))


def discover_specs(directory: str | Path) -> dict[str, Path]:
    """World spec files in a folder, by file stem (``*.yaml`` and ``*.yml``), sorted."""
    d = Path(directory)
    files = sorted([*d.glob("*.yaml"), *d.glob("*.yml")])
    return {f.stem: f for f in files}


def spec_hash(spec: WorldSpec) -> str:
    """SHA-256 of the spec's canonical JSON (field order, YAML formatting and unset optional fields do not matter)."""
    canon = json.dumps(spec.model_dump(mode="json", exclude_none=True), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode()).hexdigest()
