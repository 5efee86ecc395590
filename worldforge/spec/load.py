"""Loading world specs from YAML files, with errors that name the file and field path.

Hostile documents fail with a :class:`~worldforge.errors.SpecError` before validation: the file
is read by :func:`worldforge.spec.documents.read_yaml` (size, nesting and alias limits of
:mod:`worldforge.spec.limits`), and a document that arrives parsed is measured by
:func:`~worldforge.spec.documents.tree_problem`.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from worldforge.errors import SpecError
from worldforge.spec.documents import DocumentError, read_yaml, tree_problem
from worldforge.spec.models import WorldSpec
from worldforge.spec.plan import validate_spec


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
    """Validate a parsed spec document: its fields, then its cross-references and row budget
    (:func:`~worldforge.spec.plan.validate_spec`, whose compiled plan the returned spec carries).

    Raises:
        SpecError: naming ``source``, each offending field path and what is expected.
    """
    if not isinstance(data, dict):
        raise SpecError(source, [("", f"expected a mapping at the top level, got {type(data).__name__}")])
    problem = tree_problem(data)
    if problem:
        raise SpecError(source, [("", problem)])
    try:
        spec = WorldSpec.model_validate(data)
        validate_spec(spec)  # cross-field checks; compiles the plan the spec then carries
        return spec
    except ValidationError as exc:
        problems = []
        for err in exc.errors(include_url=False):
            msg = err["msg"].removeprefix("Value error, ").removeprefix("Assertion failed, ")
            if err["type"] == "extra_forbidden":
                fields = _fields_at(err["loc"][:-1])
                msg = "unknown field (not part of the spec language)" + (f"; fields here: {', '.join(fields)}" if fields else "")
            elif err["type"] == "union_tag_invalid":
                msg = msg.replace("Input tag", "kind")
            problems.append((_loc(err["loc"]), msg))
        raise SpecError(source, problems) from None
    except SpecError as exc:  # cross-field problems found by the plan (worldforge.spec.plan)
        raise SpecError(source, exc.problems) from None
    except RecursionError:  # a backstop: the limits above should make this unreachable
        raise SpecError(source, [("", "the spec nests too deeply to validate")]) from None


def _fields_at(loc: tuple) -> list[str]:
    """The fields the spec language accepts at a place of a document (``("tables", "t", "columns", "c", "rank")``: a rank
    column's ``of``, ``within``, ``descending`` ...), walking the models by the error's path; ``[]`` where it cannot tell."""
    import typing

    from pydantic import BaseModel

    def models(ann) -> list[type[BaseModel]]:
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            return [ann]
        return [m for a in typing.get_args(ann) for m in models(a)]

    def values(ann):  # dict[str, X] -> X, list[X] -> X
        args = typing.get_args(ann)
        origin = typing.get_origin(ann)
        if origin in (dict, list, tuple):
            return args[-1] if origin is dict else args[0]
        return ann

    current: list[type[BaseModel]] = [WorldSpec]
    ann = None
    for part in loc:
        if ann is not None:  # inside a mapping or list of models: this part is a key or an index
            current, ann = models(values(ann)), None
            continue
        if len(current) > 1 and all("kind" in m.model_fields for m in current):  # a union: its member by its kind ("rank")
            tagged = [m for m in current if typing.get_args(m.model_fields["kind"].annotation) == (part,)]
            if tagged:
                current = tagged
                continue
        model = next((m for m in current if part in m.model_fields), None)
        if model is None:
            return []
        field = model.model_fields[part].annotation
        inner = typing.get_args(field)
        if typing.get_origin(field) in (dict, list) or any(typing.get_origin(a) in (dict, list) for a in inner):
            ann = next((a for a in (field, *inner) if typing.get_origin(a) in (dict, list)), field)
        else:
            current = models(field)
    return sorted(current[0].model_fields) if len(current) == 1 and ann is None else []


def load_spec(path: str | Path) -> WorldSpec:
    """Read and validate one world spec YAML file.

    Raises:
        SpecError: the file is missing, is not YAML, or does not validate.
    """
    p = Path(path)
    try:
        data = read_yaml(p, "spec")
    except DocumentError as exc:
        raise SpecError(str(p), [("", str(exc))]) from None
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


def spec_json(spec: WorldSpec) -> str:
    """The spec as stored in a world file (``_world.spec_json``): its JSON without default fields, in the author's
    order (tables, columns, constraints and every mapping as written; fields in the models' order), so that
    :func:`spec_from_dict` of it gives back the same spec, order included. The order is part of the spec: the first
    reference with a cardinality drives a table's rows, and the generators draw columns in order, so the same
    fields sorted could build another world, or none."""
    return json.dumps(spec.model_dump(mode="json", exclude_defaults=True))


def spec_hash(spec: WorldSpec) -> str:
    """SHA-256 of the spec's canonical JSON: every field in the models' order and every mapping (tables, columns ...) in
    the author's, since order changes what a spec builds. YAML formatting, the order of a model's own fields and unset
    optional fields do not matter; swapping two tables or two columns gives another hash."""
    canon = json.dumps(spec.model_dump(mode="json", exclude_none=True), separators=(",", ":"))
    return hashlib.sha256(canon.encode()).hexdigest()
