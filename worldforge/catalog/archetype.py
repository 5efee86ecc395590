"""The archetype library: one YAML data file per domain in ``worldforge/catalog/archetypes/``.

An archetype is a world spec with its choices left open. It names the domain's tables, their
relations (1:n through a reference with a cardinality, n:m through a link table with two references,
hierarchies as chains of 1:n) and every column that *can* appear, in the spec language of
:mod:`worldforge.spec.models`, plus what :mod:`worldforge.catalog.generate` samples per world:

=================== ====================================================================================
``titles``          title templates of the world (``{year}`` is the target year)
``sites``           stems of the world's web-site names (``handsets`` -> ``handsets-2031pedia.org``);
                    default: the archetype's name
``years``           the target-year window, ``{min: 2027, max: 2040}`` by default (time-shifted worlds)
``locales``         Faker locales a world draws from (``faker`` columns without their own ``locale``)
``words``           word pools by name, for invented names (``{kind: choice, words: series, pick: 8}``)
table ``names``     alternative table names (the first is the archetype's own key for it)
table ``labels``    what one row is, one per name (``TableSpec.label``)
table ``p``         the probability that a world has the table (default 1: always)
table ``requires``  other tables it needs (an n:m link table needs both sides)
table ``rows``      ``[lo, hi]`` rows for a table without a driving reference
column ``p``        the probability that a world has the column (default 1: always)
choice ``words``    the values are ``pick`` words of a pool of ``words`` (invented, varying per world)
choice ``anchor``   the values are ``pick`` names of a curated real-world list (``anchors.yaml``)
choice ``invent``   the values are invented names: ``{template: "{Word} {suffix}", suffix: [...]}``;
                    ``{Word}``/``{word}`` is a pseudo-word, ``{A}`` a capital letter, ``{9}`` a digit,
                    any other field a pick from the invent block's list or an archetype word pool
=================== ====================================================================================

Inside an archetype, tables are named by their key: expressions (``models.price``), templates
(``{brands.code}``), ``parent``/``child`` fields and checks are renamed with the table. A table or
column a world leaves out takes everything that depends on it along (columns, constraints, child
tables), so every sampled spec is valid by construction; the library's own test builds specs of
every archetype.

Curated real-world anchor lists (countries, cities, companies by sector...) are in
``archetypes/anchors.yaml``; names in them are public facts, the entities a task asks about are
invented, so answers exist only in the world (the method of Qwen-AgentWorld, arXiv 2606.24597).
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from worldforge.errors import SpecError

_IDENT = r"^[a-z][a-z0-9_]{0,39}$"
YEARS = (2027, 2040)
"""The default target-year window of a generated world (inclusive)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class YearWindow(_Strict):
    """Target years a world of the archetype may have, ``min`` to ``max`` inclusive."""

    min: int = Field(YEARS[0], ge=1900, le=2200)
    max: int = Field(YEARS[1], ge=1900, le=2200)


class ArchetypeTable(_Strict):
    """One table an archetype may give a world; ``columns`` hold spec-language columns plus ``p`` and the
    choice extensions (``words``, ``anchor``, ``invent``, ``pick``)."""

    names: list[str] = Field(default_factory=list, max_length=8)
    labels: list[str] = Field(default_factory=list, max_length=8)
    description: str | None = None
    p: float = Field(1.0, ge=0, le=1)
    requires: list[str] = Field(default_factory=list)
    """Other tables (by key) this one needs: a world without them leaves this one out too (link tables)."""
    rows: tuple[int, int] | None = None
    primary_key: str
    columns: dict[str, dict[str, Any]] = Field(min_length=1)
    constraints: list[dict[str, Any]] = Field(default_factory=list)

    @field_validator("names")
    @classmethod
    def _idents(cls, v: list[str]) -> list[str]:
        for n in v:
            if not re.match(_IDENT, n):
                raise ValueError(f"table name {n!r} must match {_IDENT}")
        return v

    @model_validator(mode="after")
    def _shape(self) -> "ArchetypeTable":
        if self.labels and len(self.labels) != len(self.names):
            raise ValueError(f"labels has {len(self.labels)} entries but names has {len(self.names)}")
        if self.rows is not None and not (1 <= self.rows[0] <= self.rows[1] <= 500):
            raise ValueError(f"rows {list(self.rows)} must be [lo, hi] with 1 <= lo <= hi <= 500")
        if self.primary_key not in self.columns:
            raise ValueError(f"primary_key {self.primary_key!r} is not a column")
        if self.columns[self.primary_key].get("p", 1) != 1:
            raise ValueError("the primary key cannot be optional")
        return self


class Archetype(_Strict):
    """A domain a search agent meets on the real web, as a family of world specs (see the module docstring)."""

    archetype: str = Field(pattern=_IDENT)
    domain: str
    titles: list[str] = Field(min_length=1)
    sites: list[str] = Field(default_factory=list)
    description: str | None = None
    years: YearWindow = YearWindow()
    locales: list[str] = Field(default_factory=lambda: ["en_US"], min_length=1)
    words: dict[str, list[str]] = Field(default_factory=dict)
    tables: dict[str, ArchetypeTable] = Field(min_length=2)

    @field_validator("sites")
    @classmethod
    def _site_idents(cls, v: list[str]) -> list[str]:
        for n in v:
            if not re.match(r"^[a-z][a-z0-9_]{0,40}$", n):
                raise ValueError(f"site stem {n!r} must be a lowercase identifier")
        return v

    @model_validator(mode="after")
    def _keys(self) -> "Archetype":
        for key, t in self.tables.items():
            if t.names and t.names[0] != key:
                raise ValueError(f"tables.{key}.names must start with the table's own key {key!r}")
        return self


@cache
def anchors() -> dict[str, list[str]]:
    """Curated real-world name lists by name (``countries``, ``cities``, ...): ``archetypes/anchors.yaml``."""
    text = resources.files("worldforge.catalog").joinpath("archetypes/anchors.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    return {k: [str(x) for x in v] for k, v in data.items()}


def parse_archetype(data: Any, source: str) -> Archetype:
    """Validate one archetype document.

    Raises:
        SpecError: naming ``source`` and each offending field path.
    """
    try:
        return Archetype.model_validate(data)
    except ValidationError as exc:
        raise SpecError(source, [(".".join(map(str, e["loc"])), e["msg"]) for e in exc.errors(include_url=False)]) from None


@cache
def load_archetypes() -> dict[str, Archetype]:
    """Every archetype of the library, by name, sorted (``archetypes/*.yaml`` except ``anchors.yaml``).

    Raises:
        SpecError: an archetype file does not validate (a bug in the package data).
    """
    folder = resources.files("worldforge.catalog").joinpath("archetypes")
    found: dict[str, Archetype] = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".yaml") or entry.name == "anchors.yaml":
            continue
        arch = parse_archetype(yaml.safe_load(entry.read_text(encoding="utf-8")), f"archetypes/{entry.name}")
        if arch.archetype in found:
            raise SpecError(f"archetypes/{entry.name}", [("archetype", f"{arch.archetype!r} is defined twice")])
        found[arch.archetype] = arch
    return dict(sorted(found.items()))
