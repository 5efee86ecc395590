"""Seeded world specs sampled from the archetype library (deterministic, no LLM).

:func:`generate_catalog` writes N spec files; spec ``i`` comes from archetype ``i mod A`` of a seeded
permutation of the A archetypes, so every archetype is used once the catalog has A specs. Each spec
samples, from its archetype (:mod:`worldforge.catalog.archetype`): which optional tables and columns it
has and their order, one of each table's names, a target year (2027–2040 by default: time-shifted
worlds), a Faker locale, invented names (pseudo-words, word-pool picks), picks of real anchors, the
distributions' centres and the choice weights, and a row budget within 300–500 spread over the tables.
A drawn spec whose schema signature (:func:`~worldforge.catalog.signature.schema_signature`) is
already in the catalog is drawn again (up to ``MAX_DRAWS`` times), so signatures repeat only when the
catalog is larger than the archetypes can vary. Every spec is validated before it is written.

The same ``(n, seed)`` writes the same bytes, and a catalog's first k specs are the catalog of
``(k, seed)``: a small demo catalog is the start of the full one.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worldforge.catalog.archetype import Archetype, ArchetypeTable, anchors, load_archetypes
from worldforge.catalog.signature import schema_signature
from worldforge.errors import SpecError, WorldforgeError
from worldforge.spec import expr as E
from worldforge.spec.load import spec_from_dict, spec_yaml
from worldforge.spec.models import ROW_BUDGET
from worldforge.spec.plan import template_fields

MAX_DRAWS = 40
"""Draws per spec before a repeated schema signature (or an invalid draw) is accepted or reported."""
TARGET_ROWS = (320, 480)
"""The total rows a generated world aims at (inside the spec language's 300–500 budget)."""
MAX_CATALOG = 100_000
"""The largest catalog one call generates."""

_ONSETS = ["b", "c", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "cr", "dr", "tr", "st",
           "pl", "gr", "th", "sh", "ch", "kl", "fl", "sk", "qu", "j", "h", "w"]
_VOWELS = ["a", "e", "i", "o", "u", "a", "e", "o", "ai", "ou", "ei", "y"]
_CODAS = ["", "", "", "n", "r", "s", "x", "l", "m", "th", "nd", "k"]


def pseudo_word(rng: random.Random, syllables: tuple[int, int] = (2, 3)) -> str:
    """A pronounceable invented word (``"Kalorex"``), capitalized, of 2–3 syllables by default."""
    n = rng.randint(*syllables)
    parts = [rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(n)]
    return ("".join(parts) + rng.choice(_CODAS)).capitalize()


def invent_names(rng: random.Random, template: str, lists: dict[str, list[str]], count: int) -> list[str]:
    """``count`` distinct names from ``template``: ``{Word}``/``{word}`` a pseudo-word, ``{WORD}`` one in capitals,
    ``{A}`` a capital letter, ``{9}`` a digit, any other field a pick from ``lists``.

    Raises:
        WorldforgeError: the template cannot give ``count`` distinct names (too few combinations).
    """
    fields = _FIELD.findall(template)
    for f in fields:
        if f not in _BUILTIN_FIELDS and f not in lists:
            raise WorldforgeError(f"invent template {template!r}: no list named {f!r}")
    out: list[str] = []
    seen: set[str] = set()
    for _ in range(count * 60):
        name = _FIELD.sub(lambda m: _fill(rng, m.group(1), lists), template)
        if name not in seen:
            seen.add(name)
            out.append(name)
            if len(out) == count:
                return out
    raise WorldforgeError(f"invent template {template!r} gives fewer than {count} distinct names")


_FIELD = re.compile(r"\{(\w+)\}")
_BUILTIN_FIELDS = {"Word", "word", "WORD", "A", "9"}


def _fill(rng: random.Random, f: str, lists: dict[str, list[str]]) -> str:
    if f == "Word":
        return pseudo_word(rng)
    if f == "word":
        return pseudo_word(rng).lower()
    if f == "WORD":
        return pseudo_word(rng, (1, 2)).upper()
    if f == "A":
        return rng.choice("ABCDEFGHJKLMNPRSTVWXZ")
    if f == "9":
        return str(rng.randint(0, 9))
    return rng.choice(lists[f])


# --- dependencies inside an archetype ---------------------------------------------------------------

_CON_COLS = {"unique": ("columns",), "range": ("column",), "monotone": ("rank", "by", "within"), "not_after_as_of": ("columns",)}


def _names_in(col: dict[str, Any]) -> set[str]:
    """Columns (``col`` or ``table.col``) a column's generator reads."""
    kind = col.get("kind")
    if kind == "derive":
        return set(E.columns_of(E.parse(col["expr"])))
    if kind == "format":
        names = {f for f, _ in template_fields(col["template"]) if f != "n"}
        return names | ({col["counter_within"]} if col.get("counter_within") else set())
    if kind in ("rank", "share"):
        return {col["of"]} | ({col["within"]} if col.get("within") else set())
    return set()


def _constraint_names(con: dict[str, Any]) -> set[str]:
    if con.get("kind") == "check":
        return set(E.columns_of(E.parse(con["expr"])))
    names: set[str] = set()
    for key in _CON_COLS.get(con.get("kind", ""), ()):
        v = con.get(key)
        names |= set(v) if isinstance(v, list) else ({v} if v else set())
    return names


def _driving(table: ArchetypeTable) -> tuple[str, dict[str, Any]] | None:
    for name, col in table.columns.items():
        if col.get("kind") == "reference" and col.get("cardinality"):
            return name, col
    return None


def _ref_to(table: ArchetypeTable, parent: str) -> str | None:
    for name, col in table.columns.items():
        if col.get("kind") == "reference" and col.get("parent") == parent:
            return name
    return None


def _column_deps(arch: Archetype, tkey: str, cname: str) -> set[tuple[str, str | None]]:
    """``(table, column)`` pairs (``column`` None: the table itself) a column needs."""
    table = arch.tables[tkey]
    col = table.columns[cname]
    deps: set[tuple[str, str | None]] = set()
    if col.get("kind") == "reference":
        deps.add((col["parent"], None))
    if col.get("kind") == "aggregate":
        child = col["child"]
        deps.add((child, None))
        if child in arch.tables:
            if col.get("of"):
                deps.add((child, col["of"]))
            via = col.get("via") or _ref_to(arch.tables[child], tkey)
            if via:
                deps.add((child, via))
    for name in _names_in(col):
        if "." in name:
            parent, pcol = name.split(".", 1)
            deps |= {(parent, None), (parent, pcol)}
            ref = _ref_to(table, parent)
            if ref:
                deps.add((tkey, ref))
        else:
            deps.add((tkey, name))
    return deps


def _prune(arch: Archetype, tables: set[str], cols: set[tuple[str, str]]) -> tuple[set[str], set[tuple[str, str]]]:
    """Leave out, to a fixed point, what depends on something left out."""
    changed = True
    while changed:
        changed = False
        for tkey in sorted(tables):
            t = arch.tables[tkey]
            drive = _driving(t)
            if any(r not in tables for r in t.requires) or (drive and (tkey, drive[0]) not in cols):
                tables.discard(tkey)
                cols -= {(tkey, c) for c in t.columns}
                changed = True
        for tkey, cname in sorted(cols):
            for dt, dc in _column_deps(arch, tkey, cname):
                if dt not in tables or (dc is not None and (dt, dc) not in cols):
                    cols.discard((tkey, cname))
                    changed = True
                    break
    return tables, cols


# --- one spec --------------------------------------------------------------------------------------


@dataclass
class _Draw:
    rng: random.Random
    arch: Archetype
    year: int
    locale: str
    names: dict[str, str] = field(default_factory=dict)  # table key -> table name in this world

    def rename(self, text: str) -> str:
        """Table keys in an expression (``models.price``) or a template (``{brands.code}``) to this world's names."""
        if not self.names:
            return text
        keys = sorted(self.names, key=len, reverse=True)
        return re.sub(r"\b(" + "|".join(map(re.escape, keys)) + r")\.", lambda m: self.names[m.group(1)] + ".", text)


def _topo(arch: Archetype, tables: set[str]) -> list[str]:
    """Tables with the parent of each driving reference first."""
    order: list[str] = []
    pending = [t for t in arch.tables if t in tables]
    while pending:
        for t in pending:
            drive = _driving(arch.tables[t])
            if drive is None or drive[1]["parent"] in order:
                order.append(t)
                pending.remove(t)
                break
        else:  # a reference cycle: the validator names it
            order.extend(pending)
            break
    return order


def _unique_cap(draw: _Draw, table: ArchetypeTable, cols: set[str]) -> int:
    cap = ROW_BUDGET[1]
    for name in cols:
        col = table.columns[name]
        if col.get("kind") == "choice" and col.get("unique"):
            if "words" in col:
                cap = min(cap, len(draw.arch.words[col["words"]]))
            elif "anchor" in col:
                cap = min(cap, len(anchors()[col["anchor"]]))
            elif "values" in col:
                cap = min(cap, len(col["values"]))
    return cap


def _row_counts(draw: _Draw, order: list[str], cols: dict[str, set[str]]) -> dict[str, int]:
    rng, arch = draw.rng, draw.arch
    weight: dict[str, float] = {}
    caps = {t: _unique_cap(draw, arch.tables[t], cols[t]) for t in order}
    for t in order:
        table = arch.tables[t]
        drive = _driving(table)
        if drive is not None and drive[1]["parent"] in weight:
            card = drive[1]["cardinality"]
            weight[t] = weight[drive[1]["parent"]] * rng.uniform(card.get("min", 0), card["max"])
        else:
            lo, hi = table.rows or (10, 30)
            weight[t] = min(rng.randint(lo, hi), caps[t])
    target = rng.randint(*TARGET_ROWS)
    scale = target / max(sum(weight.values()), 1)
    rows = {t: max(2, min(caps[t], round(w * scale))) for t, w in weight.items()}

    def within_cardinality() -> None:
        # children per parent stay inside the archetype's cardinality (a 13th month, a 5th quarter must not appear)
        for t in order:
            drive = _driving(arch.tables[t])
            if drive is not None and drive[1]["parent"] in rows:
                card, parents = drive[1]["cardinality"], rows[drive[1]["parent"]]
                rows[t] = max(parents * int(card.get("min", 0)), min(parents * int(card["max"]), rows[t]))

    within_cardinality()
    for _ in range(4):  # capped tables leave a gap: the others take it
        gap = target - sum(rows.values())
        free = [t for t in order if rows[t] < caps[t]]
        if abs(gap) < 3 or not free:
            break
        share = sum(rows[t] for t in free)
        for t in free:
            rows[t] = max(2, min(caps[t], rows[t] + round(gap * rows[t] / max(share, 1))))
        within_cardinality()
    short = ROW_BUDGET[0] + 5 - sum(rows.values())
    if short > 0:  # the cardinalities cannot reach the budget: the largest uncapped table goes past its maximum
        free = [t for t in order if rows[t] + short <= caps[t]]
        if free:
            rows[max(free, key=lambda t: rows[t])] += short
    return rows


def _choice_values(draw: _Draw, col: dict[str, Any], rows: int) -> dict[str, Any]:
    rng = draw.rng
    col = dict(col)
    pick = col.pop("pick", None)
    need = rows + max(2, rows // 4) if col.get("unique") else 0
    if "words" in col:
        pool = draw.arch.words[col.pop("words")]
        k = min(len(pool), max(pick or len(pool), need))
        col["values"] = rng.sample(pool, k)
    elif "anchor" in col:
        pool = anchors()[col.pop("anchor")]
        k = min(len(pool), max(pick or len(pool), need))
        col["values"] = rng.sample(pool, k)
    elif "invent" in col:
        inv = dict(col.pop("invent"))
        template = inv.pop("template", "{Word}")
        count = max(int(inv.pop("count", pick or 12)), need)
        lists = {**draw.arch.words, **{k: v for k, v in inv.items() if isinstance(v, list)}}
        col["values"] = invent_names(rng, template, lists, count)
    if "weights" in col and len(col["weights"]) == len(col.get("values", [])):
        col["weights"] = [round(w * rng.uniform(0.6, 1.4), 2) for w in col["weights"]]
    elif "weights" in col:
        col.pop("weights")
    return col


def _jitter_number(rng: random.Random, col: dict[str, Any]) -> dict[str, Any]:
    col = dict(col)
    dist = col.get("distribution", "uniform")
    if dist == "normal" and "mean" in col:
        mean = col["mean"] * rng.uniform(0.88, 1.12)
        col["mean"] = _round_like(min(max(mean, col["min"]), col["max"]), col["mean"])
    elif dist == "lognormal" and "mean" in col:
        col["mean"] = _round_like(col["mean"] * rng.uniform(0.8, 1.25), col["mean"])
    return col


def _round_like(x: float, like: Any) -> float | int:
    if isinstance(like, int) and not isinstance(like, bool):
        return max(1, round(x)) if like > 0 else round(x)
    return round(x, 4)


def _column(draw: _Draw, tkey: str, cname: str, col: dict[str, Any], rows: int) -> dict[str, Any]:
    col = {k: v for k, v in col.items() if k != "p"}
    kind = col.get("kind")
    if kind == "choice":
        col = _choice_values(draw, col, rows)
    elif kind == "number":
        col = _jitter_number(draw.rng, col)
    elif kind == "faker" and "locale" not in col:
        col["locale"] = draw.locale
    if kind == "reference":
        col["parent"] = draw.names[col["parent"]]
    elif kind == "aggregate":
        col["child"] = draw.names[col["child"]]
    for key in ("expr", "template"):
        if key in col:
            col[key] = draw.rename(col[key])
    return col


def draw_spec(arch: Archetype, rng: random.Random, world: str) -> dict[str, Any]:
    """One spec document (a dict in the spec language) drawn from ``arch`` with ``rng``; not yet validated."""
    years = arch.years
    draw = _Draw(rng, arch, rng.randint(years.min, years.max), rng.choice(arch.locales))
    tables = {t for t, spec in arch.tables.items() if spec.p >= 1 or rng.random() < spec.p}
    # in the archetype's table order, never a set's: a set of strings iterates in a per-process hash order, and the
    # draws below would differ between processes (the same seed gave another spec in another process)
    cols = {(t, c) for t in arch.tables if t in tables for c, col in arch.tables[t].columns.items() if col.get("p", 1) >= 1 or rng.random() < col["p"]}
    tables, cols = _prune(arch, tables, cols)
    order = _topo(arch, tables)
    by_table = {t: {c for tt, c in cols if tt == t} for t in order}
    for t in order:
        names = arch.tables[t].names or [t]
        draw.names[t] = names[rng.randrange(len(names))]
    rows = _row_counts(draw, order, by_table)

    out_tables: dict[str, Any] = {}
    shuffled = order[:]
    rng.shuffle(shuffled)
    for t in shuffled:
        table = arch.tables[t]
        name = draw.names[t]
        keep = [c for c in table.columns if c in by_table[t]]
        rest = [c for c in keep if c != table.primary_key]
        rng.shuffle(rest)
        columns = {c: _column(draw, t, c, table.columns[c], rows[t]) for c in [table.primary_key, *rest]}
        # every reference with a cardinality (the driving one and, in a junction, the others) is widened to take the
        # table's drawn rows: each side's bounds then hold the same total, so a junction is never refused at load
        for cname in columns:
            acol = table.columns[cname]
            if acol.get("kind") != "reference" or not acol.get("cardinality") or acol["parent"] == t:
                continue
            ref = dict(columns[cname])
            parents = rows[acol["parent"]]
            card = acol["cardinality"]
            avg = rows[t] / max(parents, 1)
            ref["cardinality"] = {"min": min(int(card.get("min", 0)), math.floor(avg)), "max": max(int(card["max"]), math.ceil(avg))}
            columns[cname] = ref
        out: dict[str, Any] = {"primary_key": table.primary_key, "rows": rows[t]}
        if table.description:
            out["description"] = table.description
        if table.labels:
            out["label"] = table.labels[(table.names or [t]).index(name)]
        out["columns"] = columns
        constraints = []
        for con in table.constraints:
            if all(("." in n and n.split(".", 1)[0] in tables and tuple(n.split(".", 1)) in cols) or (t, n) in cols
                   for n in _constraint_names(con)):
                con = dict(con)
                if "expr" in con:
                    con["expr"] = draw.rename(con["expr"])
                constraints.append(con)
        if constraints:
            out["constraints"] = constraints
        out_tables[name] = out

    year = draw.year
    shift = rng.choice([1, 1, 2, 2, 3, -1])
    title = rng.choice(arch.titles).format(year=year)
    doc: dict[str, Any] = {
        "world": world,
        "archetype": arch.archetype,
        "site": f"{rng.choice(arch.sites or [arch.archetype])}_{year}",
        "title": title,
    }
    if arch.description:
        doc["description"] = arch.description.format(year=year).strip()
    doc |= {
        "seed": rng.randrange(1, 2**31),
        "target_year": year,
        "as_of": "Y-12-31",
        "scenarios": [{
            "name": f"{'later' if shift > 0 else 'earlier'}_{year + shift}",
            "shift_years": shift,
            "description": f"The same world {abs(shift)} year{'s' if abs(shift) > 1 else ''} {'later' if shift > 0 else 'earlier'}: every date moves to {year + shift}.",
        }],
        "tables": out_tables,
    }
    return doc


@dataclass
class GeneratedCatalog:
    """What :func:`generate_catalog` wrote.

    Attributes:
        paths: the spec files, in catalog order (``OUT/<world>.yaml``).
        archetypes: specs per archetype.
        signatures: distinct schema signatures among the specs.
        redraws: draws thrown away for a repeated signature.
    """

    paths: list[Path]
    archetypes: dict[str, int]
    signatures: int
    redraws: int
    others: list[Path] = field(default_factory=list)
    """Spec files already in the folder that are not part of this catalog (a later ``catalog build`` builds them too)."""


def generate_catalog(n: int, seed: int, out_dir: str | Path, *, archetypes: list[str] | None = None,
                     progress: Callable[[int], None] | None = None) -> GeneratedCatalog:
    """Write ``n`` valid world specs drawn from the archetype library to ``out_dir`` (created if missing).

    Args:
        n: number of specs, 1 to ``MAX_CATALOG``.
        seed: the catalog's seed; the same ``(n, seed, archetypes)`` writes the same bytes.
        archetypes: restrict to these archetype names (default: the whole library).
        progress: called with the number of specs written so far.

    Returns:
        The paths written (``<world>.yaml``, worlds named ``<archetype>_<year>_<index>``) and diversity counts.

    Raises:
        WorldforgeError: ``n`` out of range, an unknown archetype, or an archetype that yields no valid
            spec in ``MAX_DRAWS`` draws (a bug in the library's data, reported with the spec errors).
    """
    if not 1 <= n <= MAX_CATALOG:
        raise WorldforgeError(f"--n must be between 1 and {MAX_CATALOG}, got {n}")
    library = load_archetypes()
    names = sorted(library)
    if archetypes:
        unknown = sorted(set(archetypes) - set(library))
        if unknown:
            raise WorldforgeError(f"unknown archetype(s) {unknown}; the library has: {', '.join(names)}")
        names = sorted(set(archetypes))
    order = names[:]
    random.Random(f"worldforge-catalog:{seed}:order").shuffle(order)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    seen: set[str] = set()
    paths: list[Path] = []
    per_arch: dict[str, int] = {}
    redraws = 0
    width = max(4, len(str(n - 1)))
    for i in range(n):
        arch = library[order[i % len(order)]]
        best: tuple[dict, str] | None = None
        errors: list[str] = []
        for attempt in range(MAX_DRAWS):
            rng = random.Random(f"worldforge-catalog:{seed}:{i}:{attempt}")
            doc = draw_spec(arch, rng, "")
            doc["world"] = f"{arch.archetype}_{doc['target_year']}_{i:0{width}d}"
            try:
                spec = spec_from_dict(doc, f"{arch.archetype} draw {attempt}")
            except SpecError as exc:
                errors.append(str(exc))
                continue
            sig = schema_signature(spec)
            if best is None:
                best = (doc, sig)
            if sig not in seen:
                best = (doc, sig)
                break
            redraws += 1
        if best is None:
            raise WorldforgeError(f"archetype {arch.archetype!r} gave no valid spec in {MAX_DRAWS} draws; last error:\n{errors[-1]}")
        doc, sig = best
        seen.add(sig)
        header = f"# Generated by `worldforge catalog generate --seed {seed}` (spec {i}) from archetype {arch.archetype}.\n"
        path = out / f"{doc['world']}.yaml"
        tmp = path.with_suffix(".yaml.tmp")
        tmp.write_text(spec_yaml(doc, header), encoding="utf-8")
        tmp.replace(path)
        paths.append(path)
        per_arch[arch.archetype] = per_arch.get(arch.archetype, 0) + 1
        if progress:
            progress(i + 1)
    mine = set(paths)
    others = sorted(p for p in [*out.glob("*.yaml"), *out.glob("*.yml")] if p not in mine)
    return GeneratedCatalog(paths, dict(sorted(per_arch.items())), len(seen), redraws, others)


def archetype_variety(arch: Archetype, draws: int, seed: int = 0) -> tuple[int, int, int]:
    """``(valid draws, distinct schema signatures, distinct sets of table names)`` over ``draws`` draws of ``arch``."""
    sigs: set[str] = set()
    tsets: set[tuple[str, ...]] = set()
    valid = 0
    for i in range(draws):
        doc = draw_spec(arch, random.Random(f"worldforge-variety:{seed}:{i}"), f"{arch.archetype}_{i}")
        try:
            spec = spec_from_dict(doc, arch.archetype)
        except SpecError:
            continue
        valid += 1
        sigs.add(schema_signature(spec))
        tsets.add(tuple(sorted(spec.tables)))
    return valid, len(sigs), len(tsets)
