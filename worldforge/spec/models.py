"""World spec language v1: pydantic models.

A spec names a world, a seed, a ``target_year`` and its tables. Each table declares a
primary key, columns (each with one generator ``kind``) and cross-row constraints. Foreign
keys are declared by ``reference`` columns, in SDV's parent/child vocabulary: the child
table holds a reference column whose values are primary keys of the parent table, with a
``cardinality`` (children per parent). Every model forbids unknown fields.

Column kinds:

========== ==================================================================================
sequence   integers ``start, start+step, ...`` (surrogate keys)
faker      a Faker provider with arguments (``provider: company``), seeded per column
choice     a value from a list, optionally weighted or unique (how real anchors enter: brands)
number     int/float from ``uniform|normal|lognormal|triangular|exponential``, clipped to
           ``[min, max]``, rounded to ``decimals``, with a ``unit``
date       a date inside a window given absolutely (``2029-03-01``) or relative to
           ``target_year`` (``Y-01-01``, ``Y-2-06-30``, ``Y+1-12-31``)
format     a formatted identifier, ``"{brands.code}-{n:03d}"``; ``n`` counts rows, restarting
           within ``counter_within``; fields name row columns or ``parent.column``
reference  a foreign key to a parent table's primary key, with a cardinality; several per parent
           (roles), optional (``null_share``), or to its own table (a ``hierarchy``)
derive     an expression over the row (see :mod:`worldforge.spec.expr`)
rank       rank of ``of`` (1 = largest when ``descending``) within an optional group
share      ``of`` / sum of ``of`` within an optional group
aggregate  ``fn`` (sum|count|mean|min|max) of a child table's column, per parent row
========== ==================================================================================
"""

from __future__ import annotations

import math
import re
from collections import Counter
from datetime import date as _date
from typing import Annotated, Any, Literal, Union

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from worldforge.spec import limits as L
from worldforge.spec.dates import resolve_date

ROW_BUDGET = (300, 500)
"""Inclusive bounds on the total row count of a world (the paper's 300–500 rows)."""

_IDENT = r"^[a-z][a-z0-9_]{0,62}$"
"""Names of worlds, tables, columns and scenarios: lowercase identifiers of at most 63 characters
(file, schema and column names in DuckDB)."""

RESERVED_WORLD_NAMES = frozenset({"trajectories", "episodes", "catalog"})
"""World names a spec may not take: ``<warehouse>/<name>.duckdb`` is one of the warehouse's stores
(the trajectory store, the episode store of earlier versions, the world catalog), which a world
file of that name would overwrite or be mistaken for (:data:`worldforge.warehouse.layout.STORES`)."""

_NUM = L.MAX_ABS_NUMBER
Num = Annotated[float, Field(ge=-_NUM, le=_NUM, allow_inf_nan=False)]
"""A finite number within ±MAX_ABS_NUMBER (:mod:`worldforge.spec.limits`)."""
Int = Annotated[int, Field(ge=-_NUM, le=_NUM)]
"""A whole number within ±MAX_ABS_NUMBER."""
Text = Annotated[str, Field(max_length=L.MAX_STRING_CHARS)]
"""A string of at most MAX_STRING_CHARS characters."""


def _iso(v: Any) -> Any:
    """A date YAML read unquoted (``start: 2032-01-05`` is a ``datetime.date`` to PyYAML) back to its ISO text."""
    return v.isoformat()[:10] if isinstance(v, _date) else v


DateText = Annotated[str, BeforeValidator(_iso)]
"""A date field's text: ``YYYY-MM-DD`` or ``Y[+N|-N]-MM-DD``; unquoted YAML dates are accepted."""


def _bounded_value(v: Any, where: str) -> None:
    """Raise ValueError when a (nested) argument value is too large: numbers, strings, lists."""
    if isinstance(v, bool) or v is None:
        return
    if isinstance(v, (int, float)):
        if (isinstance(v, float) and not math.isfinite(v)) or abs(v) > _NUM:
            raise ValueError(f"{where}: {v!r} is not a number within ±{_NUM:.0e}")
    elif isinstance(v, str):
        if len(v) > L.MAX_STRING_CHARS:
            raise ValueError(f"{where}: a string longer than {L.MAX_STRING_CHARS} characters")
    elif isinstance(v, (list, tuple, dict)):
        if len(v) > L.MAX_CHOICE_VALUES:
            raise ValueError(f"{where}: more than {L.MAX_CHOICE_VALUES} entries")
        items = v.items() if isinstance(v, dict) else enumerate(v)
        for k, x in items:
            _bounded_value(x, f"{where}.{k}")


def _check_expr(text: str) -> str:
    from worldforge.errors import ExpressionError
    from worldforge.spec.expr import parse

    try:
        parse(text)
    except ExpressionError as exc:
        raise ValueError(str(exc)) from None
    return text


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _ColumnBase(_Strict):
    description: str | None = None
    unit: str | None = None
    label: str | None = Field(None, min_length=1, max_length=80)
    """The words pages and task columns use for the column (``price_usd_kwh`` -> "price per kWh");
    derived from the name and unit when absent (:func:`worldforge.corpus.vocab.column_info`)."""
    verb: str | None = Field(None, min_length=3, max_length=400)
    """How prose states the value of one row, as a predicate in the present or past tense with
    ``{value}`` where the value goes (``launched on {value}``, ``seats {value}``, ``is priced at
    {value}``); alternatives separated by `` | `` are picked by seed (``lasted {value} | ran for
    {value}``); the sentence planner conjugates them for plural subjects. Derived from the label,
    unit and kind when absent (:mod:`worldforge.corpus.lexicon`)."""

    @field_validator("verb")
    @classmethod
    def _verb(cls, v: str | None) -> str | None:
        if v is None:
            return v
        for alt in v.split("|"):
            alt = alt.strip()
            if alt.count("{value}") != 1 or re.search(r"\{(?!value\})", alt):
                raise ValueError(f"each alternative of 'verb' needs '{{value}}' exactly once and no other braces: {alt!r}")
        return v
    additive: bool | None = None
    """Whether values of different rows can be added up (counts, money, quantities: ``true``;
    means, rates, grades, ranks, depths, ages: ``false``); tasks never sum or total a
    non-additive column. Derived from the kind, unit and label when absent."""
    compose_only: bool = False
    """The column exists only to compose another (the parts of a generated name): never a task
    column, an infobox row or a stated fact."""


class SequenceColumn(_ColumnBase):
    """Integers ``start, start+step, ...``, one per row (surrogate keys); ``step`` must not be 0.

    YAML: ``{kind: sequence, start: 100}``.
    """

    kind: Literal["sequence"]
    start: Int = 1
    step: Int = 1

    @field_validator("step")
    @classmethod
    def _nonzero(cls, v: int) -> int:
        if v == 0:
            raise ValueError("step must not be 0 (keys would repeat)")
        return v


class FakerColumn(_ColumnBase):
    """A Faker provider's values, or a Faker template of providers.

    Exactly one of ``provider`` (with ``args``) or ``template`` (Faker's own syntax,
    ``"{{first_name}} {{last_name}}"``, every token a provider) is given. ``weighted`` is
    Faker's ``use_weighting``: true draws with real-world frequencies; false draws
    uniformly, about 10x faster.
    """

    kind: Literal["faker"]
    provider: str | None = Field(None, max_length=100)
    template: str | None = Field(None, max_length=1000)
    args: dict[str, Any] = Field(default_factory=dict)
    locale: str = Field("en_US", max_length=20)
    unique: bool = False
    weighted: bool = True

    @model_validator(mode="after")
    def _one_source(self) -> "FakerColumn":
        if (self.provider is None) == (self.template is None):
            raise ValueError("give exactly one of 'provider' or 'template'")
        if self.template is not None and self.args:
            raise ValueError("'args' go with 'provider', not with 'template'")
        for name, value in self.args.items():
            _bounded_value(value, f"args.{name}")
            sizes = value if isinstance(value, (list, tuple)) else [value]
            if re.search(L.FAKER_SIZE_ARG, name) and any(
                isinstance(x, (int, float)) and not isinstance(x, bool) and abs(x) > L.MAX_FAKER_SIZE for x in sizes
            ):
                raise ValueError(f"args.{name}: {value!r} asks for more than {L.MAX_FAKER_SIZE} (sizes are bounded)")
        return self


Scalar = Union[bool, int, float, str]


class ChoiceColumn(_ColumnBase):
    """A value drawn from ``values``: how real anchors (brands, cities) enter a world.

    ``weights`` (one per value, non-negative, positive sum) weight the draw; ``unique`` draws without
    replacement, so the table needs no more rows than values. Values share one type (ints and floats may mix).

    YAML: ``{kind: choice, values: [Apple, Samsung], unique: true}``.
    """

    kind: Literal["choice"]
    values: list[Annotated[Scalar, BeforeValidator(_iso)]] = Field(min_length=1, max_length=L.MAX_CHOICE_VALUES)
    weights: list[Num] | None = None
    unique: bool = False

    @model_validator(mode="after")
    def _weights(self) -> "ChoiceColumn":
        for i, v in enumerate(self.values):
            _bounded_value(v, f"values.{i}")
        if self.weights is not None:
            if len(self.weights) != len(self.values):
                raise ValueError(f"weights has {len(self.weights)} entries but values has {len(self.values)}")
            if any(w < 0 for w in self.weights) or sum(self.weights) <= 0:
                raise ValueError("weights must be non-negative with a positive sum")
        if len({type(v) for v in self.values}) > 1 and not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in self.values):
            word = {"int": "a number", "float": "a number", "str": "text", "bool": "a yes/no", "date": "a date"}
            kinds = Counter(type(v).__name__ for v in self.values)
            common = kinds.most_common(1)[0][0]
            odd = next(v for v in self.values if type(v).__name__ != common)
            raise ValueError(f"values must all have the same type: {odd!r} is {word.get(type(odd).__name__, type(odd).__name__)} among "
                             f"{word.get(common, common)} values (YAML reads 4, 1.5, yes and 2031-05-01 unquoted as numbers, "
                             f"yes/no and dates: quote it, \"{odd}\")")
        return self


class NumberColumn(_ColumnBase):
    """An int or float drawn from ``distribution`` and kept within ``[min, max]``, with an optional ``unit``.

    ``normal`` and ``lognormal`` need ``mean`` and ``std`` (lognormal: ``mean`` is the median, ``std`` the
    spread of the log); ``exponential`` needs ``mean`` (of the excess over ``min``); ``triangular`` peaks at
    ``mode`` (default: the midpoint). A draw outside the bounds is redrawn up to 50 times, then clipped; ints are
    rounded to whole numbers, floats to ``decimals`` when given.

    YAML: ``{kind: number, dtype: int, min: 20, max: 15000, distribution: lognormal, mean: 900, std: 0.9, unit: thousand units}``.
    """

    kind: Literal["number"]
    dtype: Literal["int", "float"] = "float"
    distribution: Literal["uniform", "normal", "lognormal", "triangular", "exponential"] = "uniform"
    min: Num
    max: Num
    mean: Num | None = None
    std: Num | None = Field(None, gt=0)
    mode: Num | None = None
    decimals: int | None = Field(None, ge=0, le=12)

    @model_validator(mode="after")
    def _params(self) -> "NumberColumn":
        if self.min > self.max:
            raise ValueError(f"min ({self.min}) is greater than max ({self.max})")
        if self.distribution in ("normal", "lognormal") and (self.mean is None or self.std is None):
            raise ValueError(f"distribution '{self.distribution}' needs mean and std")
        if self.distribution == "lognormal" and self.mean is not None and self.mean <= 0:
            raise ValueError("lognormal mean must be > 0 (it is the median of the values)")
        if self.distribution == "lognormal" and self.std is not None and self.std > L.MAX_LOGNORMAL_STD:
            raise ValueError(f"lognormal std (the spread of the log) must be at most {L.MAX_LOGNORMAL_STD}")
        if self.distribution == "exponential" and (self.mean is None or self.mean <= 0):
            raise ValueError("distribution 'exponential' needs a mean > 0")
        if self.dtype == "int" and math.ceil(self.min) > math.floor(self.max):
            raise ValueError(f"no whole number lies within [{self.min}, {self.max}]")
        if self.mode is not None and not (self.min <= self.mode <= self.max):
            raise ValueError("mode must lie within [min, max]")
        return self


def _date_form(v: str) -> str:
    try:
        resolve_date(v, 2000)
    except ValueError:
        raise ValueError(f"{v!r} is not a date: use YYYY-MM-DD or Y[+N|-N]-MM-DD (relative to target_year)") from None
    return v


class DateColumn(_ColumnBase):
    """A date drawn uniformly from ``start`` to ``end``, both inclusive.

    Bounds are absolute (``2029-03-01``) or relative to ``target_year`` (``Y-01-01``, ``Y-2-06-30``, ``Y+1-12-31``).

    YAML: ``{kind: date, start: Y-01-05, end: Y-10-31}``.
    """

    kind: Literal["date"]
    start: DateText
    end: DateText

    @field_validator("start", "end")
    @classmethod
    def _form(cls, v: str) -> str:
        return _date_form(v)


class FormatColumn(_ColumnBase):
    """A formatted identifier from a ``str.format`` template.

    Fields name row columns, ``parent.column`` (through a reference) or ``n``: a row counter from ``start``
    that restarts for each value of ``counter_within``.

    YAML: ``{kind: format, template: "{brands.code}-{n:03d}", counter_within: brand_id}``.
    """

    kind: Literal["format"]
    template: str = Field(max_length=1000)
    counter_within: str | None = None
    start: Int = 1


class Cardinality(_Strict):
    """Children per parent row through a reference: ``min`` to ``max``, both inclusive.

    YAML: ``cardinality: {min: 8, max: 14}``.
    """

    min: int = Field(0, ge=0, le=ROW_BUDGET[1])
    max: int = Field(ge=0, le=ROW_BUDGET[1])

    @model_validator(mode="after")
    def _order(self) -> "Cardinality":
        if self.min > self.max:
            raise ValueError(f"min ({self.min}) is greater than max ({self.max})")
        return self


class Hierarchy(_Strict):
    """The shape of the tree (or forest) a self-reference draws: a ``reference`` whose ``parent`` is its own table.

    ``roots`` rows have no parent (a null reference); every other row gets an earlier row (lower row position, so
    a lower ``sequence`` key) as its parent, so the tree is acyclic by construction. ``max_depth`` bounds the hops
    from any row up to its root (a root has depth 0), ``max_children`` the rows that name one row as their parent.
    Each non-root row picks uniformly among the earlier rows that still have room (depth below ``max_depth``,
    fewer than ``max_children`` children). ``roots`` defaults to ``round(null_share × rows)`` when the reference
    has a ``null_share``, else 1. The spec is refused when the table's rows cannot fit the bounds
    (``roots × (1 + K + K² + … + K^max_depth)`` rows at most).

    YAML (inside table ``staff``)::

        manager_id:
          kind: reference
          parent: staff
          label: line manager
          hierarchy: {max_depth: 5, max_children: 6}
    """

    roots: int | None = Field(None, ge=1, le=ROW_BUDGET[1])
    max_depth: int | None = Field(None, ge=1, le=ROW_BUDGET[1])
    max_children: int | None = Field(None, ge=1, le=ROW_BUDGET[1])

    def capacity(self, roots: int) -> int:
        """The most rows a forest of ``roots`` trees can hold within the bounds (capped at the row budget + 1)."""
        if self.max_depth is None or self.max_children is None:
            return ROW_BUDGET[1] + 1
        total, level = 0, roots
        for _ in range(self.max_depth + 1):
            total += level
            level *= self.max_children
            if total > ROW_BUDGET[1]:
                return ROW_BUDGET[1] + 1
        return total


class ReferenceColumn(_ColumnBase):
    """A foreign key: every value is a primary key of the ``parent`` table (or null, see ``null_share``).

    The first reference with a ``cardinality`` drives the table's rows: each parent gets ``min``–``max``
    children (the table's ``rows``, when given, fixes the total). Without a cardinality, every row gets a
    parent drawn at random.

    **Roles.** A table may hold several references to the same parent, each with its own ``label``
    (``home_team_id`` "home team", ``away_team_id`` "away team"), each with its own optional cardinality.
    Rules between them are enforced while the parents are assigned, never by failing the build: a
    ``check`` with ``enforce: resample`` that reads reference columns (``home_team_id != away_team_id``) and
    a ``unique`` constraint over reference columns (``[home_team_id, away_team_id]``) are met by swapping the
    parent of one reference between two rows (which keeps every parent's count, so cardinalities hold), from a
    seeded stream of their own; a spec without such rules gets the tables it always got.

    **Junctions.** When two or more references carry a cardinality (``enrolments``: ``course_id`` 10–14 per
    course, ``student_id`` 0–3 per student), every one holds: the first fixes the rows per parent as above
    (nudged, within its bounds, so the total fits the others), each other one gets per-parent counts within its
    bounds summing to the same total, and rows are matched to parents so that no (first parent, other parent)
    pair repeats — the default in a junction, whenever each other parent's count can stay within the number of
    first parents. A combination that cannot hold for every seed (one side's minimum total above the other's
    maximum) is refused when the spec loads, with the bounds that conflict and by how much.

    **Optional references.** ``null_share`` (0 to 0.95) leaves that share of rows (rounded) without a parent:
    the reference is null there, chosen by a seeded stream of its own. A null reference is absent everywhere:
    foreign-key and cardinality checks skip it, aggregates through it do not count the row, and
    ``parent.column`` read through it is null. It cannot be combined with a ``cardinality``.

    **Hierarchies.** A reference to its own table (``manager_id`` in ``staff``) builds a tree or forest,
    shaped by ``hierarchy`` (see :class:`Hierarchy`); its roots hold null. It takes no ``cardinality`` (use
    ``hierarchy.max_children``), and ``null_share`` sets the share of roots. Aggregates may read the table's
    own rows through it (``direct_reports: {kind: aggregate, child: staff, via: manager_id, fn: count}``);
    expressions and templates cannot read ``staff.column`` through it (the spec is refused: the parent row
    is the table's own).

    YAML: ``{kind: reference, parent: brands, cardinality: {min: 8, max: 14}}``,
    ``{kind: reference, parent: teams, label: away team}``,
    ``{kind: reference, parent: distributors, null_share: 0.3}``,
    ``{kind: reference, parent: staff, hierarchy: {max_depth: 5, max_children: 6}}``.
    """

    kind: Literal["reference"]
    parent: str
    cardinality: Cardinality | None = None
    null_share: float | None = Field(None, ge=0, le=0.95)
    """The share of rows left without a parent (null); left out of dumps when unset."""
    hierarchy: Hierarchy | None = None
    """For a reference to its own table: the tree's bounds (:class:`Hierarchy`)."""

    @model_validator(mode="after")
    def _null_share(self) -> "ReferenceColumn":
        if self.null_share and self.cardinality is not None:
            raise ValueError("null_share and cardinality cannot go together on one reference "
                             "(the cardinality counts every row); drop one of them")
        return self


class DeriveColumn(_ColumnBase):
    """An expression over the row and ``parent.column`` values (:mod:`worldforge.spec.expr`), cast to ``dtype`` when given.

    YAML: ``{kind: derive, expr: "add_days(announced, lead_days)"}``.
    """

    kind: Literal["derive"]
    expr: str
    dtype: Literal["int", "float", "str", "bool", "date"] | None = None

    @field_validator("expr")
    @classmethod
    def _parses(cls, v: str) -> str:
        return _check_expr(v)


class RankColumn(_ColumnBase):
    """The rank of ``of`` within each ``within`` group (or the whole table): 1 is the largest when
    ``descending``; ties are ranked in row order, so ranks never repeat.

    YAML: ``{kind: rank, of: shipments_k, within: brand_id}``.
    """

    kind: Literal["rank"]
    of: str
    within: str | None = None
    descending: bool = True


class ShareColumn(_ColumnBase):
    """``of`` divided by the sum of ``of`` within its ``within`` group (or the whole table), rounded to
    ``decimals``; times 100 when ``percent``; null when the group sums to 0.

    YAML: ``{kind: share, of: shipments_k, percent: true, decimals: 2}``.
    """

    kind: Literal["share"]
    of: str
    within: str | None = None
    decimals: int = Field(4, ge=0, le=12)
    percent: bool = False


class AggregateColumn(_ColumnBase):
    """``fn`` (sum, count, mean, min, max) of the ``child`` table's column ``of``, per row of this (parent) table.

    Children are found through ``via``, the child's reference to this table (default: the first one).
    ``count`` needs no ``of`` (given one, it counts its non-null values). A parent without children gets 0
    for ``sum`` and ``count``, null for the others. ``decimals`` rounds float results.

    YAML: ``{kind: aggregate, child: models, fn: sum, of: shipments_k}``.
    """

    kind: Literal["aggregate"]
    child: str
    fn: Literal["sum", "count", "mean", "min", "max"]
    of: str | None = None
    via: str | None = None
    decimals: int | None = Field(None, ge=0, le=12)

    @model_validator(mode="after")
    def _of(self) -> "AggregateColumn":
        if self.fn != "count" and self.of is None:
            raise ValueError(f"fn '{self.fn}' needs 'of' (the child column to aggregate)")
        return self


ColumnSpec = Annotated[
    Union[
        SequenceColumn,
        FakerColumn,
        ChoiceColumn,
        NumberColumn,
        DateColumn,
        FormatColumn,
        ReferenceColumn,
        DeriveColumn,
        RankColumn,
        ShareColumn,
        AggregateColumn,
    ],
    Field(discriminator="kind"),
]


class UniqueConstraint(_Strict):
    """The combination of ``columns`` must not repeat across rows (nulls aside).

    Over reference columns (``[home_team_id, away_team_id]``, ``[course_id, student_id]``) it is met while
    parents are assigned (:class:`ReferenceColumn`); otherwise it is verified.

    YAML: ``{kind: unique, columns: [handle]}``.
    """

    kind: Literal["unique"]
    columns: list[str] = Field(min_length=1)


class RangeConstraint(_Strict):
    """Values of ``column`` must lie within ``[min, max]`` (inclusive; either bound may be left out).
    Date bounds are written as in ``date`` columns, absolute or relative to ``target_year``.

    YAML: ``{kind: range, column: age, min: 16, max: 40}``.
    """

    kind: Literal["range"]
    column: str
    min: Annotated[Num | str | None, BeforeValidator(_iso)] = None
    max: Annotated[Num | str | None, BeforeValidator(_iso)] = None

    @field_validator("min", "max")
    @classmethod
    def _date_bound(cls, v: float | str | None) -> float | str | None:
        return _date_form(v) if isinstance(v, str) else v


class MonotoneConstraint(_Strict):
    """The ``rank`` column orders rows by ``by``: rank 1 holds the largest value (descending)."""

    kind: Literal["monotone"]
    rank: str
    by: str
    within: str | None = None
    descending: bool = True


class CheckConstraint(_Strict):
    """A boolean expression every row must satisfy (``launch_date >= announced``).

    ``enforce`` says what happens to rows that break it:

    * ``verify`` (the default): the generated world is checked; any such row fails the build.
    * ``resample``: such rows are redrawn while the world is generated. The check's *redrawable*
      inputs are the ``faker``, ``choice``, ``number`` and ``date`` columns of this table it reads,
      directly or through derived columns (``derive``, ``format``, ``rank``, ``share``,
      ``aggregate``), except the primary key. ``sequence`` and ``reference`` columns are never redrawn,
      so row counts and parent assignment stay; values of ``parent.column`` are read, never redrawn.
      A check that reads a reference column of this table and something else, and nothing redrawable
      (``home_team_id != away_team_id``), reassigns parents instead: see :class:`ReferenceColumn` (roles).
      Only the failing rows' redrawable inputs are redrawn, from the same generators (a ``unique``
      column keeps unique: a redrawn value is none of the kept rows'), and every column derived from
      them is recomputed, in parent tables too. Redraws repeat up to
      :data:`~worldforge.spec.limits.MAX_RESAMPLE_TRIES` times, from streams of their own, so the same
      seed still gives the same tables (and a spec without resample checks the tables it always gave);
      rows that still break the check then fail generation with a
      :class:`~worldforge.errors.GenerationError`. A resample check that reads no redrawable column is a
      spec error.

    YAML: ``{kind: check, expr: "launch_date >= announced", enforce: resample}``.
    """

    kind: Literal["check"]
    expr: str
    description: str | None = None
    enforce: Literal["verify", "resample"] = Field("verify", exclude_if=lambda v: v == "verify")
    """``verify`` (check the generated world) or ``resample`` (redraw failing rows while generating).
    Left out of dumps when ``verify``, so the hashes of specs written before it existed do not change."""

    @field_validator("expr")
    @classmethod
    def _parses(cls, v: str) -> str:
        return _check_expr(v)


class NotAfterAsOfConstraint(_Strict):
    """Dates that must not lie after the world's ``as_of`` (no row refers to its future)."""

    kind: Literal["not_after_as_of"]
    columns: list[str] = Field(min_length=1)


ConstraintSpec = Annotated[
    Union[UniqueConstraint, RangeConstraint, MonotoneConstraint, CheckConstraint, NotAfterAsOfConstraint],
    Field(discriminator="kind"),
]


_NAME_PARTS = ("first_name", "last_name", "given_name", "family_name", "middle_name", "user_name", "nick_name")
"""Column name endings of a part of a name, which is no row's name (many rows share a first name)."""


class TableSpec(_Strict):
    """One table: its ``primary_key``, its ``columns`` by name (one generator ``kind`` each) and its ``constraints``.

    ``rows`` fixes the row count; a table without it needs a reference with a ``cardinality``, which then
    decides how many rows each parent gets. Column names match ``^[a-z][a-z0-9_]*$``.
    """

    primary_key: str
    rows: int | None = Field(None, gt=0, le=ROW_BUDGET[1])
    description: str | None = None
    label: str | None = Field(None, min_length=1, max_length=60)
    """What one row is, as a singular noun ("phone model"); derived from the table name when absent."""
    designation: str | None = Field(None, min_length=3, max_length=120)
    """How pages and tasks call a row of a table without a name column: a template over the row's
    columns and its parents' (``{rocket_id.name} launch of {launch_date}``, ``Launch {n} of
    {mission_id}``), used consistently on pages and in tasks. Placeholders:

    * ``{column}``: a column of the row (dates written ``12 March 2031``);
    * ``{reference}``: the label of the parent row a reference column points to (its name, or its own designation);
    * ``{reference.column}``: a column of that parent row;
    * ``{n}`` / ``{nth}``: the row's ordinal within its first parent (``3`` / ``3rd``), by event date, then key.

    Every other character is literal; a literal first letter is capitalised and a repeated designation gets
    `` (2)``, `` (3)`` ... so designations are unique per table. An unknown column is a
    :class:`~worldforge.errors.SpecError` when the spec loads. When absent, a table without a name column is
    called ``<parent label> <noun> of <event date>`` when parent and date tell nine rows in ten apart, else
    ``<Noun> <n> of <parent label>`` (:func:`worldforge.corpus.vocab.row_labels`)."""
    columns: dict[str, ColumnSpec] = Field(min_length=1, max_length=L.MAX_COLUMNS)
    constraints: list[ConstraintSpec] = Field(default_factory=list, max_length=L.MAX_COLUMNS)

    @field_validator("columns")
    @classmethod
    def _names(cls, v: dict[str, Any]) -> dict[str, Any]:
        for name in v:
            if not re.match(_IDENT, name):
                raise ValueError(f"column name {name!r} must match {_IDENT}")
        return v

    @property
    def references(self) -> dict[str, ReferenceColumn]:
        """Reference (foreign-key) columns of this table, by column name."""
        return {n: c for n, c in self.columns.items() if isinstance(c, ReferenceColumn)}

    @property
    def name_column(self) -> str:
        """The column that names a row: ``name``, else a ``*_name``/``handle``/``title``/``code`` column (never a part of
        a person's name: ``first_name``, ``last_name``, ``user_name`` repeat between rows), else the first format
        column, else the primary key (a nameless table: its rows are designated)."""
        cols = self.columns
        if "name" in cols:
            return "name"
        named = [c for c in cols if (c.endswith("_name") and not c.endswith(_NAME_PARTS)) or c in ("handle", "title", "code")]
        formats = [c for c, col in cols.items() if isinstance(col, FormatColumn)]
        # a candidate declared unique comes first: a street_name that repeats names no row where a unique code would
        unique = [c for c in named + formats if self._declared_unique(c)]
        if named and not self._declared_unique(named[0]) and unique:
            return unique[0]
        return (named or formats or [self.primary_key])[0]

    def _declared_unique(self, c: str) -> bool:
        """Column ``c`` holds distinct values by its declaration: ``unique: true``, a one-column ``unique`` constraint, or
        a format whose template counts over the whole table (``{n}`` and no ``counter_within``)."""
        col = self.columns[c]
        if getattr(col, "unique", False) or any(k.kind == "unique" and list(k.columns) == [c] for k in self.constraints):
            return True
        return isinstance(col, FormatColumn) and "{n" in col.template and not getattr(col, "counter_within", None)

    def reference_shape(self, name: str, ref: str) -> str:
        """The shape of reference ``ref`` of this table (named ``name``): ``hierarchy`` (to the table itself), ``role`` (one
        of two or more references to the same parent: a match's home and away team), ``junction`` (one of two or more
        references with a cardinality), else ``reference``; ``optional`` is added to a role's or a junction's shape
        (``role, optional``), or is the shape of a plain reference with a ``null_share``."""
        col = self.references[ref]
        if col.parent == name:
            return "hierarchy"
        refs = self.references
        shape = ("role" if sum(1 for c in refs.values() if c.parent == col.parent) > 1 else
                 "junction" if col.cardinality is not None and sum(1 for c in refs.values() if c.cardinality is not None) > 1 else "reference")
        if col.null_share:
            shape = "optional" if shape == "reference" else f"{shape}, optional"
        return shape

    @property
    def driving_reference(self) -> tuple[str, ReferenceColumn] | None:
        """The first reference with a cardinality: it decides how many rows each parent gets."""
        for name, col in self.references.items():
            if col.cardinality is not None:
                return name, col
        return None


class ScenarioSpec(_Strict):
    """A time-shifted copy of the world (see :mod:`worldforge.scenarios`).

    ``shift_years`` moves every date (and ``target_year``) by N years; ``as_of`` is the date
    the scenario is observed at (default: the world's ``as_of`` shifted by N years),
    absolute or relative to the shifted target year.
    """

    name: str = Field(pattern=_IDENT)
    description: str | None = None
    shift_years: int = Field(0, ge=-L.MAX_SHIFT_YEARS, le=L.MAX_SHIFT_YEARS)
    as_of: DateText | None = None

    @field_validator("as_of")
    @classmethod
    def _form(cls, v: str | None) -> str | None:
        return None if v is None else _date_form(v)

    @model_validator(mode="after")
    def _changes_something(self) -> "ScenarioSpec":
        if self.shift_years == 0 and self.as_of is None:
            raise ValueError("a scenario needs shift_years or as_of")
        return self


def _background_sentence(v: str) -> str:
    """One ``background`` sentence: text without digits (background never states a figure, so no world fact hides in it)."""
    if not v.strip():
        raise ValueError("a background sentence must not be empty")
    if any(ch.isdigit() for ch in v):
        raise ValueError(f"a background sentence may not contain digits (it must state no figure or date; write it in words "
                         f"or leave the figure out): {v[:80]!r}")
    return v.strip()


BackgroundSentence = Annotated[Text, AfterValidator(_background_sentence)]
"""A ``background`` entry of a spec: a non-empty sentence without digits."""


class WorldSpec(_Strict):
    """A whole world spec: the top level of a YAML file in ``world_specs/``.

    ``world`` names the world and its DuckDB file; ``seed`` and ``target_year`` drive generation; ``as_of``
    (default ``Y-12-31``) is the date the world is observed at; ``scenarios`` are time-shifted copies.
    The model checks each field; :func:`worldforge.spec.plan.validate_spec` checks the cross-references
    and the row budget (300–500 rows for every seed) and compiles the generation plan, raising
    :class:`~worldforge.errors.SpecError`. The loaders (:func:`~worldforge.spec.load.load_spec`,
    :func:`~worldforge.spec.load.spec_from_dict`) do both; the plan is kept on the (frozen) spec, so
    every later step reuses it instead of compiling it again.
    """

    _plan: Any = PrivateAttr(default=None)
    """The compiled :class:`~worldforge.spec.plan.Plan` (``None`` until :func:`~worldforge.spec.plan.validate_spec`)."""

    world: str = Field(pattern=_IDENT, description="world name; also the DuckDB file name")
    title: str | None = None
    description: str | None = None
    seed: int = Field(0, ge=-L.MAX_ABS_INT64, le=L.MAX_ABS_INT64)
    target_year: int = Field(ge=1900, le=2200)
    as_of: DateText = Field("Y-12-31", description="the date the world is observed at; as_of() in expressions")
    tables: dict[str, TableSpec] = Field(min_length=1, max_length=L.MAX_TABLES)
    scenarios: list[ScenarioSpec] = Field(default_factory=list)
    archetype: str | None = Field(None, pattern=_IDENT, description="the catalog archetype the spec was generated from (worldforge.catalog)")
    site: str | None = Field(None, pattern=_IDENT, description="the name the world's web sites are built from (default: world)")
    """``handsets_2031`` gives ``handsets-2031pedia.org``, "Handsetspedia", ``forum.handsets-2031.io``...: catalog worlds,
    whose names carry an index, read like the web with one."""
    background: list[BackgroundSentence] | None = Field(None, max_length=L.MAX_CHOICE_VALUES,
                                                        description="general-knowledge sentences about the topic, without digits")
    """Sentences of general knowledge about the world's topic that pages may carry in their background paragraphs,
    used first (:func:`worldforge.corpus.topic.spec_background`); each is a non-empty string without digits."""

    @field_validator("as_of")
    @classmethod
    def _as_of_form(cls, v: str) -> str:
        return _date_form(v)

    @field_validator("world")
    @classmethod
    def _not_a_store(cls, v: str) -> str:
        if v in RESERVED_WORLD_NAMES:
            raise ValueError(f"{v!r} names one of the warehouse's stores ({v}.duckdb); "
                             f"a world may not be called {', '.join(sorted(RESERVED_WORLD_NAMES))}")
        return v

    @field_validator("scenarios")
    @classmethod
    def _unique_scenarios(cls, v: list[ScenarioSpec]) -> list[ScenarioSpec]:
        names = [s.name for s in v]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"scenario names repeat: {dup}")
        return v

    @property
    def as_of_date(self):
        """``as_of`` resolved against ``target_year``."""
        return resolve_date(self.as_of, self.target_year)

    @field_validator("tables")
    @classmethod
    def _table_names(cls, v: dict[str, Any]) -> dict[str, Any]:
        for name in v:
            if not re.match(_IDENT, name) or name.startswith("_"):
                raise ValueError(f"table name {name!r} must match {_IDENT}")
        return v

    def __eq__(self, other: object) -> bool:
        """Specs are equal when their fields are (the compiled plan is a cache and does not count)."""
        if not isinstance(other, WorldSpec):
            return NotImplemented
        return type(self) is type(other) and self.__dict__ == other.__dict__

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> "WorldSpec":
        """A copy (pydantic's ``model_copy``); with ``update``, the copy's compiled plan is dropped,
        so :func:`~worldforge.spec.plan.validate_spec` compiles and checks the changed spec again."""
        copy = super().model_copy(update=update, deep=deep)
        if update:
            copy._plan = None
        return copy
