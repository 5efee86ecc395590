"""Hypothesis strategies of valid world specs over the whole spec language, for building end to end.

:func:`world_specs` draws a spec document (the dict a YAML file holds) that :func:`~worldforge.spec.spec_from_dict`
accepts: 2–7 tables with invented names drawn from the word lists of several domains (and made-up words), every
column kind (``sequence``, ``faker``, ``choice``, ``number``, ``date``, ``format``, ``reference``, ``derive``,
``rank``, ``share``, ``aggregate``), every reference shape (a random parent, a driving cardinality, a junction of two
cardinalities that can hold, roles — two references to one parent with labels and a ``check`` with
``enforce: resample`` that keeps them apart —, a hierarchy within its bounds, an optional reference with a
``null_share``), constraints (``unique``, ``check`` verified and resampled, ``range``, ``monotone``,
``not_after_as_of``), scenarios, and labels with and without units; never a hint (``verb``, ``designation``,
``additive``). Row counts and cardinalities are computed so that every seed gives 300–500 rows.

Flags leave a shape out (``optional=False``: no ``null_share``; ``hierarchies=False``: no self-reference), so a
suite can build what works today and mark the rest as a known failure. Used by tests/fuzz/test_fuzz_worlds.py and
bench/specs_fuzz.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from worldforge.spec.expr import FUNCTIONS

# ---- words ------------------------------------------------------------------------------------

DOMAINS: dict[str, dict[str, Any]] = {
    "maritime": {
        "tables": ["harbours", "vessels", "voyages", "crews", "cargo_lots", "berths", "shipyards", "lighthouses"],
        "names": ["{{last_name}} Star", "MV {{first_name}}", "{{city}} Harbour", "{{last_name}} Marine"],
        "categories": {"hull_type": ["steel", "wood", "aluminium", "composite"], "flag_state": ["Norway", "Panama", "Malta", "Liberia"],
                       "sea_area": ["North Sea", "Baltic", "Biscay", "Adriatic", "Aegean"]},
        "measures": [("tonnage", "tonnes", "gross tonnage"), ("draught_m", "m", None), ("crew_size", None, "crew size"),
                     ("speed_kn", "knots", "top speed"), ("fuel_cost_eur", "EUR", "fuel cost")],
        "dates": ["launched", "commissioned", "departed_on", "docked_on"],
    },
    "astronomy": {
        "tables": ["observatories", "telescopes", "surveys", "comets", "exoplanets", "nights", "detectors"],
        "names": ["{{last_name}} Observatory", "Comet {{last_name}}", "{{last_name}}-{{building_number}}", "{{city}} Array"],
        "categories": {"band": ["optical", "radio", "infrared", "ultraviolet"], "site_climate": ["arid", "alpine", "polar", "coastal"],
                       "spectral_class": ["O", "B", "A", "F", "G", "K", "M"]},
        "measures": [("aperture_m", "m", "aperture"), ("magnitude", None, "apparent magnitude"), ("distance_ly", "light years", "distance"),
                     ("exposure_s", "seconds", "exposure time"), ("budget_musd", "million USD", "budget")],
        "dates": ["first_light", "discovered", "observed_on", "catalogued"],
    },
    "culinary": {
        "tables": ["kitchens", "chefs", "recipes", "tastings", "suppliers", "menus", "dishes"],
        "names": ["{{first_name}} {{last_name}}", "Chez {{first_name}}", "{{last_name}}'s Table", "The {{color_name}} Spoon"],
        "categories": {"cuisine": ["Basque", "Sichuan", "Oaxacan", "Levantine", "Nordic"], "course": ["starter", "main", "dessert"],
                       "spice_level": ["mild", "medium", "hot"]},
        "measures": [("covers", None, "covers served"), ("price_usd", "USD", "menu price"), ("prep_minutes", "minutes", "preparation time"),
                     ("rating", None, "critic rating"), ("calories_kcal", "kcal", "energy")],
        "dates": ["opened", "tasted_on", "created", "certified_on"],
    },
    "music": {
        "tables": ["labels", "bands", "albums", "tours", "gigs", "studios", "tracks", "festivals"],
        "names": ["The {{color_name}} {{last_name}}s", "{{first_name}} and the {{last_name}}s", "{{city}} Sessions", "{{last_name}} Records"],
        "categories": {"genre": ["jazz", "folk", "techno", "metal", "soul"], "format": ["vinyl", "cassette", "digital"],
                       "venue_size": ["club", "hall", "arena"]},
        "measures": [("streams_k", "thousand streams", "streams"), ("length_min", "minutes", "running time"), ("tickets_sold", "tickets", None),
                     ("fee_gbp", "GBP", "booking fee"), ("tempo_bpm", "bpm", "tempo")],
        "dates": ["released", "formed", "played_on", "signed_on"],
    },
    "agriculture": {
        "tables": ["farms", "fields", "harvests", "cooperatives", "orchards", "silos", "herds"],
        "names": ["{{last_name}} Farm", "{{city}} Cooperative", "{{last_name}} Acres", "{{street_name}} Orchard"],
        "categories": {"crop": ["barley", "rye", "lentils", "apples", "hops"], "soil": ["clay", "loam", "sand", "peat"],
                       "irrigation": ["drip", "flood", "rain-fed"]},
        "measures": [("area_ha", "ha", "area"), ("yield_t", "tonnes", "yield"), ("rainfall_mm", "mm", "rainfall"),
                     ("workers", "people", "workforce"), ("subsidy_eur", "EUR", "subsidy")],
        "dates": ["planted", "harvested_on", "registered", "inspected_on"],
    },
    "rail": {
        "tables": ["depots", "locomotives", "routes", "journeys", "stations", "signal_boxes", "carriages"],
        "names": ["{{city}} Central", "{{last_name}} Junction", "Class {{building_number}}", "{{street_name}} Halt"],
        "categories": {"traction": ["diesel", "electric", "steam", "hydrogen"], "gauge": ["standard", "narrow", "broad"],
                       "service": ["express", "regional", "freight"]},
        "measures": [("length_km", "km", "route length"), ("power_kw", "kW", "power"), ("seats", "seats", None),
                     ("delay_min", "minutes", "delay"), ("fare_chf", "CHF", "fare")],
        "dates": ["built", "opened", "ran_on", "overhauled_on"],
    },
    "archives": {
        "tables": ["libraries", "manuscripts", "scribes", "loans", "collections", "bindings", "readers"],
        "names": ["Codex {{last_name}}", "{{city}} Library", "{{first_name}} {{last_name}}", "The {{last_name}} Papers"],
        "categories": {"script": ["uncial", "gothic", "humanist", "cursive"], "material": ["vellum", "paper", "papyrus"],
                       "condition": ["fine", "worn", "fragile", "restored"]},
        "measures": [("folios", "folios", "number of folios"), ("height_cm", "cm", "height"), ("value_eur", "EUR", "insured value"),
                     ("loan_days", "days", "loan period"), ("pages_read", None, "pages read")],
        "dates": ["acquired", "written_on", "lent_on", "digitised_on"],
    },
}
"""Word lists by domain: table nouns, Faker name templates, categories with their values, measures
``(column, unit or None, label or None)`` and date column names."""

PROVIDERS = ["city", "company", "color_name", "country", "user_name", "street_name", "first_name", "job"]
"""Faker providers of a plain text attribute."""

_SYLLABLES = ["ka", "lo", "mi", "ren", "tor", "vel", "zu", "qua", "bri", "sol", "nek", "dra", "phi", "gor", "ula", "esk"]
_RESERVED = set(FUNCTIONS) | {"and", "or", "not", "true", "false", "null", "n", "name", "date", "as_of", "trajectories", "episodes", "catalog"}


def invented_word(draw: st.DrawFn, syllables: tuple[int, int] = (2, 3)) -> str:
    """A made-up lowercase word of 2–3 syllables (``velqua``)."""
    return "".join(draw(st.lists(st.sampled_from(_SYLLABLES), min_size=syllables[0], max_size=syllables[1])))


# ---- the skeleton: tables, rows and references ------------------------------------------------

@dataclass
class Table:
    """One table being drawn."""

    name: str
    rows: int
    shape: str  # root, random, driven, junction, roles, hierarchy
    columns: dict[str, dict] = field(default_factory=dict)
    constraints: list[dict] = field(default_factory=list)
    pk: str = ""
    fixed_rows: bool = True
    numbers: list[tuple[str, str, int | None]] = field(default_factory=list)  # (column, dtype, decimals)
    dates: list[str] = field(default_factory=list)
    refs: list[tuple[str, str]] = field(default_factory=list)  # (column, parent), the table itself for a hierarchy
    nominal: int = 0  # the rows first assigned (what a table without rows gets back when the budget needs it)
    rows_hi: int = 0  # the most rows a table without rows may get


def _unique_name(draw: st.DrawFn, taken: set[str], pool: list[str], invent: float = 0.25) -> str:
    """A fresh identifier from ``pool`` or, sometimes (or when the pool is used up), made up."""
    free = [w for w in pool if w not in taken and w not in _RESERVED and len(w) <= 63]  # an identifier has at most 63 characters
    if free and not draw(st.integers(0, 99)) < invent * 100:
        name = draw(st.sampled_from(free))
    else:
        name = invented_word(draw)
        while name in taken or name in _RESERVED:
            name += draw(st.sampled_from(_SYLLABLES))
    taken.add(name)
    return name


def _split(draw: st.DrawFn, total: int, parts: int, lo: int) -> list[int]:
    """``total`` split into ``parts`` integers, each at least ``lo``."""
    cuts = sorted(draw(st.lists(st.integers(0, total - parts * lo), min_size=parts - 1, max_size=parts - 1)))
    bounds = [0, *cuts, total - parts * lo]
    return [lo + bounds[i + 1] - bounds[i] for i in range(parts)]


@st.composite
def world_specs(draw: st.DrawFn, optional: bool = True, hierarchies: bool = True, max_tables: int = 7) -> dict[str, Any]:
    """A valid world spec document (see the module docstring). ``optional``/``hierarchies`` allow those reference shapes."""
    domain_names = draw(st.lists(st.sampled_from(sorted(DOMAINS)), min_size=1, max_size=2, unique=True))
    words = {k: [x for d in domain_names for x in DOMAINS[d][k]] for k in ("tables", "names", "measures", "dates")}
    categories = {k: v for d in domain_names for k, v in DOMAINS[d]["categories"].items()}
    n_tables = draw(st.integers(2, max_tables))
    total = draw(st.integers(320, 480))
    table_names: set[str] = set()
    tables: list[Table] = []

    # Table 0 is a root; each later one picks a shape over the tables before it. Rows are assigned first (roots small,
    # the rest sharing the budget), then each shape's cardinalities are derived from the rows so that they always hold.
    root_rows = draw(st.integers(3, 30))
    rest = _split(draw, total - root_rows, n_tables - 1, 3) if n_tables > 1 else []
    row_counts = [root_rows, *rest]
    for i, rows in enumerate(row_counts):
        name = _unique_name(draw, table_names, words["tables"])
        shapes = ["root"] if i == 0 else ["root", "random", "driven", "driven", "roles", "junction"] + (["hierarchy"] if hierarchies else [])
        shape = draw(st.sampled_from(shapes))
        tables.append(Table(name, rows, shape, nominal=rows))

    for i, t in enumerate(tables):
        taken: set[str] = set()
        t.pk = _unique_name(draw, taken, [f"{t.name.rstrip('s')}_id", f"{t.name}_key", "code_id", "row_id"], invent=0.1)
        t.columns[t.pk] = {"kind": "sequence"} | ({"start": draw(st.sampled_from([1, 10, 100, 1000, 5000]))} if draw(st.booleans()) else {})
        earlier = tables[:i]
        _references(draw, t, earlier, taken, optional)
        _attributes(draw, t, taken, words, categories)
        if t is max(tables, key=lambda x: x.nominal):  # something to ask about: a spec has at least one table of numbers
            while len(t.numbers) < 2:
                _attribute(draw, t, taken, "number", words, categories)

    # Every seed gives 300–500 rows: tables without rows take theirs back until the range fits.
    while (free := [t for t in tables if not t.fixed_rows]) and not (
            300 <= sum(x.rows for x in tables) and sum(x.rows if x.fixed_rows else x.rows_hi for x in tables) <= 500):
        free[-1].fixed_rows, free[-1].rows = True, free[-1].nominal

    for t in tables:  # aggregates in parents, after every child's columns exist
        _aggregates(draw, t, tables, set(t.columns))

    world = f"{domain_names[0]}_{invented_word(draw, (1, 2))}_{draw(st.integers(2025, 2040))}"
    doc: dict[str, Any] = {"world": world, "seed": draw(st.integers(0, 10_000)), "target_year": int(world.rsplit("_", 1)[1])}
    if draw(st.booleans()):
        doc["as_of"] = draw(st.sampled_from(["Y-06-30", "Y-09-30", "Y-12-31"]))
    doc["tables"] = {}
    for t in tables:
        spec: dict[str, Any] = {"primary_key": t.pk}
        if t.fixed_rows:
            spec["rows"] = t.rows
        if draw(st.integers(0, 3)) == 0:
            spec["label"] = t.name.replace("_", " ").rstrip("s") or t.name
        # a label given twice in a table, or that reads as another column's name, is refused at load: it goes
        while True:  # until no two columns read alike (an unlabelled column reads as its name in words)
            reads = [(c, col.get("label") or c.replace("_", " ")) for c, col in t.columns.items()]
            clash = next((c for i, (c, r) in enumerate(reads) if "label" in t.columns[c]
                          and any(r == r2 for j, (_, r2) in enumerate(reads) if j != i)), None)
            if clash is None:
                break
            del t.columns[clash]["label"]
        spec["columns"] = t.columns
        if t.constraints:
            spec["constraints"] = t.constraints
        doc["tables"][t.name] = spec
    scenarios = draw(st.lists(st.sampled_from(["shift", "as_of", "both"]), max_size=2))
    if scenarios:
        doc["scenarios"] = []
        for k, how in enumerate(scenarios):
            s: dict[str, Any] = {"name": f"{invented_word(draw, (1, 2))}_{k}"}
            if how in ("shift", "both"):
                s["shift_years"] = draw(st.sampled_from([-3, -1, 1, 2, 5]))
            if how in ("as_of", "both"):
                s["as_of"] = draw(st.sampled_from(["Y-06-30", "Y-09-30", "Y-12-31"]))  # never before a date window ends (Y-06-30)
            doc["scenarios"].append(s)
    return doc


def _label(draw: st.DrawFn, words: str) -> str:
    return words.replace("_", " ")


def _references(draw: st.DrawFn, t: Table, earlier: list[Table], taken: set[str], optional: bool) -> None:
    """The reference columns of ``t`` for its shape (cardinalities derived from the row counts), and an optional one."""
    def ref_name(parent: Table, prefix: str = "") -> str:
        base = parent.pk if not prefix else f"{prefix}_{parent.pk}"
        return _unique_name(draw, taken, [base, f"{prefix or parent.name.rstrip('s')}_ref"], invent=0.05)

    def card(parent_rows: int, rows: int, slack: int) -> dict[str, int]:
        lo, hi = rows // parent_rows, -(-rows // parent_rows)
        return {"min": max(0, lo - draw(st.integers(0, slack))), "max": hi + draw(st.integers(0, slack))}

    fixed_parents = [p for p in earlier if p.fixed_rows]
    if t.shape == "random" and earlier:
        p = draw(st.sampled_from(earlier))
        c = ref_name(p)
        t.columns[c] = {"kind": "reference", "parent": p.name}
        t.refs.append((c, p.name))
    elif t.shape == "driven" and fixed_parents:
        p = draw(st.sampled_from(fixed_parents))
        c = ref_name(p)
        cd = card(p.rows, t.rows, 2)
        t.columns[c] = {"kind": "reference", "parent": p.name, "cardinality": cd}
        t.refs.append((c, p.name))
        if draw(st.booleans()):  # without rows: parent rows × [min, max]; world_specs puts rows back if the budget needs
            t.fixed_rows, t.rows, t.rows_hi = False, p.rows * cd["min"], p.rows * cd["max"]
    elif t.shape == "roles" and any(p.rows >= 3 for p in earlier):
        p = draw(st.sampled_from([p for p in earlier if p.rows >= 3]))
        role_words = draw(st.sampled_from([("home", "away"), ("first", "second"), ("sender", "receiver"), ("host", "guest"),
                                           ("lead", "backup"), ("origin", "destination")]))
        a, b = ref_name(p, role_words[0]), ref_name(p, role_words[1])
        noun = p.name.rstrip("s").replace("_", " ")
        t.columns[a] = {"kind": "reference", "parent": p.name, "label": f"{role_words[0]} {noun}"}
        t.columns[b] = {"kind": "reference", "parent": p.name, "label": f"{role_words[1]} {noun}"}
        if p.fixed_rows and draw(st.booleans()):
            t.columns[a]["cardinality"] = card(p.rows, t.rows, 1)
        t.constraints.append({"kind": "check", "expr": f"{a} != {b}", "enforce": "resample"})
        if t.rows <= p.rows * (p.rows - 1) // 2 and "cardinality" not in t.columns[a] and draw(st.booleans()):
            t.constraints.append({"kind": "unique", "columns": [a, b]})
        t.refs += [(a, p.name), (b, p.name)]
    elif t.shape == "junction" and len(fixed_parents) >= 2:
        pa, pb = draw(st.permutations(fixed_parents))[:2]
        a, b = ref_name(pa), ref_name(pb)
        t.columns[a] = {"kind": "reference", "parent": pa.name, "cardinality": card(pa.rows, t.rows, 2)}
        t.columns[b] = {"kind": "reference", "parent": pb.name, "cardinality": card(pb.rows, t.rows, 2)}
        # No pair repeats when each side's most children fit the other side's rows: then ask for it.
        if t.columns[b]["cardinality"]["max"] <= pa.rows and t.columns[a]["cardinality"]["max"] <= pb.rows and draw(st.booleans()):
            t.constraints.append({"kind": "unique", "columns": [a, b]})
        t.refs += [(a, pa.name), (b, pb.name)]
    elif t.shape == "hierarchy":
        c = _unique_name(draw, taken, ["parent_id", "reports_to", "mentor_id", "successor_of", "derived_from"], invent=0.1)
        k = draw(st.integers(2, 8))
        roots = draw(st.integers(1, 3))
        depth = 1
        while _capacity(roots, k, depth) < t.rows:
            depth += 1
        h: dict[str, int] = {"max_children": k, "max_depth": depth + draw(st.integers(0, 2))}
        if draw(st.booleans()):
            h["roots"] = roots
        else:
            h["max_depth"] = max(h["max_depth"], math.ceil(math.log(max(t.rows, 2), k)) + 1)  # one root
            while _capacity(1, k, h["max_depth"]) < t.rows:
                h["max_depth"] += 1
        t.columns[c] = {"kind": "reference", "parent": t.name, "label": draw(st.sampled_from(["parent", "mentor", "predecessor", "origin"]))
                        + " " + t.name.rstrip("s").replace("_", " "), "hierarchy": h}
        t.refs.append((c, t.name))
        if earlier and draw(st.booleans()):  # and a parent of another table
            p = draw(st.sampled_from(earlier))
            pc = ref_name(p)
            t.columns[pc] = {"kind": "reference", "parent": p.name}
            t.refs.append((pc, p.name))
    else:
        t.shape = "root"
    if optional and earlier and draw(st.integers(0, 2)) == 0:
        p = draw(st.sampled_from(earlier))
        c = ref_name(p, draw(st.sampled_from(["backup", "partner", "sponsor", "alt"])))
        t.columns[c] = {"kind": "reference", "parent": p.name, "null_share": draw(st.sampled_from([0.1, 0.25, 0.4, 0.6]))}
        if draw(st.booleans()):
            t.columns[c]["label"] = c.rsplit("_", 1)[0].replace("_", " ")
        t.refs.append((c, p.name))


def _capacity(roots: int, k: int, depth: int) -> int:
    return sum(roots * k ** d for d in range(depth + 1))


def _attributes(draw: st.DrawFn, t: Table, taken: set[str], words: dict[str, list], categories: dict[str, list]) -> None:
    """A name (most tables), then 1–6 attribute columns of the base and derived kinds, and constraints over them."""
    how = draw(st.sampled_from(["faker", "faker", "format", "choice", "none"]))
    name = _unique_name(draw, taken, ["title", "label_text", "full_name", "designation_text", "call_sign"], invent=0.1) if how != "none" else None
    if how == "faker":
        t.columns[name] = {"kind": "faker", "template": draw(st.sampled_from(words["names"])) + " {{building_number}}",
                           "unique": True, "weighted": False}
    elif how == "format":
        t.columns[name] = {"kind": "format", "template": draw(st.sampled_from(["{n:04d}", "X-{n:03d}", "{n}"])).replace(
            "X", invented_word(draw, (1, 1)).upper())}
        if draw(st.booleans()):
            t.columns[name]["start"] = draw(st.integers(1, 500))
    elif how == "choice" and t.fixed_rows and t.rows <= 40:  # a table without rows may get more than it has values
        values = sorted({invented_word(draw).capitalize() for _ in range(t.rows + 10)})
        if len(values) >= t.rows:
            t.columns[name] = {"kind": "choice", "values": values, "unique": True}
    if name and name in t.columns and draw(st.booleans()):
        t.constraints.append({"kind": "unique", "columns": [name]})

    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["number", "number", "number", "choice", "date", "date", "faker", "derive", "derive",
                                     "rank", "share", "format_ref"]))
        _attribute(draw, t, taken, kind, words, categories)


def _attribute(draw: st.DrawFn, t: Table, taken: set[str], kind: str, words: dict[str, list], categories: dict[str, list]) -> None:
    if kind == "number":
        col, unit, label = draw(st.sampled_from(words["measures"]))
        c = _unique_name(draw, taken, [col, f"{col}_est", f"peak_{col}"], invent=0.15)
        dtype = draw(st.sampled_from(["int", "float"]))
        lo = draw(st.sampled_from([0, 1, 5, 10, 100]))
        hi = lo + draw(st.sampled_from([9, 50, 400, 5000, 90000]))
        spec: dict[str, Any] = {"kind": "number", "dtype": dtype, "min": lo, "max": hi}
        dist = draw(st.sampled_from(["uniform", "uniform", "normal", "lognormal", "triangular", "exponential"]))
        if dist == "normal":
            spec |= {"distribution": dist, "mean": (lo + hi) / 2, "std": max((hi - lo) / 5, 0.5)}
        elif dist == "lognormal":
            spec |= {"distribution": dist, "mean": max(lo, 1) + (hi - lo) / 4, "std": draw(st.sampled_from([0.3, 0.6, 1.0]))}
        elif dist == "triangular":
            spec |= {"distribution": dist} | ({"mode": lo + (hi - lo) / 4} if draw(st.booleans()) else {})
        elif dist == "exponential":
            spec |= {"distribution": dist, "mean": max((hi - lo) / 6, 0.5)}
        decimals = None
        if dtype == "float" and draw(st.integers(0, 4)):
            decimals = draw(st.integers(0, 3))
            spec["decimals"] = decimals
        if unit and draw(st.integers(0, 2)):
            spec["unit"] = unit
        if label and draw(st.booleans()):
            spec["label"] = label
        t.columns[c] = spec
        t.numbers.append((c, dtype, 0 if dtype == "int" else decimals))
        if draw(st.integers(0, 3)) == 0:
            t.constraints.append({"kind": "range", "column": c, "min": lo} | ({"max": hi} if draw(st.booleans()) else {}))
        if draw(st.integers(0, 4)) == 0:
            t.constraints.append({"kind": "check", "expr": f"{c} >= {lo}"})
    elif kind == "choice":
        free = [k for k in categories if k not in taken]
        if free and draw(st.integers(0, 2)):
            c = draw(st.sampled_from(free))
            taken.add(c)
            values = categories[c]
        else:
            c = _unique_name(draw, taken, ["grade", "tier", "size_class", "rating_band", "batch"], invent=0.3)
            values = draw(st.sampled_from([[1, 2, 3, 4, 5], [0.5, 1.25, 2.0, 3.75], [10, 20, 50], ["alpha", "beta", "gamma"]]))
        spec = {"kind": "choice", "values": values}
        if draw(st.booleans()):
            spec["weights"] = draw(st.lists(st.integers(1, 6), min_size=len(values), max_size=len(values)))
        if draw(st.integers(0, 3)) == 0:
            spec["label"] = c.replace("_", " ")
        t.columns[c] = spec
        if all(isinstance(v, (int, float)) for v in values):
            t.numbers.append((c, "int" if all(isinstance(v, int) for v in values) else "float", None))
    elif kind == "date":
        c = _unique_name(draw, taken, words["dates"], invent=0.1)
        start = draw(st.integers(-30, 0))
        end = draw(st.integers(start, 0))
        t.columns[c] = {"kind": "date", "start": f"Y{start:+d}-01-01".replace("+0", "").replace("Y-0-", "Y-"),
                        "end": f"Y{end:+d}-06-30".replace("+0", "").replace("Y-0-", "Y-")}
        t.dates.append(c)
        if draw(st.integers(0, 2)) == 0:
            t.constraints.append({"kind": "not_after_as_of", "columns": [c]})
        if len(t.dates) >= 2 and draw(st.booleans()):  # a later date that is redrawn until it is
            first, later = t.dates[-2], c
            t.columns[later]["start"] = t.columns[first]["start"]
            t.columns[later]["end"] = "Y-06-30"
            t.constraints.append({"kind": "check", "expr": f"{later} >= {first}", "enforce": "resample"})
    elif kind == "faker":
        provider = draw(st.sampled_from(PROVIDERS))
        c = _unique_name(draw, taken, [f"home_{provider}", f"{provider}_of_origin", provider if provider not in ("job",) else "trade"], invent=0.1)
        t.columns[c] = {"kind": "faker", "provider": provider} | ({"weighted": False} if draw(st.booleans()) else {})
    elif kind == "derive":
        nums = [(c, d, p) for c, d, p in t.numbers]
        if t.dates and draw(st.booleans()):
            d = draw(st.sampled_from(t.dates))
            form = draw(st.sampled_from(["age", "year", "shift"]))
            if form == "age":
                c = _unique_name(draw, taken, [f"days_since_{d}", f"{d}_age_days"], invent=0.1)
                t.columns[c] = {"kind": "derive", "expr": f"days_between({d}, as_of())", "label": f"days since {d.replace('_', ' ')}"}
            elif form == "year":
                c = _unique_name(draw, taken, [f"{d}_year", f"year_of_{d}"], invent=0.1)
                t.columns[c] = {"kind": "derive", "expr": f"year({d})"}
            else:
                c = _unique_name(draw, taken, [f"review_after_{d}", f"{d}_plus_30"], invent=0.1)
                t.columns[c] = {"kind": "derive", "expr": f"add_days({d}, 30)"}
            return
        if not nums:
            return
        a, da, pa = draw(st.sampled_from(nums))
        b, db, pb = draw(st.sampled_from(nums))
        form = draw(st.sampled_from(["scale", "sum", "ratio", "rounded", "flag", "text"]))
        c = _unique_name(draw, taken, [f"{a}_adj", f"{a}_index", f"{a}_plus_{b}", f"{a}_per_{b}", f"{a}_flag"], invent=0.2)
        if form == "scale":
            expr = f"{a} * {draw(st.sampled_from(['2', '0.5', '1.1', '1000', '0.01']))}"
        elif form == "sum":
            expr = f"{a} + {b}"
        elif form == "ratio":  # never by zero: every number here is at least 0, and one is added
            expr = f"{a} / ({b} + 1)"
        elif form == "rounded":
            expr = f"round({a} * 1.07, {draw(st.integers(0, 2))})"
        elif form == "flag":
            expr = f"if({a} > {b}, 'above', 'not above')"
        else:
            expr = f"concat(str({a}), ' units')"
        spec = {"kind": "derive", "expr": expr}
        if form in ("scale", "sum") and draw(st.integers(0, 3)) == 0:
            spec["dtype"] = "float"
        t.columns[c] = spec
        if form not in ("flag", "text"):
            t.numbers.append((c, "float" if form in ("ratio", "rounded") or "." in expr else ("int" if da == db == "int" else "float"), None))
    elif kind == "rank":
        nums = [c for c, _, _ in t.numbers]
        if not nums:
            return
        of = draw(st.sampled_from(nums))
        c = _unique_name(draw, taken, [f"{of}_rank", f"rank_by_{of}"], invent=0.1)
        within = draw(st.sampled_from([None, *[r for r, _ in t.refs]]))
        t.columns[c] = {"kind": "rank", "of": of} | ({"within": within} if within else {}) | (
            {"descending": False} if draw(st.integers(0, 3)) == 0 else {})
        if draw(st.booleans()):
            t.constraints.append({"kind": "monotone", "rank": c, "by": of} | ({"within": within} if within else {})
                                 | ({"descending": False} if t.columns[c].get("descending") is False else {}))
    elif kind == "share":
        nums = [c for c, d, _ in t.numbers]
        if not nums:
            return
        of = draw(st.sampled_from(nums))
        c = _unique_name(draw, taken, [f"{of}_share", f"share_of_{of}"], invent=0.1)
        within = draw(st.sampled_from([None, *[r for r, p in t.refs if "null" not in r]]))
        t.columns[c] = {"kind": "share", "of": of, "percent": draw(st.booleans()), "decimals": draw(st.integers(1, 4))} | (
            {"within": within} if within else {})
    elif kind == "format_ref" and t.refs:
        ref, parent = draw(st.sampled_from([r for r in t.refs]))
        if parent == t.name or t.columns[ref].get("null_share"):
            return  # a name read from a parent some rows lack would say 'None': refused at load
        c = _unique_name(draw, taken, ["ref_code", "catalogue_no", "filing_code"], invent=0.1)
        t.columns[c] = {"kind": "format", "template": "{" + ref + "}-{n:02d}", "counter_within": ref}


def _aggregates(draw: st.DrawFn, t: Table, tables: list[Table], taken: set[str]) -> None:
    """0–3 aggregates of ``t``'s children (through a role with ``via``, a hierarchy through its self-reference)."""
    links = [(child, ref) for child in tables for ref, parent in child.refs if parent == t.name]
    if not links:
        return
    for _ in range(draw(st.integers(0, 3))):
        child, via = draw(st.sampled_from(links))
        fn = draw(st.sampled_from(["count", "sum", "mean", "min", "max"]))
        nums = [c for c, _, _ in child.numbers if child.columns[c]["kind"] in ("number", "choice")]
        spec: dict[str, Any] = {"kind": "aggregate", "child": child.name, "fn": fn}
        if fn in ("min", "max") and child.dates and draw(st.booleans()):
            spec["of"] = draw(st.sampled_from(child.dates))
        elif fn != "count" and nums:
            spec["of"] = draw(st.sampled_from(nums))
        else:
            spec["fn"] = fn = "count"
        first = next(r for r, p in child.refs if p == t.name)  # what the aggregate reads without a via
        if via != first or draw(st.booleans()):
            spec["via"] = via
        if fn in ("mean", "sum") and draw(st.integers(0, 2)) == 0:
            spec["decimals"] = draw(st.integers(0, 3))
        base = f"{fn}_{spec.get('of', child.name)}"
        c = _unique_name(draw, taken, [base, f"{base}_by_{via}", f"{child.name}_{fn}"], invent=0.05)
        if draw(st.booleans()):
            spec["label"] = c.replace("_", " ")
        t.columns[c] = spec


# ---- building a drawn spec end to end ---------------------------------------------------------

NOISE = r"\d\.\d*9999999|\d\.\d*0000000\d"
"""A float written with its binary noise (``0.30000000000000004``)."""


@dataclass
class Built:
    """What building one drawn spec end to end gave.

    Attributes:
        failure: ``None`` when every step ran and passed its checks; else ``(step, what)``: the step that raised or
            failed a check, and the exception's type and first line or the failed check's name and summary.
        contradictions: contradicted facts of the corpus (``None`` before search_corpus ran).
        oracle_f1_min: the oracle's lowest item-F1 over the clean episodes (``None`` before oracle_episodes ran).
        noise: page, task and deep-question texts that write a float with its noise.
        hashes: the corpus hash of the world and each scenario, built twice (``(first, second)`` each; only when built).
        seconds: the time it took, both builds.
    """

    failure: tuple[str, str] | None = None
    contradictions: int | None = None
    oracle_f1_min: float | None = None
    noise: list[str] = field(default_factory=list)
    hashes: dict[str | None, tuple[str | None, str | None]] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """Built, checked clean, solved at F1 1.0, without noise, with the same corpus hash twice."""
        return (self.failure is None and self.contradictions == 0 and self.oracle_f1_min == 1.0 and not self.noise
                and bool(self.hashes) and all(a == b and a for a, b in self.hashes.values()))

    def why(self) -> str:
        """The first thing wrong, in one line (empty when :attr:`ok`)."""
        if self.failure:
            return f"{self.failure[0]}: {self.failure[1]}"
        if self.contradictions:
            return f"search_corpus: {self.contradictions} contradicted fact(s)"
        if self.oracle_f1_min != 1.0:
            return f"oracle_episodes: F1 {self.oracle_f1_min}"
        if self.noise:
            return f"float_noise: {self.noise[0]}"
        if not self.ok:
            return f"corpus_hash: two builds differ: {self.hashes}"
        return ""


def build_end_to_end(doc: dict[str, Any], folder: str | Path, twice: bool = True) -> Built:
    """Build a spec document as ``worldforge world run SPEC`` does (:func:`~worldforge.pipeline.run_world`, every step)
    in a warehouse under ``folder``; with ``twice``, build its world and corpus again in another warehouse and keep both
    corpus hashes (``_corpus.corpus_hash``). Never raises for the world's failure: it is :attr:`Built.failure`."""
    import re
    import time

    import duckdb
    import yaml

    from worldforge.corpus.store import stored_hash
    from worldforge.pipeline import run_world, select_steps
    from worldforge.warehouse.layout import Warehouse

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    spec_path = folder / "spec.yaml"
    spec_path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    out = Built()
    start = time.perf_counter()
    step = ["load"]
    results = []
    try:
        results = run_world(spec_path, Warehouse(folder / "wh"), progress=lambda name: step.__setitem__(0, name),
                            on_result=lambda r: None)
    except Exception as exc:  # noqa: BLE001 - whatever a step raises is the finding
        out.failure = (step[0], f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}")
    for r in results:
        if "contradictions" in r.figures:
            out.contradictions = r.figures["contradictions"]
        if "oracle_f1_min" in r.figures:
            out.oracle_f1_min = r.figures["oracle_f1_min"]
        if r.failed_checks and out.failure is None:
            c = r.failed_checks[0]
            out.failure = (r.step, f"{c.name}: {c.summary[:300]}")
    if out.failure is None and results:
        world = Path(results[0].metadata["path"])
        scenarios = [s["name"] for s in doc.get("scenarios", [])]
        con = duckdb.connect(str(world), read_only=True)
        try:
            for table, columns in {"corpus_pages": ["title", "lead", "body_md"], "search_tasks": ["question", "gold_json"],
                                   "deep_questions": ["question", "answer"]}.items():
                for row in con.execute(f"SELECT {', '.join(columns)} FROM {table}").fetchall():
                    for column, text in zip(columns, row):
                        out.noise += [f"{table}.{column}: ...{text[max(0, m.start() - 50):m.end()]}" for m in re.finditer(NOISE, text or "")]
        finally:
            con.close()
        if twice:
            again = run_world(spec_path, Warehouse(folder / "wh2"), steps=select_steps("world_tables,scenario_tables,search_corpus"))
            second = Path(again[0].metadata["path"])
            out.hashes = {s: (stored_hash(world, s), stored_hash(second, s)) for s in [None, *scenarios]}
        else:
            out.hashes = {None: (stored_hash(world), stored_hash(world))}
    out.seconds = time.perf_counter() - start
    return out


def shrink(doc: dict[str, Any], fails: Any, log: Any = None) -> dict[str, Any]:
    """A smaller spec that still fails the same way: greedy deletion of scenarios, constraints, columns (not primary keys)
    and tables, each kept only when the spec stays valid and ``fails(doc)`` stays true (every try builds: minutes).
    ``fails`` is a predicate on a spec document; ``log`` is called with a line per kept deletion."""
    import copy

    from worldforge.spec import spec_from_dict

    def valid(d: dict[str, Any]) -> bool:
        try:
            spec_from_dict(d)
            return True
        except Exception:  # noqa: BLE001 - an invalid candidate is skipped
            return False

    def candidates(d: dict[str, Any]):
        for i in range(len(d.get("scenarios", []))):
            yield f"scenario {i}", lambda x, i=i: x["scenarios"].pop(i)
        for t, ts in d["tables"].items():
            for i in reversed(range(len(ts.get("constraints", [])))):
                yield f"{t} constraint {i}", lambda x, t=t, i=i: x["tables"][t]["constraints"].pop(i)
        for t in reversed(list(d["tables"])):
            yield f"table {t}", lambda x, t=t: x["tables"].pop(t)
        for t, ts in d["tables"].items():
            for c in reversed(list(ts["columns"])):
                if c != ts["primary_key"]:
                    yield f"{t}.{c}", lambda x, t=t, c=c: x["tables"][t]["columns"].pop(c)
        for t, ts in d["tables"].items():
            for c, col in ts["columns"].items():
                for key in ("label", "unit", "decimals", "weights", "via", "distribution", "start"):
                    if key in col and col.get("kind") != "sequence":
                        yield f"{t}.{c}.{key}", lambda x, t=t, c=c, key=key: x["tables"][t]["columns"][c].pop(key)

    current = copy.deepcopy(doc)
    changed = True
    while changed:
        changed = False
        for what, cut in list(candidates(current)):
            trial = copy.deepcopy(current)
            try:
                cut(trial)
            except (KeyError, IndexError):
                continue
            if trial.get("scenarios") == []:
                trial.pop("scenarios")
            if valid(trial) and fails(trial):
                current, changed = trial, True
                if log:
                    log(f"dropped {what}")
                break
    return current


def draw_specs(n: int, seed_: int, warmup: int = 8, first: int = 0, **flags: Any) -> Any:
    """``n`` spec documents, one per seed ``seed_ * 1_000_003 + i`` (``i`` from ``first``): each the last of ``warmup`` examples Hypothesis
    generates from that seed (its first examples are its simplest, and a long run keeps mutating the same few), so the
    draws are independent and repeat with the seed. Yields them one at a time."""
    from hypothesis import HealthCheck, Phase, given, seed, settings

    strategy = world_specs(**flags)
    for i in range(first, first + n):
        got: list[dict[str, Any]] = []

        @seed(seed_ * 1_000_003 + i)
        @settings(max_examples=warmup, database=None, deadline=None, phases=[Phase.generate], suppress_health_check=list(HealthCheck))
        @given(strategy)
        def one(doc: dict[str, Any]) -> None:
            got.append(doc)

        one()
        yield got[-1]
