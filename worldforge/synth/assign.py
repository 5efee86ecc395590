"""Which parent each row gets: junctions, hierarchies, optional references and rules between references.

A table's row counts come first (:meth:`~worldforge.synth.state.WorldState.count_rows`); the functions here then
decide parent rows where a plain uniform draw would not do, each from a seeded stream of its own, so a spec
that uses none of these shapes gets exactly the tables it always got:

* **junctions** (two or more references with a cardinality): :func:`fit_total` nudges the driving reference's
  per-parent counts, within their bounds, until the total is one every other cardinality can take;
  :func:`spread` gives each other reference per-parent counts within its bounds summing to that total, and
  :func:`match` pairs rows with those parents so that no (driving parent, other parent) pair repeats (a greedy
  Gale–Ryser fill: each driving parent, most rows first, takes the other parents with most room left);
* **hierarchies** (a reference to its own table): :func:`tree` draws a forest in which every non-root row's
  parent is an earlier row, within the depth and branching bounds;
* **optional references** (``null_share``): :func:`null_rows` picks the rows left without a parent;
* **rules between references** (a ``check`` with ``enforce: resample`` that reads reference columns, a ``unique``
  constraint over reference columns, a junction's distinct pairs): :func:`repair` gives a failing row a new parent
  drawn among those that keep every rule when its reference was drawn uniformly, and otherwise swaps the parent of
  one reference between two rows. A swap keeps each parent's number of children, so every cardinality still holds.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import polars as pl

from worldforge.errors import GenerationError
from worldforge.spec import expr as E
from worldforge.spec import models as M
from worldforge.spec.limits import MAX_RESAMPLE_TRIES
from worldforge.spec.plan import Plan, _parent_of_ref, reference_targets, unique_reference_targets

__all__ = ["fit_total", "match", "null_rows", "repair", "spread", "tree"]


def spread(total: int, n: int, lo: int, hi: int, rng: random.Random) -> list[int]:
    """``n`` counts within ``[lo, hi]`` summing to ``total`` (each starts at ``lo``; the rest goes one at a time to
    a random parent with room)."""
    counts = [lo] * n
    open_ = [i for i in range(n) if counts[i] < hi]
    for _ in range(total - lo * n):
        k = rng.randrange(len(open_))
        counts[open_[k]] += 1
        if counts[open_[k]] >= hi:
            open_.pop(k)
    return counts


def fit_total(counts: list[int], lo: int, hi: int, target: tuple[int, int], rng: random.Random) -> list[int]:
    """``counts`` (each within ``[lo, hi]``) moved one at a time, at random parents, until their sum lies in ``target``."""
    counts = list(counts)
    want_lo, want_hi = target
    total = sum(counts)
    while total < want_lo:
        open_ = [i for i, c in enumerate(counts) if c < hi]
        counts[open_[rng.randrange(len(open_))]] += 1
        total += 1
    while total > want_hi:
        open_ = [i for i, c in enumerate(counts) if c > lo]
        counts[open_[rng.randrange(len(open_))]] -= 1
        total -= 1
    return counts


def match(rows_of: list[int], counts: list[int], rng: random.Random) -> list[int]:
    """The other parent of each row, rows grouped by driving parent (``rows_of[a]`` rows for parent ``a``, in order),
    other parent ``b`` used ``counts[b]`` times; no driving parent gets one other parent twice when that is possible.

    Driving parents take their other parents most rows first (ties at random), each the parents with most room left
    (ties at random): the greedy fill of the Gale–Ryser theorem, which finds distinct pairs whenever they exist.
    """
    left = list(counts)
    ties = [rng.random() for _ in counts]
    order = sorted(range(len(rows_of)), key=lambda a: (-rows_of[a], rng.random()))
    picks: list[list[int]] = [[] for _ in rows_of]
    for a in order:
        ranked = sorted((b for b in range(len(left)) if left[b] > 0), key=lambda b: (-left[b], ties[b]))
        chosen = ranked[: rows_of[a]]
        while len(chosen) < rows_of[a]:  # distinct pairs are impossible here: repeat the parents with most room
            chosen.append(max((b for b in range(len(left)) if left[b] > chosen.count(b)), key=lambda b: left[b] - chosen.count(b)))
        for b in chosen:
            left[b] -= 1
        rng.shuffle(chosen)
        picks[a] = chosen
    return [b for a in range(len(rows_of)) for b in picks[a]]


def tree(n: int, roots: int, max_depth: int | None, max_children: int | None, rng: random.Random) -> list[int | None]:
    """The parent row of each of ``n`` rows (``None`` for a root): a forest with ``roots`` roots in which each
    non-root row's parent is an earlier row, drawn uniformly among those with room (depth below ``max_depth``,
    fewer than ``max_children`` children). Row 0 is a root; the other roots sit at random rows (earlier when the
    trees so far are full).

    Raises:
        ValueError: the rows do not fit the bounds (the spec's load-time check makes this a backstop).
    """
    later = sorted(rng.sample(range(1, n), roots - 1)) if roots > 1 else []
    pending = set(later)
    parent: list[int | None] = [None] * n
    depth = [0] * n
    kids = [0] * n
    open_: list[int] = []
    for i in range(n):
        root = i == 0 or i in pending
        if not root and not open_:
            if not pending:
                raise ValueError(f"{n} rows do not fit {roots} root(s) with max_depth {max_depth} and max_children {max_children}")
            pending.discard(max(pending))  # the trees so far are full: start the next one here
            root = True
        if root:
            pending.discard(i)
        else:
            k = rng.randrange(len(open_))
            p = open_[k]
            parent[i], depth[i] = p, depth[p] + 1
            kids[p] += 1
            if max_children is not None and kids[p] >= max_children:
                open_[k] = open_[-1]
                open_.pop()
        if max_depth is None or depth[i] < max_depth:
            open_.append(i)
    return parent


def null_rows(n: int, share: float, rng: random.Random) -> set[int]:
    """The ``round(share × n)`` rows (chosen at random) an optional reference leaves without a parent."""
    return set(rng.sample(range(n), round(share * n)))


# ---- rules between references --------------------------------------------------------------------


class _Rules:
    """The reference rules of one table: resample checks that read its references, unique sets of references."""

    def __init__(self, w, t: str):
        spec = w.spec
        table = spec.tables[t]
        self.w, self.t, self.table = w, t, table
        self.checks: list[tuple[int, M.CheckConstraint, list[str], set[str], pl.Expr]] = []
        self.uniques: list[list[str]] = []
        for i, con in enumerate(table.constraints):
            if isinstance(con, M.CheckConstraint) and con.enforce == "resample":
                refs = reference_targets(spec, t, con.expr)
                if refs:
                    node = E.parse(con.expr)
                    self.checks.append((i, con, refs, E.columns_of(node), E.to_polars(node, spec.target_year, spec.as_of_date)))
            elif isinstance(con, M.UniqueConstraint) and unique_reference_targets(table, con):
                self.uniques.append(list(con.columns))
        for pair in w.distinct_pairs.get(t, []):
            if list(pair) not in self.uniques:
                self.uniques.append(list(pair))

    def __bool__(self) -> bool:
        return bool(self.checks or self.uniques)

    def refs(self) -> list[str]:
        """Every reference the rules may swap, in declared order."""
        found = {r for _, _, refs, _, _ in self.checks for r in refs}
        found |= {c for cols in self.uniques for c in cols if c in self.table.references}
        return [r for r in self.table.references if r in found]

    def _frame(self, names: set[str], override: dict[str, list[Any]] | None = None) -> pl.DataFrame:
        w = self.w
        cols = []
        for name in sorted(names):
            values = w.read(self.t, name) if not override or name not in override else override[name]
            cols.append(pl.Series(E.column_ref(name), values, dtype=w.read_dtype(self.t, name)))
        return pl.DataFrame(cols, height=len(cols[0]) if cols else w.n[self.t])

    def failing(self) -> list[int]:
        """Rows that break a rule (a check false, null counting as holding; a unique combination repeated, nulls aside)."""
        bad: set[int] = set()
        for _, _, _, names, expr in self.checks:
            holds = self._frame(names).select(expr.alias("h")).get_column("h").cast(pl.Boolean)
            bad |= set(holds.not_().arg_true().to_list())
        for cols in self.uniques:
            keys = self._keys(cols)
            seen = Counter(k for k in keys if None not in k)
            bad |= {i for i, k in enumerate(keys) if None not in k and seen[k] > 1}
        return sorted(bad)

    def _keys(self, cols: list[str]) -> list[tuple]:
        return list(zip(*(self.w.values[self.t][c] for c in cols)))

    def _via(self, ref: str, name: str) -> bool:
        """Whether expression column ``name`` is read through reference ``ref`` (``parent.column``)."""
        return "." in name and _parent_of_ref(self.table, name.split(".", 1)[0]) == ref

    def free(self, ref: str) -> bool:
        """Whether ``ref``'s parents were drawn uniformly, row by row (no cardinality, tree or junction): then a row
        may take any parent, not only one swapped with another row."""
        return (self.t, ref) not in self.w.parent_index

    def redraws(self, i: int, ref: str) -> list[Any]:
        """Parent keys row ``i`` of a free reference could take, keeping every rule."""
        w, t = self.w, self.t
        col = self.table.references[ref]
        keys = w.values[col.parent][w.spec.tables[col.parent].primary_key]
        vi = w.values[t][ref][i]
        if vi is None:  # a null_share row stays without a parent
            return []
        ok = [k != vi for k in keys]
        for _, _, refs, names, expr in self.checks:
            if ref not in refs:
                continue
            override: dict[str, list[Any]] = {}
            for name in names:
                if name == ref:
                    override[name] = list(keys)
                elif self._via(ref, name):
                    pcol = name.split(".", 1)[1]
                    override[name] = list(w.values[col.parent][pcol])
                else:
                    override[name] = [w.read(t, name)[i]] * len(keys)
            holds = self._frame(names, override).select(expr.alias("h")).get_column("h").cast(pl.Boolean).fill_null(True).to_list()
            ok = [a and b for a, b in zip(ok, holds)]
        for cols in self.uniques:
            if ref not in cols:
                continue
            rows = self._keys(cols)
            pos = cols.index(ref)
            taken = Counter(rows)
            taken[rows[i]] -= 1
            ok = [o and not (taken[rows[i][:pos] + (k,) + rows[i][pos + 1:]] > 0) for o, k in zip(ok, keys)]
        return [k for k, o in zip(keys, ok) if o]

    def candidates(self, i: int, ref: str) -> list[int]:
        """Rows ``j`` whose parent through ``ref``, swapped with row ``i``'s, leaves both rows keeping every rule."""
        w, t = self.w, self.t
        vals = w.values[t][ref]
        n = w.n[t]
        vi = vals[i]
        ok = [vals[j] != vi for j in range(n)]
        ok[i] = False
        for _, _, refs, names, expr in self.checks:
            if ref not in refs:
                continue
            # row i with each row's parent (the frame of all rows, every column but ref's set to row i's) ...
            as_i: dict[str, list[Any]] = {}
            as_j: dict[str, list[Any]] = {}
            for name in names:
                col = w.read(t, name)
                if name == ref or self._via(ref, name):
                    as_i[name] = col
                    as_j[name] = [col[i]] * n
                else:
                    as_i[name] = [col[i]] * n
                    as_j[name] = col
            for override in (as_i, as_j):  # ... and each row j with row i's parent
                holds = self._frame(names, override).select(expr.alias("h")).get_column("h").cast(pl.Boolean).fill_null(True).to_list()
                ok = [a and b for a, b in zip(ok, holds)]
        for cols in self.uniques:
            if ref not in cols:
                continue
            keys = self._keys(cols)
            pos = cols.index(ref)
            seen = Counter(keys)
            for j in range(n):
                if not ok[j]:
                    continue
                ki = keys[i][:pos] + (vals[j],) + keys[i][pos + 1:]
                kj = keys[j][:pos] + (vi,) + keys[j][pos + 1:]

                def clash(k: tuple, j: int = j) -> bool:  # k held by a row other than i and j
                    return None not in k and seen[k] - (k == keys[i]) - (k == keys[j]) > 0

                ok[j] = not (clash(ki) or clash(kj) or (ki == kj and None not in ki))
        return [j for j in range(n) if ok[j]]


def repair(w, plan: Plan) -> set[tuple[str, str]]:
    """Swap parents between rows until every table's reference rules hold; returns the ``(table, reference)`` columns changed.

    Each failing row, in row order, tries its references in declared order: a reference drawn uniformly takes a
    parent drawn among those that keep the row within every rule; any other (cardinality, junction) takes the parent
    of a row drawn among those whose parent could be swapped with its own leaving both rows within every rule. A row
    no single move mends swaps with a random row, to leave the dead end. Draws come from a stream of the table's own,
    ``(seed, table, "assign")``. At most
    :data:`~worldforge.spec.limits.MAX_RESAMPLE_TRIES` rounds.

    Raises:
        GenerationError: rows still break a rule after the last round (no swap can mend them).
    """
    changed: set[tuple[str, str]] = set()
    for t in plan.table_order:
        rules = _Rules(w, t)
        if not rules:
            continue
        rng = w.rng(t, "assign")
        refs = rules.refs()
        for _ in range(MAX_RESAMPLE_TRIES):
            bad = rules.failing()
            if not bad:
                break
            for i in bad:
                for ref in refs:
                    if rules.free(ref):
                        keys = rules.redraws(i, ref)
                        if keys:
                            w.values[t][ref][i] = keys[rng.randrange(len(keys))]
                            changed.add((t, ref))
                            break
                        continue
                    options = rules.candidates(i, ref)
                    if options:
                        _swap(w, t, ref, i, options[rng.randrange(len(options))])
                        changed.add((t, ref))
                        break
                else:  # no single move mends the row: swap one of its references with a random row, and go on
                    movable = [r for r in refs if not rules.free(r)]
                    if movable:
                        ref = movable[rng.randrange(len(movable))]
                        _swap(w, t, ref, i, rng.randrange(w.n[t]))
                        changed.add((t, ref))
        else:
            bad = rules.failing()
        if bad:
            names = [f"check {con.expr!r}" for _, con, _, _, _ in rules.checks] + [f"unique ({', '.join(c)})" for c in rules.uniques]
            raise GenerationError(
                f"world '{w.spec.world}' (seed {w.seed}), table '{t}': {len(bad)} of {w.n[t]} rows still break "
                f"{' / '.join(names)} after {MAX_RESAMPLE_TRIES} rounds of swapping parents of {', '.join(refs)}; "
                f"loosen the rule or give the references more parents"
            )
    return changed


def _swap(w, t: str, ref: str, i: int, j: int) -> None:
    vals = w.values[t][ref]
    vals[i], vals[j] = vals[j], vals[i]
    idx = w.parent_index.get((t, ref))
    if idx is not None:
        idx[i], idx[j] = idx[j], idx[i]
