"""Cross-field validation of a world spec and its generation plan.

The plan is a topological order over *(table, column)* nodes: a column is generated after
every column it reads (expression inputs, template fields, rank/share inputs, the child
columns an aggregate reads, the parent key a reference points at). Row counts are fixed
first, parents before children. A cycle, an unknown name or a row budget outside
:data:`~worldforge.spec.models.ROW_BUDGET` is a :class:`~worldforge.errors.SpecError`
naming the field path.
"""

from __future__ import annotations

import math
import re
import string
from dataclasses import dataclass
from dataclasses import field as dc_field
from functools import lru_cache

from worldforge.errors import ExpressionError, SpecError
from worldforge.spec import expr as E
from worldforge.spec import models as M
from worldforge.spec.dates import resolve_date
from worldforge.spec.limits import MAX_FORMAT_WIDTH
from worldforge.spec.models import ROW_BUDGET, TableSpec, WorldSpec

# Faker attributes that are not value providers (or that produce files/binary blobs).
_FAKER_DENY = {
    "seed", "seed_instance", "seed_locale", "add_provider", "get_providers", "provider",
    "set_formatter", "get_formatter", "format", "parse", "set_arguments", "get_arguments",
    "del_arguments", "binary", "image", "zip", "tar", "json", "json_bytes", "csv", "tsv",
    "psv", "dsv", "xml", "fixed_width", "enum", "pystruct", "pyobject", "pyiterable",
    "pylist", "pyset", "pytuple", "pydict", "random", "generator_attrs", "factories",
    "locales", "weights", "unique", "optional",
}


@lru_cache(maxsize=16)
def _faker_providers(locale: str) -> frozenset[str]:
    from faker import Faker

    fake = Faker(locale)
    names: set[str] = set()
    for provider in fake.get_providers():
        names |= {n for n in dir(provider) if not n.startswith("_") and callable(getattr(provider, n, None))}
    return frozenset(names - _FAKER_DENY)


def template_fields(template: str) -> list[tuple[str, str]]:
    """``(field, format_spec)`` pairs of a ``format`` template; ``n`` is the row counter.

    Raises:
        ValueError: on a malformed template, positional fields or conversions (``!r``).
    """
    out = []
    for _, field, spec, conversion in string.Formatter().parse(template):
        if field is None:
            continue
        if field == "" or field.isdigit():
            raise ValueError(f"template {template!r} has a positional field; name a column, 'n' or 'parent.column'")
        if conversion:
            raise ValueError(f"template {template!r}: conversions like '!{conversion}' are not allowed")
        if "[" in field or field.count(".") > 1:
            raise ValueError(f"template field {field!r}: use 'column', 'n' or 'parent.column'")
        if spec and "{" in spec:
            raise ValueError(f"template field {field!r}: nested fields in a format spec are not allowed")
        if any(len(w) > 4 or int(w) > MAX_FORMAT_WIDTH for w in re.findall(r"\d+", spec or "")):
            raise ValueError(f"template field {{{field}:{spec}}}: widths and precisions are at most {MAX_FORMAT_WIDTH}")
        out.append((field, spec or ""))
    return out


@dataclass(frozen=True)
class Plan:
    """How to generate a world.

    Attributes:
        table_order: tables with parents before children (also the DuckDB creation order).
        column_order: ``(table, column)`` in dependency order.
        row_range: per table, the ``(min, max)`` rows any seed can give.
        decimals: per ``(table, column)`` of float values, the decimals they are written and stored at
            (:func:`column_decimals`); ``None``: full precision (an input of unknown precision).
    """

    table_order: tuple[str, ...]
    column_order: tuple[tuple[str, str], ...]
    row_range: dict[str, tuple[int, int]]
    decimals: dict[tuple[str, str], int | None] = dc_field(default_factory=dict)

    @property
    def total_rows(self) -> tuple[int, int]:
        """``(min, max)`` rows of the whole world over any seed: the sums of :attr:`row_range`."""
        return (sum(lo for lo, _ in self.row_range.values()), sum(hi for _, hi in self.row_range.values()))


def _parent_of_ref(table: TableSpec, parent: str) -> str | None:
    """The reference column of ``table`` that points at ``parent`` (first one)."""
    for name, col in table.references.items():
        if col.parent == parent:
            return name
    return None


def column_inputs(spec: WorldSpec, tname: str, cname: str) -> tuple[list[tuple[str, str]], list[str]]:
    """The ``(table, column)`` nodes a column reads, and problems found on the way."""

    table = spec.tables[tname]
    col = table.columns[cname]
    deps: list[tuple[str, str]] = []
    problems: list[str] = []

    def local(name: str, what: str) -> None:
        if "." in name:
            parent, pcol = name.split(".", 1)
            ref = _parent_of_ref(table, parent)
            if parent == tname and ref is not None:
                problems.append(f"{what} {name!r}: '{tname}.column' would read through the self-reference "
                                f"'{ref}', which is not supported (a row's parent is a row of its own table); "
                                f"aggregate over it instead")
            elif ref is None:
                problems.append(f"{what} {name!r}: table '{tname}' has no reference column to '{parent}'")
            elif parent not in spec.tables:  # the reference column names a table that does not exist
                problems.append(f"{what} {name!r}: no table '{parent}'")
            elif pcol not in spec.tables[parent].columns:
                problems.append(f"{what} {name!r}: table '{parent}' has no column '{pcol}'")
            else:
                deps.extend([(tname, ref), (parent, pcol)])
        elif name not in table.columns:
            problems.append(f"{what} {name!r}: table '{tname}' has no such column")
        elif name == cname:
            problems.append(f"{what} {name!r}: a column cannot read itself")
        else:
            deps.append((tname, name))

    if isinstance(col, M.ReferenceColumn):
        if col.parent not in spec.tables:
            problems.append(f"parent {col.parent!r}: no such table")
        elif col.parent == tname:
            if cname == table.primary_key:
                problems.append("the primary key cannot reference its own table")
            elif col.cardinality is not None:
                problems.append("a reference to its own table takes no cardinality; bound its tree with "
                                "hierarchy: {max_children: K, max_depth: D}")
            else:
                deps.append((tname, table.primary_key))
        else:
            if col.hierarchy is not None:
                problems.append(f"hierarchy: only a reference to its own table ('{tname}') draws a tree; "
                                f"this one points at '{col.parent}'")
            deps.append((col.parent, spec.tables[col.parent].primary_key))
    elif isinstance(col, M.DeriveColumn):
        for name in sorted(E.columns_of(E.parse(col.expr))):
            local(name, "expr reads")
    elif isinstance(col, M.FormatColumn):
        try:
            fields = template_fields(col.template)
        except ValueError as exc:
            problems.append(str(exc))
            fields = []
        for field, fmt in fields:
            if field == "n":
                if fmt:
                    try:
                        format(1, fmt)
                    except ValueError:
                        problems.append(f"template: {{n:{fmt}}} is not a valid integer format")
                continue
            local(field, "template field")
            ref = field if field in table.references else _parent_of_ref(table, field.split(".", 1)[0]) if "." in field else None
            if ref is not None and (table.references[ref].null_share or table.references[ref].parent == tname):
                problems.append(f"template field {field!r}: '{ref}' is empty for some rows (an optional reference or a "
                                f"hierarchy's roots), so their names would read 'None'; name rows by a column every row has")
        if col.counter_within is not None:
            local(col.counter_within, "counter_within")
    elif isinstance(col, (M.RankColumn, M.ShareColumn)):
        local(col.of, "of")
        if col.within is not None:
            local(col.within, "within")
    elif isinstance(col, M.AggregateColumn):
        child = spec.tables.get(col.child)
        if child is None:
            problems.append(f"child {col.child!r}: no such table")
        else:
            via = col.via or _parent_of_ref(child, tname)
            if via is None or via not in child.references or child.references[via].parent != tname:
                problems.append(f"child {col.child!r} has no reference column to '{tname}'" + (f" named {via!r}" if col.via else ""))
            else:
                deps.append((col.child, via))
            if col.of is not None:
                if col.child == tname and col.of == cname:
                    problems.append(f"of {col.of!r}: an aggregate cannot aggregate itself")
                elif col.of not in child.columns:
                    problems.append(f"of {col.of!r}: table '{col.child}' has no such column")
                else:
                    deps.append((col.child, col.of))
    elif isinstance(col, M.FakerColumn):
        try:
            providers = _faker_providers(col.locale)
        except AttributeError:
            problems.append(f"locale {col.locale!r} is not a Faker locale")
        else:
            names = [col.provider] if col.provider else re.findall(r"\{\{\s*(\w+)\s*\}\}", col.template or "")
            if col.template is not None and not names:
                problems.append(f"template {col.template!r} names no Faker provider ('{{{{first_name}}}} {{{{last_name}}}}')")
            for token in re.findall(r"\{\{(.*?)\}\}", col.template or "", flags=re.S):
                if not re.fullmatch(r"\s*\w+\s*", token):  # Faker would leave it in the text: "{{random_element: [...]}}" on pages
                    problems.append(f"template token {{{{{token.strip()[:40]}}}}} is not a provider name: a template takes "
                                    "providers only ('{{last_name}} Farm'); draw from a list with a 'choice' column")
            for name in names:
                if name not in providers:
                    problems.append(f"provider {name!r} is not a Faker value provider for locale {col.locale}")
    return deps, problems


REDRAWABLE_KINDS = frozenset({"faker", "choice", "number", "date"})
"""Column kinds a ``check`` with ``enforce: resample`` may redraw (never the primary key)."""


def check_inputs(spec: WorldSpec, tname: str, expr: str) -> list[tuple[str, str]]:
    """The ``(table, column)`` nodes a check expression of ``tname`` reads (``parent.column`` -> the parent's node)."""
    table = spec.tables[tname]
    out = []
    for name in sorted(E.columns_of(E.parse(expr))):
        if "." in name:
            parent, pcol = name.split(".", 1)
            out.append((parent, pcol))
        else:
            out.append((tname, name))
    return [n for n in out if n[0] in spec.tables and n[1] in spec.tables[n[0]].columns and (n[0] == tname or n[0] in {r.parent for r in table.references.values()})]


def resample_columns(spec: WorldSpec, tname: str, expr: str) -> list[str]:
    """The columns of ``tname`` a check with ``enforce: resample`` redraws, in declared order.

    These are the check's inputs, followed through derived columns (in any table: a parent's
    aggregate of this table, a ``parent.column`` that aggregates this table), that are of this
    table, of a kind in :data:`REDRAWABLE_KINDS` and not its primary key.
    """

    seen: set[tuple[str, str]] = set()
    stack = check_inputs(spec, tname, expr)
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        col = spec.tables[node[0]].columns[node[1]]
        if col.kind in REDRAWABLE_KINDS or isinstance(col, (M.SequenceColumn, M.ReferenceColumn)):
            continue  # drawn, not derived: its inputs are not the check's
        deps, _ = column_inputs(spec, *node)
        stack.extend(d for d in deps if d[0] in spec.tables and d[1] in spec.tables[d[0]].columns)
    table = spec.tables[tname]
    return [
        c for c, col in table.columns.items()
        if (tname, c) in seen and col.kind in REDRAWABLE_KINDS and c != table.primary_key
    ]


def reference_targets(spec: WorldSpec, tname: str, expr: str) -> list[str]:
    """The reference columns of ``tname`` whose parents a check with ``enforce: resample`` reassigns (swaps between
    rows, :mod:`worldforge.synth.assign`) until it holds, in declared order: those it reads directly or through
    ``parent.column`` (the first reference to that parent), when it reads a reference directly, something else
    besides, and no column it can redraw (:func:`resample_columns`). A check that reads a redrawable column redraws it, as it always did."""
    table = spec.tables[tname]
    names = E.columns_of(E.parse(expr))
    if not any(n in table.references for n in names) or len(names) < 2 or resample_columns(spec, tname, expr):
        return []  # a swap keeps each parent's rows: a check of one reference alone holds or fails whatever the swaps
    refs = table.references
    read: set[str] = set()
    for name in names:
        if "." in name:
            ref = _parent_of_ref(table, name.split(".", 1)[0])
            if ref is not None and refs[ref].parent != tname:
                read.add(ref)
        elif name in refs:
            read.add(name)
    return [r for r in refs if r in read]


def unique_reference_targets(table: TableSpec, con: "M.UniqueConstraint") -> list[str]:
    """The reference columns of a ``unique`` constraint, in its order: swapped between rows until no combination repeats."""
    refs = table.references
    return [c for c in con.columns if c in refs and refs[c].parent is not None]


def _label_problems(spec: WorldSpec) -> list[tuple[str, str]]:
    """Two columns of one table given the same ``label``, or a label that is another column's name in words (``crew
    size`` on one column, a column ``crew_size``): pages, infoboxes and task headers could not tell them apart."""
    problems = []
    for tname, table in spec.tables.items():
        first: dict[str, str] = {}
        for cname, col in table.columns.items():
            if col.label is None:
                continue
            key = " ".join(col.label.lower().split())
            if key in first:
                problems.append((f"tables.{tname}.columns.{cname}.label", f"{col.label!r} is also the label of {first[key]!r}: "
                                 "pages could not tell the two columns apart (give each its own label)"))
            else:
                first[key] = cname
        for cname, col in table.columns.items():
            words = cname.replace("_", " ")
            if col.label is None and first.get(words, cname) != cname:
                problems.append((f"tables.{tname}.columns.{first[words]}.label", f"{words!r} is also how column {cname!r} reads: pages "
                                 f"could not tell the two columns apart (give {cname!r} a label of its own, or this column another)"))
    return problems


def _resample_problems(spec: WorldSpec) -> list[tuple[str, str]]:
    """A check with ``enforce: resample`` must read (directly or through derived columns) a column it can redraw,
    or read a reference column of its table (whose parents are then reassigned)."""
    problems = []
    for tname, table in spec.tables.items():
        for i, con in enumerate(table.constraints):
            if (con.kind == "check" and con.enforce == "resample" and not resample_columns(spec, tname, con.expr)
                    and not reference_targets(spec, tname, con.expr)):
                problems.append((
                    f"tables.{tname}.constraints.{i}.enforce",
                    f"resample: {con.expr!r} reads no column of '{tname}' that can be redrawn "
                    f"(a {', '.join(sorted(REDRAWABLE_KINDS))} column other than the primary key, read directly "
                    "or through derived columns) and no reference column whose parents can be reassigned; use enforce: verify",
                ))
    return problems


def junction_references(table: TableSpec) -> list[tuple[str, M.ReferenceColumn]]:
    """The references of a table that carry a cardinality, in declared order (the first drives the rows).
    Two or more make the table a junction whose every cardinality holds."""
    return [(n, r) for n, r in table.references.items() if r.cardinality is not None]


def _junction_range(tname: str, table: TableSpec, ranges: dict[str, tuple[int, int]], lo: int, hi: int,
                    problems: list[tuple[str, str]]) -> tuple[int, int]:
    """Narrow a junction's row range ``(lo, hi)`` (from its driving reference) to what every other cardinality
    reference can take, for every seed; a conflict is one problem naming the bounds and by how much."""
    refs = junction_references(table)
    a_name, a = refs[0]
    for b_name, b in refs[1:]:
        assert a.cardinality is not None and b.cardinality is not None
        blo, bhi = ranges.get(b.parent, (0, 0))
        need_lo, take_hi = blo * b.cardinality.min, bhi * b.cardinality.max  # B's totals over its parents
        take_lo = blo * b.cardinality.max  # the least B can take, for every seed
        need_hi = bhi * b.cardinality.min  # the most B needs, for every seed
        path = f"tables.{tname}.columns.{b_name}.cardinality"
        what = f"{b.cardinality.min}–{b.cardinality.max} per '{b.parent}' row"
        if table.rows is not None:
            if need_hi > table.rows:
                problems.append((path, f"{what} needs at least {bhi}×{b.cardinality.min} = {need_hi} '{tname}' rows, "
                                       f"but rows is {table.rows}: {need_hi - table.rows} too few"))
            elif take_lo < table.rows:
                problems.append((path, f"{what} takes at most {blo}×{b.cardinality.max} = {take_lo} '{tname}' rows, "
                                       f"but rows is {table.rows}: {table.rows - take_lo} too many"))
            continue
        alo, ahi = ranges.get(a.parent, (0, 0))
        a_need = ahi * a.cardinality.min  # the most the driving side may need
        a_take = alo * a.cardinality.max  # the least the driving side may take
        if a_need > take_lo:
            problems.append((path, f"cannot hold with {a_name} ({a.cardinality.min}–{a.cardinality.max} per '{a.parent}' row): "
                                   f"{ahi} '{a.parent}' rows need at least {ahi}×{a.cardinality.min} = {a_need} '{tname}' rows, "
                                   f"but {blo} '{b.parent}' rows take at most {blo}×{b.cardinality.max} = {take_lo} ({what}): "
                                   f"{a_need - take_lo} short"))
        elif need_hi > a_take:
            problems.append((path, f"cannot hold with {a_name} ({a.cardinality.min}–{a.cardinality.max} per '{a.parent}' row): "
                                   f"{bhi} '{b.parent}' rows need at least {bhi}×{b.cardinality.min} = {need_hi} '{tname}' rows "
                                   f"({what}), but {alo} '{a.parent}' rows take at most {alo}×{a.cardinality.max} = {a_take}: "
                                   f"{need_hi - a_take} short"))
        lo, hi = max(lo, need_lo), min(hi, take_hi)
    return lo, max(lo, hi)


def hierarchy_roots(ref: M.ReferenceColumn, rows: int) -> int:
    """How many roots (rows without a parent) a self-reference's tree of ``rows`` rows has."""
    if ref.hierarchy is not None and ref.hierarchy.roots is not None:
        return ref.hierarchy.roots
    if ref.null_share:
        return max(1, round(ref.null_share * rows))
    return 1


def _hierarchy_problems(spec: WorldSpec, ranges: dict[str, tuple[int, int]]) -> list[tuple[str, str]]:
    """A self-reference's tree must fit its table's rows for every seed: at least its roots, at most what the bounds hold."""
    problems = []
    for tname, table in spec.tables.items():
        lo, hi = ranges.get(tname, (0, 0))
        for rname, ref in table.references.items():
            if ref.parent != tname:
                continue
            path = f"tables.{tname}.columns.{rname}.hierarchy"
            roots = hierarchy_roots(ref, lo)
            if roots > lo:
                problems.append((path, f"{roots} roots, but '{tname}' may have only {lo} rows"))
            h = ref.hierarchy or M.Hierarchy()
            for n in sorted({lo, hi}):
                cap = h.capacity(hierarchy_roots(ref, n))
                if cap < n:
                    problems.append((path, f"at most {cap} rows fit {hierarchy_roots(ref, n)} root(s) with max_children "
                                           f"{h.max_children} and max_depth {h.max_depth}, but '{tname}' may have {n} rows: "
                                           f"{n - cap} too many"))
                    break
    return problems


def _unique_choice_problems(spec: WorldSpec, ranges: dict[str, tuple[int, int]]) -> list[tuple[str, str]]:
    """A ``unique`` choice needs a value for every row the table may have, for every seed (its most rows)."""
    problems = []
    for tname, table in spec.tables.items():
        hi = ranges.get(tname, (0, 0))[1]
        for cname, col in table.columns.items():
            if isinstance(col, M.ChoiceColumn) and col.unique and len(col.values) < hi:
                problems.append((f"tables.{tname}.columns.{cname}", f"a unique choice of {len(col.values)} values, but '{tname}' "
                                 f"may have {hi} rows: give {hi - len(col.values)} more values or drop 'unique'"))
    return problems


def _row_ranges(spec: WorldSpec, order: list[str], problems: list[tuple[str, str]]) -> dict[str, tuple[int, int]]:
    ranges: dict[str, tuple[int, int]] = {}
    for tname in order:
        table = spec.tables[tname]
        driving = table.driving_reference
        if driving is None:
            if table.rows is None:
                problems.append((f"tables.{tname}.rows", "required: give 'rows' or a reference column with a cardinality"))
                ranges[tname] = (0, 0)
            else:
                ranges[tname] = (table.rows, table.rows)
            continue
        ref_name, ref = driving
        assert ref.cardinality is not None
        if ref.parent == tname:  # refused by column_inputs: a self-reference takes no cardinality
            ranges[tname] = (table.rows or 0, table.rows or 0)
            continue
        plo, phi = ranges.get(ref.parent, (0, 0))
        card = ref.cardinality
        junction = len(junction_references(table)) > 1
        if table.rows is None:
            ranges[tname] = (plo * card.min, phi * card.max)
            if junction:
                ranges[tname] = _junction_range(tname, table, ranges, *ranges[tname], problems)
        else:
            if junction:
                _junction_range(tname, table, ranges, table.rows, table.rows, problems)
            if not (phi * card.min <= table.rows <= plo * card.max):
                problems.append((
                    f"tables.{tname}.rows",
                    f"{table.rows} rows cannot be spread over {plo}–{phi} '{ref.parent}' rows "
                    f"with {card.min}–{card.max} each (columns.{ref_name}.cardinality)",
                ))
            ranges[tname] = (table.rows, table.rows)
    return ranges


def _toposort(nodes: list, edges: dict) -> tuple[list, list | None]:
    """Kahn's algorithm, stable in declaration order. Returns (order, cycle or None)."""
    indeg = {n: 0 for n in nodes}
    users: dict = {n: [] for n in nodes}
    for n in nodes:
        for d in edges.get(n, ()):
            if d in indeg and d != n:
                indeg[n] += 1
                users[d].append(n)
    ready = [n for n in nodes if indeg[n] == 0]
    order = []
    while ready:
        n = ready.pop(0)
        order.append(n)
        for u in users[n]:
            indeg[u] -= 1
            if indeg[u] == 0:
                ready.append(u)
    if len(order) == len(nodes):
        return order, None
    remaining = [n for n in nodes if n not in set(order)]
    # walk one cycle for the message
    start = remaining[0]
    seen, path, cur = set(), [], start
    while cur not in seen:
        seen.add(cur)
        path.append(cur)
        cur = next(d for d in edges.get(cur, ()) if d in remaining and d != cur)
    return order, path[path.index(cur):] + [cur]


def build_plan(spec: WorldSpec) -> tuple[Plan | None, list[tuple[str, str]]]:
    """Validate the cross-references of a spec and compute its generation plan.

    Returns:
        ``(plan, problems)``; ``plan`` is None when problems make it impossible.
    """
    problems: list[tuple[str, str]] = []
    tables = list(spec.tables)

    # table order: parents (reference targets) first
    tedges: dict[str, list[str]] = {}
    for tname, table in spec.tables.items():
        if table.primary_key not in table.columns:
            problems.append((f"tables.{tname}.primary_key", f"{table.primary_key!r} is not a column of '{tname}'"))
        tedges[tname] = [c.parent for c in table.references.values() if c.parent in spec.tables and c.parent != tname]
    torder, tcycle = _toposort(tables, tedges)
    if tcycle:
        problems.append(("tables", "reference cycle: " + " -> ".join(tcycle)))
        return None, problems

    # column dependency graph
    nodes: list[tuple[str, str]] = []
    cedges: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for tname in torder:
        for cname in spec.tables[tname].columns:
            deps, probs = column_inputs(spec, tname, cname)
            for p in probs:
                problems.append((f"tables.{tname}.columns.{cname}", p))
            nodes.append((tname, cname))
            cedges[(tname, cname)] = deps

    for tname, table in spec.tables.items():
        for i, con in enumerate(table.constraints):
            path = f"tables.{tname}.constraints.{i}"
            names: list[str] = []
            if con.kind == "unique":
                names = list(con.columns)
            elif con.kind == "range":
                names = [con.column]
            elif con.kind == "monotone":
                names = [con.rank, con.by] + ([con.within] if con.within else [])
            elif con.kind == "check":
                names = sorted(E.columns_of(E.parse(con.expr)))
            elif con.kind == "not_after_as_of":
                names = list(con.columns)
            for n in names:
                if "." in n:
                    parent = n.split(".", 1)[0]
                    if parent == tname:
                        problems.append((path, f"{n!r}: '{tname}.column' would read through a self-reference, which is not supported"))
                    elif _parent_of_ref(table, parent) is None or parent not in spec.tables or n.split(".", 1)[1] not in spec.tables[parent].columns:
                        problems.append((path, f"{n!r} is not reachable from table '{tname}'"))
                elif n not in table.columns:
                    problems.append((path, f"{n!r} is not a column of '{tname}'"))

    for tname in spec.tables:
        problems.extend((f"tables.{tname}.designation", p) for p in designation_problems(spec, tname))

    for tname in spec.tables:
        problems.extend((f"tables.{tname}.designation", p) for p in designation_problems(spec, tname))

    ranges = _row_ranges(spec, torder, problems)
    problems.extend(_hierarchy_problems(spec, ranges))
    problems.extend(_unique_choice_problems(spec, ranges))
    if problems:
        return None, problems

    corder, ccycle = _toposort(nodes, cedges)
    if ccycle:
        problems.append(("tables", "column dependency cycle: " + " -> ".join(f"{t}.{c}" for t, c in ccycle)))
        return None, problems

    types, type_problems = column_types(spec, corder)
    problems.extend(type_problems)
    problems.extend(_date_problems(spec))
    if not problems:
        problems.extend(_as_of_problems(spec))
    problems.extend(_resample_problems(spec))
    problems.extend(_label_problems(spec))
    if not any(not isinstance(c, (M.SequenceColumn, M.ReferenceColumn)) and n != t.name_column
               for t in spec.tables.values() for n, c in t.columns.items()):
        problems.append(("tables", "a world needs at least one column to say something about its rows (a number, date, choice, "
                                   "place ...): every column of every table is a key, a reference or the row's name"))
    if problems:
        return None, problems

    plan = Plan(tuple(torder), tuple(corder), ranges, column_decimals(spec, corder, types))
    lo, hi = plan.total_rows

    if lo < ROW_BUDGET[0] or hi > ROW_BUDGET[1]:
        detail = ", ".join(f"{t}: {a}" + (f"–{b}" if b != a else "") for t, (a, b) in ranges.items())
        problems.append((
            "tables",
            f"a world must have {ROW_BUDGET[0]}–{ROW_BUDGET[1]} rows in total for every seed; "
            f"this spec gives {lo}–{hi} ({detail})",
        ))
        return None, problems
    return plan, problems


_DESIGNATION_FIELD = re.compile(r"\{([^{}]*)\}")


def designation_fields(template: str) -> list[str]:
    """The placeholders of a designation template, in order (``{rocket_id}``, ``{rocket_id.name}``, ``{launch_date}``, ``{n}``)."""
    return _DESIGNATION_FIELD.findall(template)


def designation_problems(spec: WorldSpec, table: str) -> list[str]:
    """Why a table's designation template does not fit the spec (empty: it does)."""
    t = spec.tables[table]
    if t.designation is None:
        return []
    out = []
    fields = designation_fields(t.designation)
    if not fields:
        out.append(f"designation {t.designation!r} names no column: give at least one {{column}}, {{reference.column}} or {{n}}")
    for f in fields:
        if f in ("n", "nth"):
            continue
        if "." in f:
            ref, pcol = f.split(".", 1)
            col = t.columns.get(ref)
            if not getattr(col, "kind", None) == "reference":
                out.append(f"designation field {{{f}}}: {ref!r} is not a reference column of '{table}'")
            elif col.parent in spec.tables and pcol not in spec.tables[col.parent].columns:
                out.append(f"designation field {{{f}}}: {pcol!r} is not a column of '{col.parent}'")
        elif f not in t.columns:
            out.append(f"designation field {{{f}}} is not a column of '{table}' (columns: {', '.join(t.columns)})")
        elif t.columns[f].compose_only:
            out.append(f"designation field {{{f}}} is a compose-only column")
    return out


def validate_spec(spec: WorldSpec) -> Plan:
    """The spec's generation plan, once its cross-references and row budget are checked.

    The plan is compiled once per spec object and kept on it (``WorldSpec._plan``; specs are
    frozen, and ``model_copy(update=...)`` drops it), so a world's later steps reuse it.

    Raises:
        SpecError: a cross-reference, type or row-budget problem (source ``<spec>``).
    """
    if spec._plan is not None:
        return spec._plan
    plan, problems = build_plan(spec)
    if problems or plan is None:
        raise SpecError("<spec>", problems)
    spec._plan = plan
    return plan


_NO_CAST = {("str", "bool"), ("str", "date"), ("date", "bool"), ("bool", "date")}
"""(expression type, derive dtype) pairs polars cannot cast."""


def _choice_type(values: list) -> str:
    kinds = {type(v) for v in values}
    if kinds == {bool}:
        return "bool"
    if kinds <= {int}:
        return "int"
    if kinds <= {int, float}:
        return "float"
    return "str" if kinds == {str} else "any"


def column_types(spec: WorldSpec, column_order) -> tuple[dict[tuple[str, str], str], list[tuple[str, str]]]:
    """The value type of every column (one of :data:`worldforge.spec.expr.TYPES`), and type problems.

    Columns are typed in ``column_order`` (dependency order), so a derive column knows the types
    of the columns its expression reads. Problems are ``(field_path, message)``: an expression
    that mixes types, a check that is not boolean, a rank/share/aggregate of a column of the wrong
    type, a range bound of the wrong type for its column, a ``not_after_as_of`` column that holds
    no dates.
    """

    types: dict[tuple[str, str], str] = {}
    problems: list[tuple[str, str]] = []

    def lookup(tname: str) -> dict[str, str]:
        table = spec.tables[tname]
        out = {c: types.get((tname, c), "any") for c in table.columns}
        for ref in table.references.values():
            if ref.parent in spec.tables:
                for pc in spec.tables[ref.parent].columns:
                    out.setdefault(f"{ref.parent}.{pc}", types.get((ref.parent, pc), "any"))
        return out

    for tname, cname in column_order:
        col = spec.tables[tname].columns[cname]
        path = f"tables.{tname}.columns.{cname}"
        t = "any"
        try:
            if isinstance(col, (M.SequenceColumn, M.RankColumn)):
                t = "int"
            elif isinstance(col, M.ChoiceColumn):
                t = _choice_type(col.values)
            elif isinstance(col, M.NumberColumn):
                t = col.dtype
            elif isinstance(col, M.DateColumn):
                t = "date"
            elif isinstance(col, M.FormatColumn):
                t = "str"
            elif isinstance(col, M.ShareColumn):
                t = "float"
            elif isinstance(col, M.ReferenceColumn):
                t = types.get((col.parent, spec.tables[col.parent].primary_key), "any")
            elif isinstance(col, M.DeriveColumn):
                t = E.infer_type(E.parse(col.expr), lookup(tname), col.expr)
                if col.dtype is not None:
                    if (t, col.dtype) in _NO_CAST:
                        raise ExpressionError(f"expr {col.expr!r} gives {t} values, which cannot be cast to dtype {col.dtype}")
                    t = col.dtype
                elif t == "null":
                    raise ExpressionError(f"expr {col.expr!r} is always null: give a dtype")
            elif isinstance(col, M.AggregateColumn) and col.of is not None:
                of_t = types.get((col.child, col.of), "any")
                if col.fn == "count":
                    t = "int"
                elif col.fn in ("sum", "mean") and of_t not in ("int", "float", "any"):
                    raise ExpressionError(f"fn '{col.fn}' needs a numeric column, but {col.child}.{col.of} holds {of_t} values")
                elif col.fn in ("min", "max") and of_t not in ("int", "float", "date", "any"):
                    raise ExpressionError(f"fn '{col.fn}' needs a numeric or date column, but {col.child}.{col.of} holds {of_t} values")
                else:
                    t = "float" if col.fn == "mean" or of_t == "any" else of_t
            elif isinstance(col, M.AggregateColumn):
                t = "int"
            if isinstance(col, M.RankColumn):
                of_t = types.get((tname, col.of), "any")
                if of_t not in ("int", "float", "date", "any"):
                    raise ExpressionError(f"of {col.of!r}: a rank needs a numeric or date column, not {of_t}")
            if isinstance(col, M.ShareColumn):
                of_t = types.get((tname, col.of), "any")
                if of_t not in ("int", "float", "any"):
                    raise ExpressionError(f"of {col.of!r}: a share needs a numeric column, not {of_t}")
        except ExpressionError as exc:
            problems.append((path, str(exc)))
            t = "any"
        types[(tname, cname)] = t

    for tname, table in spec.tables.items():
        local = lookup(tname)
        for i, con in enumerate(table.constraints):
            path = f"tables.{tname}.constraints.{i}"
            if isinstance(con, M.CheckConstraint):
                try:
                    t = E.infer_type(E.parse(con.expr), local, con.expr)
                except ExpressionError as exc:
                    problems.append((path, str(exc)))
                    continue
                if t not in ("bool", "any"):
                    problems.append((path, f"a check must be true or false, but {con.expr!r} gives {t} values (compare it: '... > 0')"))
            elif isinstance(con, M.RangeConstraint):
                ct = local.get(con.column, "any")
                for bound in (con.min, con.max):
                    if bound is None or ct == "any":
                        continue
                    if isinstance(bound, str) and ct != "date":
                        problems.append((path, f"date bound {bound!r} for '{con.column}', which holds {ct} values"))
                    elif not isinstance(bound, str) and ct not in ("int", "float"):
                        problems.append((path, f"number bound {bound!r} for '{con.column}', which holds {ct} values"))
            elif isinstance(con, M.NotAfterAsOfConstraint):
                for c in con.columns:
                    ct = local.get(c, "any")
                    if ct not in ("date", "any"):
                        problems.append((path, f"'{c}' holds {ct} values, not dates"))
    return types, problems


MAX_DECIMALS = 12
"""The most decimals a derived precision takes (what ``decimals`` fields allow)."""

MAX_BOUND_DECIMALS = 6
"""The most decimals a float ``number`` column takes from how its bounds are written (a bound written to 14 decimals
is a computed value, not a precision)."""

MEAN_EXTRA_DECIMALS = 2
"""Decimals a mean (an ``aggregate`` with ``fn: mean``) or a quotient (``/`` in a ``derive``) keeps beyond its inputs':
the mean of readings written to one decimal is stored and written to three."""


def literal_decimals(v: float | int) -> int:
    """The decimals a number is written with at its shortest (``2.25`` → 2, ``100.0`` and ``7`` → 0)."""
    if isinstance(v, bool) or isinstance(v, int):
        return 0
    text = repr(float(v))
    if "e" in text or "E" in text:  # 1e-05, 1e+16: positional digits
        mantissa, exp = text.lower().split("e")
        frac = mantissa.split(".")[1].rstrip("0") if "." in mantissa else ""
        return min(MAX_DECIMALS, max(0, len(frac) - int(exp)))
    return len(text.split(".")[1].rstrip("0")) if "." in text else 0


DEFAULT_NUMBER_DECIMALS = 2
"""The decimals of a float ``number`` without ``decimals`` (more when its bounds or parameters are written with more)."""


def number_decimals(col: M.NumberColumn) -> int:
    """The decimals a float ``number`` column without ``decimals`` is drawn to: :data:`DEFAULT_NUMBER_DECIMALS`, or
    as many as its bounds ``min`` and ``max`` are written with when more (``max: 0.005`` → 3), at most
    :data:`MAX_BOUND_DECIMALS`. A
    distribution's ``mean`` or ``mode`` says nothing of precision (``mean: 66.66666666666667`` is a parameter)."""
    given = [literal_decimals(v) for v in (col.min, col.max) if v is not None]
    return min(MAX_BOUND_DECIMALS, max([DEFAULT_NUMBER_DECIMALS, *given]))


def _expr_decimals(node: E.Node, known: dict[str, int | None]) -> int | None:
    """The decimals an expression's number values need so that float arithmetic leaves no noise in them
    (``0.1 * 3`` is 0.30000000000000004, stored and written 0.3); ``None``: not bounded (an input of full precision)."""
    def both(a: int | None, b: int | None, f) -> int | None:
        return None if a is None or b is None else f(a, b)

    if isinstance(node, E.Literal):
        v = node.value
        return literal_decimals(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0
    if isinstance(node, E.Column):
        return known.get(node.name)
    if isinstance(node, E.Unary):
        return _expr_decimals(node.operand, known) if node.op == "-" else 0
    if isinstance(node, E.Binary):
        if node.op not in ("+", "-", "*", "/", "%"):
            return 0
        dl, dr = _expr_decimals(node.left, known), _expr_decimals(node.right, known)
        if node.op in ("+", "-", "%"):
            return both(dl, dr, max)
        if node.op == "*":
            return both(dl, dr, lambda a, b: a + b)
        if isinstance(node.right, E.Literal) and isinstance(node.right.value, (int, float)) and not isinstance(node.right.value, bool) \
                and node.right.value > 0 and float(node.right.value).is_integer() and str(int(node.right.value)).rstrip("0") == "1":
            return None if dl is None else dl + len(str(int(node.right.value))) - 1  # x / 100: exact shift of the point
        return both(dl, dr, lambda a, b: max(a, b) + MEAN_EXTRA_DECIMALS)
    assert isinstance(node, E.Call)
    f, args = node.func, node.args
    if f == "round":
        n = args[1].value if len(args) == 2 and isinstance(args[1], E.Literal) and isinstance(args[1].value, int) else 0
        inner = _expr_decimals(args[0], known)
        return n if inner is None else min(n, inner)
    if f in ("abs", "float"):
        return _expr_decimals(args[0], known)
    if f in ("min", "max", "coalesce", "if"):
        ds = [_expr_decimals(a, known) for a in (args[1:] if f == "if" else args)]
        return None if any(d is None for d in ds) else max(ds, default=0)
    return 0  # floor, ceil, int, len, year, month, day, days_between; strings and dates have none


def column_decimals(spec: WorldSpec, column_order, types: dict[tuple[str, str], str]) -> dict[tuple[str, str], int | None]:
    """The decimals of every column of float values: declared (``decimals`` of ``number``, ``share`` and ``aggregate``)
    or derived from the columns they are computed from, so that stored values, and every page, task and answer
    that writes them, carry no float noise (``-4.859999999999999``).

    Derived: an ``aggregate``'s ``sum``, ``min`` and ``max`` keep their source's decimals, a ``mean`` two more; a
    ``derive`` follows its expression (``+``/``-``: the larger of its sides', ``*``: their sum, ``/``: two more than
    the larger, or the exact shift of a division by 10, 100 ...; ``round(x, n)``: n); a ``choice`` of floats its
    values' longest; a float ``number`` without ``decimals`` :func:`number_decimals` (two, or as many as its bounds are
    written with). ``None`` (full precision) only where an input's precision is not known (a ``faker`` value).
    Integer, date and text columns get 0 (they hold no float)."""
    out: dict[tuple[str, str], int | None] = {}

    def known(tname: str) -> dict[str, int | None]:
        table = spec.tables[tname]
        got: dict[str, int | None] = {c: out.get((tname, c), 0) for c in table.columns}
        for ref in table.references.values():
            if ref.parent in spec.tables and ref.parent != tname:
                for pc in spec.tables[ref.parent].columns:
                    got.setdefault(f"{ref.parent}.{pc}", out.get((ref.parent, pc), 0))
        return got

    def cap(d: int | None) -> int | None:
        return None if d is None else min(d, MAX_DECIMALS)

    for tname, cname in column_order:
        col = spec.tables[tname].columns[cname]
        t = types.get((tname, cname), "any")
        if t not in ("float", "any"):
            out[(tname, cname)] = 0
            continue
        d: int | None = None
        if isinstance(col, M.NumberColumn):
            d = col.decimals if col.decimals is not None else number_decimals(col)
        elif isinstance(col, M.ShareColumn):
            d = col.decimals
        elif isinstance(col, M.ChoiceColumn):
            d = max((literal_decimals(v) for v in col.values if isinstance(v, (int, float)) and not isinstance(v, bool)), default=0)
        elif isinstance(col, M.AggregateColumn):
            src = out.get((col.child, col.of)) if col.of else 0
            if col.decimals is not None:
                d = col.decimals
            elif col.fn == "count":
                d = 0
            elif src is not None:
                d = src + MEAN_EXTRA_DECIMALS if col.fn == "mean" else src
        elif isinstance(col, M.DeriveColumn) and t == "float":
            d = _expr_decimals(E.parse(col.expr), known(tname))
        out[(tname, cname)] = cap(d)
    return out


def round_to(value: object, decimals: int | None) -> object:
    """A float rounded to ``decimals`` (``-0.0`` written ``0.0``); anything else, and every value when ``decimals`` is
    ``None``, as it is."""
    if decimals is None or not isinstance(value, float) or not math.isfinite(value):
        return value
    return round(value, decimals) + 0.0


def _date_problems(spec: WorldSpec) -> list[tuple[str, str]]:
    """Every date the spec writes must exist at its target year and in every scenario (shifted)."""

    found: list[tuple[str, str]] = [("as_of", spec.as_of)]
    for tname, table in spec.tables.items():
        for cname, col in table.columns.items():
            if isinstance(col, M.DateColumn):
                found += [(f"tables.{tname}.columns.{cname}.start", col.start), (f"tables.{tname}.columns.{cname}.end", col.end)]
        for i, con in enumerate(table.constraints):
            if isinstance(con, M.RangeConstraint):
                found += [(f"tables.{tname}.constraints.{i}", b) for b in (con.min, con.max) if isinstance(b, str)]
    years = [(spec.target_year, 0, "")] + [(spec.target_year + s.shift_years, s.shift_years, f" in scenario '{s.name}'") for s in spec.scenarios]
    problems = []
    for path, text in found:
        for year, shift, where in years:
            try:
                d = resolve_date(text, year)
                d.replace(year=d.year + (0 if _RELATIVE.match(text) else shift), day=min(d.day, 28))
            except (ValueError, OverflowError):
                problems.append((path, f"date {text!r} does not exist{where} (years run from 1 to 9999)"))
                break
    return problems


def _as_of_problems(spec: WorldSpec) -> list[tuple[str, str]]:
    """A ``not_after_as_of`` date column whose window ends after the as-of date, the world's or a scenario's (its dates
    shifted, its as-of its own): some seed draws a date after it and the build fails, so the spec is refused."""
    from worldforge.spec.scenario import shift_year

    problems = []
    views = [(0, spec.as_of_date, "")]
    for s in spec.scenarios:
        year = spec.target_year + s.shift_years
        as_of = resolve_date(s.as_of, year) if s.as_of else shift_year(spec.as_of_date, s.shift_years)
        views.append((s.shift_years, as_of, f" of scenario '{s.name}'"))
    for tname, table in spec.tables.items():
        for i, con in enumerate(table.constraints):
            if not isinstance(con, M.NotAfterAsOfConstraint):
                continue
            for c in con.columns:
                col = table.columns.get(c)
                if not isinstance(col, M.DateColumn):
                    continue
                end = resolve_date(col.end, spec.target_year)
                for shift, as_of, where in views:
                    if shift_year(end, shift) > as_of:
                        problems.append((f"tables.{tname}.constraints.{i}",
                                         f"not_after_as_of: '{c}' may lie after the as-of date{where} ({as_of}): its window ends {shift_year(end, shift)}; "
                                         f"end the window by then or drop the constraint"))
                        break
    return problems


_RELATIVE = re.compile(r"^Y")
