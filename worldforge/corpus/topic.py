"""Background sentences about a spec's own topic, for worlds without a background pool file.

Catalog archetypes and bundled worlds have a hand-written pool of general knowledge
(``corpus/background/<pool>.yaml``). A user's spec has none, and the domain-neutral
``generic.yaml`` talks about audits and press releases on a page about avalanches; so a spec
without a pool file gets background *composed from the spec itself*: its ``background:``
sentences first, then sentences about what its tables are (their nouns, and which belongs to
which: "each keeper belongs to a single lighthouse"), what is measured and in which unit
("tower height and wave height are measured in metres"), how values are grouped, dated,
counted, totalled, ranked and recorded, and the spec's ``description`` with its authoring words
("invented", "real") taken out. Each kind of sentence has several templates, drawn by seed, and
a template is used once per pool where it can be, so pages do not repeat one skeleton.

Composed sentences state no world fact: they use column labels, units, table nouns and the
description's words, never a row's name or value, and a sentence with a digit is dropped (the
chrome module's rule for background). Every composed sentence names something of the spec
(a noun, a label), so two specs on different topics do not share a background sentence.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping

from worldforge.corpus.chrome import background_pool, pool_file
from worldforge.corpus.lexicon import a_or_an, conjugate, frame_for, person_table, plural_noun, singular_of_plural
from worldforge.corpus.vocab import ColumnInfo, TableInfo, faker_person, table_info
from worldforge.spec import models as M

__all__ = ["compose_background", "spec_background"]

# authoring words of a spec's description: the world is invented, its anchors are real; a site about the topic says neither
_META = re.compile(r"\b(?:invented|fictional|fictitious|imaginary|made-up|made up|hypothetical|simulated|synthetic|generated|"
                   r"real-world|real)\b\s*", re.I)
_FINITE = re.compile(r"\b(?:is|are|was|were|has|have|had|can|will|do|does|must|may)\b")
_PREPS = {"of", "at", "after", "before", "since", "on", "in", "per", "by", "from", "to", "within", "for", "with", "without", "into",
          "under", "over"}
# units as a sentence writes them ("measured in kilometres per hour")
_UNIT_WORDS = {
    "m": "metres", "cm": "centimetres", "mm": "millimetres", "km": "kilometres", "km/h": "kilometres per hour", "kmh": "kilometres per hour",
    "mph": "miles per hour", "m/s": "metres per second", "°c": "degrees Celsius", "°f": "degrees Fahrenheit", "kg": "kilograms",
    "g": "grams", "mg": "milligrams", "t": "tonnes", "tonnes": "tonnes", "ha": "hectares", "l": "litres", "liters": "litres",
    "ml": "millilitres", "kwh": "kilowatt-hours", "mwh": "megawatt-hours", "gwh": "gigawatt-hours", "twh": "terawatt-hours",
    "kw": "kilowatts", "mw": "megawatts", "gw": "gigawatts", "m2": "square metres", "square meters": "square metres",
    "m3": "cubic metres", "cubic meters": "cubic metres", "ft": "feet", "feet": "feet", "inch": "inches", "in": "inches",
    "nautical miles": "nautical miles", "miles": "miles", "usd": "US dollars", "eur": "euros", "gbp": "pounds sterling",
    "jpy": "Japanese yen", "cny": "Chinese yuan", "inr": "Indian rupees", "chf": "Swiss francs", "krw": "South Korean won",
    "aud": "Australian dollars", "cad": "Canadian dollars", "gb": "gigabytes", "tb": "terabytes", "mb": "megabytes", "mah": "milliamp-hours",
    "kcal": "kilocalories", "hpa": "hectopascals", "mbar": "millibars", "db": "decibels", "degrees": "degrees", "deg": "degrees",
}
MIN_POOL = 45
"""Composed pools are grown towards this many sentences (a page draws up to about twenty)."""
_SCALE_WORDS = {1e3: "thousands of", 1e6: "millions of", 1e9: "billions of", 1e12: "trillions of"}
# units a topic's figures are also given in, where a conversion trips readers up
_ALT_UNITS = {"metres": "feet", "centimetres": "inches", "millimetres": "inches", "kilometres": "miles", "kilometres per hour": "knots",
              "nautical miles": "kilometres", "degrees Celsius": "degrees Fahrenheit", "kilograms": "pounds", "tonnes": "short tons",
              "litres": "gallons", "hectares": "acres", "square metres": "square feet", "miles": "kilometres", "feet": "metres",
              "miles per hour": "kilometres per hour", "metres per second": "kilometres per hour", "degrees Fahrenheit": "degrees Celsius"}

# -- templates. Fields: {n} a row's noun, {p} its plural, {an_n} "a lighthouse", {l} a label, {be} "is"/"are" for it,
#    {pa}/{c}/{cs} a parent's noun, a child's noun and plural; a capitalised field ({L}, {An_pa}) is capitalised ----------
_UNIT_T = ("{L} {be} measured in {u}.", "{L} {be} usually given in {u}.", "Figures for {l} are quoted in {u}.", "{L} {be} recorded in {u}.",
           "Most sources give {l} in {u}.")
_UNIT_MONEY_T = ("{L} {be} stated in {u}, so comparing it with figures in another currency depends on the exchange rate of the day.",
                 "{L} figures are quoted in {u}.")
_UNIT_PERCENT_T = ("{L} {be} expressed as a percentage.", "{L} {be} given as a percentage rather than as a count.")
_UNIT_COUNT_T = ("{L} {be} given as a number of {u}.", "{L} {be} counted in {u}.")
_CONVERT_T = ("Some sources give {l} in {alt} instead, so figures need converting before they can be compared.",
              "Older or foreign sources may quote {l} in {alt}, which is easy to misread.",
              "Converting {l} from {alt} is a common source of small errors.",
              "A figure for {l} that looks wrong has often been given in {alt} by mistake.",
              "Readers used to {alt} often convert {l} in their heads, not always correctly.")
# a number column's sentences, tagged: "one" reads only with a singular label ("an unusual wave height", never "an unusual
# shifts per month"); "sum" fits counts and totals only (a tower's height covers no period); "thing" fits rows with a record
# of their own (a library, a keeper), "observed" rows that are observations or events (a reading, a storm); "measured" a
# physical quantity (in metres, degrees Celsius: a unit of _UNIT_WORDS that is not money)
_NUMBER_T: tuple[tuple[str, frozenset[str]], ...] = tuple((t, frozenset(tags.split())) for t, tags in (
    ("Figures for {l} are often rounded, so two sources may give slightly different numbers for the same {n}.", ""),
    ("{L} can vary a great deal from one {n} to the next.", ""),
    ("The average {l} across many {p} hides a wide spread.", ""),
    ("Comparing {l} between {p} only makes sense when the figures were taken the same way.", ""),
    ("A figure for {l} says little on its own; it is most useful next to the same figure for other {p}.", ""),
    ("Reports on {p} often lead with the {l}, since it is one of the easiest figures to compare.", "one thing"),
    ("When a source gives the {l} of {an_n}, it should also say when the figure was taken.", "thing"),
    ("{L} {be} one of the first things people ask about when they look up {an_n}.", ""),
    ("Older records of {l} for {p} are sometimes less precise than recent ones.", ""),
    ("A change in {l} over the years often says more about {an_n} than the figure itself.", "thing"),
    ("Sources do not always agree on the {l} of a given {n}.", "thing"),
    ("Round figures for {l} are often estimates rather than exact values.", ""),
    ("Unusual values of {l} get the most attention, though most {p} sit somewhere in the middle.", ""),
    ("{An_n} with an unusual {l} tends to attract attention in forums and in the press alike.", "one thing"),
    ("Anyone comparing {p} should check that each figure for {l} covers the same period.", "sum"),
    ("{L} {be} easy to compare across {p}, which is why lists of them are so often sorted by {l}.", ""),
    ("Instruments and hand measurements of {l} can differ, so careful sources say which was used.", "observed measured"),
    ("{L} {be} noted at the time of each {n}, not worked out afterwards.", "observed"),
))
_PROFILE_T = ("A typical entry for {an_n} gives {list}.", "Descriptions of {an_n} usually mention {list}.",
              "The basic facts about {an_n} are {list}.", "Listings of {p} generally show each one's {bare}.")
_GROUP_T = ("{P} are often grouped by {l}.", "Lists of {p} are commonly sorted or filtered by {l}.",
            "Most directories of {p} let readers narrow the list by {l}.", "{L} {be} one of the first things people check about {an_n}.",
            "Counts of {p} by {l} are a common way to summarise them.", "The {l} of {an_n} {be} usually stated near the top of any entry about it.")
_EVENT_T = ("Records note when each {n} {ev}.", "The date each {n} {ev} is part of {its} record.",
            "Most accounts of {an_n} mention when {it} {ev_it}.")
_EVENT_MORE_T = ("Sources sometimes disagree about when {an_n} {ev}, especially in older records.",
                 "Lists of {p} are often sorted by when each one {ev}.",
                 "Older sources often give only the year in which {an_n} {ev}, not the day.")
_DATE_T = ("Every {n} has {a_l} on record.", "The {l} of each {n} is kept as a calendar date.",
           "Sources sometimes give the {l} of {an_n} to the month only, or to the year.")
# which belongs to which: one sentence says so, one says how lists of the children are arranged
_BELONGS_T = ("Each {c} belongs to a single {pa}, and {an_pa} usually has several {cs}.",
              "{An_pa} can have many {cs}, but every {c} belongs to one {pa} only.", "Every {c} is attached to exactly one {pa}.")
_BELONGS_OPT_T = ("Each {c} belongs to a single {pa}, though {an_pa} may have none at all.",
                  "Not every {pa} has {cs}, but every {c} belongs to one {pa} only.")
_LOGGED_T = ("Each {c} is recorded against one {pa}, and {an_pa} builds up many {cs} over time.",
             "Every {c} is logged against exactly one {pa}.")
_LISTED_T = ("{Cs} are listed under the {pa} they belong to.", "Directories of {cs} are usually organised by {pa}.",
             "Looking up {an_c} usually starts with {its} {pa}.")
_LISTED_LOG_T = ("{Cs} are filed under the {pa} they belong to.", "Anyone looking for a particular {c} usually starts from its {pa}.",
                 "Logs of {cs} are kept {pa} by {pa}, so each one's record is a running list.")
_SERIES_T = ("A run of {cs} over time shows how {list} change at {an_pa}.",
             "{Cs} are dated, so a series of them tracks {list} through the seasons at each {pa}.",
             "A single {c} is a snapshot; the pattern in {list} only shows over many of them.")
_NAMED_T = ("{P} are usually known by name, and the same name can be spelled differently from one source to another.",
            "Names of {p} sometimes change, which can make older records hard to match.",
            "Two {p} with similar names are easy to confuse, so careful sources give more than the name.",
            "Short names and nicknames for {p} are common in conversation but rare in official records.")
_PERSON_NAMED_T = ("{P} are listed by full name in most records.", "Two {p} can share a name, so records tell them apart by other details.",
                   "Records of {p} sometimes spell a name in more than one way.")
_NAMELESS_T = ("Sources usually identify {an_n} by its {pa} and date rather than by a name.",
               "{An_n} is usually referred to by its {pa} and its date.")
_PERSON_T = ("{P} come and go, so lists of them date quickly.", "Biographical details of {p} are often incomplete in older sources.")
_RECORD_T = (
    "Where records of {p} are kept by hand, entries can lag behind events by days or weeks.",
    "Lists of {p} compiled by different people rarely agree in every detail, since each draws on its own sources.",
    "Older records of {p} tend to be less complete than recent ones.",
    "Mistakes in records of {p} are usually put right by a correction rather than by silently changing the entry.",
    "A figure quoted for {an_n} is only as good as the record it comes from.",
    "Records of {p} kept by different bodies do not always use the same definitions.",
    "Unofficial figures about {p} circulate widely but are best treated with caution until confirmed.",
    "Archived pages about {p} keep what was published at the time, even after the figures have changed.",
    "Duplicate entries and inconsistent spellings are a common nuisance in long lists of {p}.",
    "Information about {p} is scattered across many sources, and few of them are complete.",
    "Summaries of {p} tend to repeat whatever the first source said, errors included.",
    "Careful writers about {p} say where each figure comes from, so readers can check it.",
)
_COUNT_T = ("The {l} at {an_pa} is simply a count of the {cs} that belong to it, so it changes whenever one is added or removed.",
            "The {l} at {an_pa} goes up and down as {cs} are added or removed.")
_COUNT_LOG_T = ("The {l} at {an_pa} grows as new {cs} are recorded.", "The {l} at {an_pa} is a tally of the {cs} recorded there.")
_COUNT_NAMED_T = ("{An_pa}'s {l} is a plain count of its {cs}.", "The {l} of {an_pa} is simply how many {cs} it has.")
_SUM_T = ("{An_pa}'s {l} is the total of the {of} of its {cs}.", "Adding up the {of} of every {c} of {an_pa} gives its {l}.")
_MEAN_T = ("{An_pa}'s {l} is an average over its {cs}, so a single unusual {c} can pull it up or down.",
           "The {l} of {an_pa} is worked out as a mean across its {cs}.")
_EXTREME_T = ("{An_pa}'s {l} is the {most} {of} among its {cs}.", "The {l} of {an_pa} is set by whichever of its {cs} has the {most} {of}.")
_RANK_T = ("Rankings of {p} by {of}{within} put the {most} first, and positions shift as new figures come in.",
           "{An_n}'s rank by {of}{within} only means something against the other {p} in the same list.")
_SHARE_T = ("{An_n}'s {l} is its part of the total {of} of all {p}{within}.", "Shares of {of} add up across all {p}{within}.")
_DERIVE_T = ("{L} {be} worked out from other figures rather than recorded directly.", "{L} {be} calculated, not measured, from other entries in the record.")
_DESC_NP_T = ("The subject takes in {np}.", "Anyone following the subject soon comes across {np}.", "Writing on the subject tends to cover {np}.")
_ROOT_T = ("Most questions about {root} come down to {list}.", "Much of what people want to know about {root} concerns {list}.")


def spec_background(spec: M.WorldSpec, infos: Mapping[str, TableInfo] | None = None, seed: int | None = None,
                    pool: str | None = None) -> tuple[tuple[str, ...], bool]:
    """A spec's background pool, and whether it was made for the spec (and so must travel in the chrome context).

    Args:
        spec: the world's spec.
        infos: its tables as pages present them (:func:`~worldforge.corpus.vocab.table_info`, best with the generated
            frames); derived from the spec when absent.
        seed: the corpus's text seed (default: the spec's); it draws the composed sentences' templates.
        pool: the pool's name (default: the spec's ``archetype``, else its world name without a ``_YYYY`` year).

    Returns:
        ``(sentences, own)``: the spec's ``background`` sentences first, then ``background/<pool>.yaml``'s when that
        file exists (:func:`~worldforge.corpus.chrome.pool_file`), else sentences composed from the spec
        (:func:`compose_background`). ``own`` is false only for a pool file alone (its name says which pool). No
        sentence has a digit.
    """
    name = pool or spec.archetype or re.sub(r"_\d{4}$", "", spec.world)
    mine = tuple(dict.fromkeys(s.strip() for s in spec.background or () if s.strip() and not _has_digit(s)))
    if pool_file(name) is not None:
        shared = background_pool(name)
        return (tuple(dict.fromkeys(mine + shared)), True) if mine else (shared, False)
    composed = compose_background(spec, infos, spec.seed if seed is None else seed)
    return tuple(dict.fromkeys(mine + composed)), True


def compose_background(spec: M.WorldSpec, infos: Mapping[str, TableInfo] | None = None, seed: int = 0) -> tuple[str, ...]:
    """Background sentences about a spec's topic, made from the spec alone (see the module docstring).

    Args:
        spec: the world's spec: its ``description``, tables (nouns, references, cardinalities) and columns (labels,
            units, kinds: numbers, categories, dates and their events, aggregates, ranks, shares, derived columns).
        infos: its tables as pages present them (labels, units, kinds); derived from the spec when absent.
        seed: draws which template each sentence takes.

    Returns:
        Distinct sentences (about 40 to 60 for a spec of three tables), none with a digit, each naming a noun or a
        label of the spec; few or none for a spec with little to say (a lone table of names).
    """
    from worldforge.synth import column_rng

    infos = dict(infos) if infos is not None else {t: table_info(spec, t) for t in spec.tables}
    draw = _Drawer(column_rng(seed, spec.world, "background"))
    out: list[str] = []
    roots = [t for t in spec.tables if not spec.tables[t].references] or list(spec.tables)
    root = infos[roots[0]]
    out += _description(spec, root, infos, draw)
    children = [t for t in spec.tables if t not in roots]
    if children:
        out.append(draw(_ROOT_T, root=root.plural, list=_and([f"their {infos[t].plural}" for t in children[:3]])))
    units: dict[str, list[ColumnInfo]] = {}
    blocks: dict[str, list[str]] = {}  # each table's sentences, kept together (pages draw a pool's sentences in its order)
    more: dict[str, list[tuple[tuple[str, ...], dict[str, str]]]] = {}  # what else could be said of each table
    for t, table in spec.tables.items():
        info = infos[t]
        person = person_table(info.noun, _faker_person(table, info))
        draw.scope = t
        blocks[t] = _table(spec, t, info, infos, person, draw)
        parents = [(r, col.parent) for r, col in table.references.items() if col.parent in infos and col.parent != t]
        more[t] = [(_RECORD_T, _record_fields({"n": info.noun, "p": info.plural, "an_n": a_or_an(info.noun)}, parents, infos))]
        kinds = _kinds(table, info)
        for c, ci in info.columns.items():
            if ci.compose_only or c == info.label_column or kinds[c] in ("key", "name", "reference", "text", "bool"):
                continue
            blocks[t] += _column(spec, t, c, ci, kinds[c], info, infos, person, draw)
            if kinds[c] == "number" and not isinstance(table.columns[c], (M.AggregateColumn, M.RankColumn, M.ShareColumn, M.DeriveColumn)):
                more[t].append(_number_templates(spec, t, ci, info))
            if kinds[c] == "number" and ci.unit is not None and not isinstance(table.columns[c], M.AggregateColumn):
                units.setdefault(_unit_words(ci), []).append(ci)
    # a small spec says a little more of each table, with templates not used yet, so pages do not repeat a few sentences
    grown = True
    while grown and len(out) + sum(map(len, blocks.values())) < MIN_POOL:
        grown = False
        for t, options in more.items():
            draw.scope = t
            for templates, fields in options:
                sentence = draw.fresh(templates, **fields)
                if sentence is not None:
                    blocks[t].append(sentence)
                    grown = True
    for block in blocks.values():
        out += block
    draw.scope = None
    for words, cols in units.items():
        out += _unit_sentences(words, cols, draw)
    seen: dict[str, None] = {}
    for s in out:
        s = re.sub(r"\s+", " ", s).strip()
        if s and not _has_digit(s):
            seen.setdefault(s[:1].upper() + s[1:], None)
    return tuple(seen)


# -- the parts -------------------------------------------------------------------------------------------------------
class _Drawer:
    """Fills templates drawn by seed, preferring templates not used yet in this pool (one skeleton, one sentence)."""

    def __init__(self, rng: random.Random):
        self.rng, self.used = rng, set()
        self.scope: str | None = None  # the table being described: a template used again is never used twice for one table
        self.scoped: dict[str | None, set[str]] = {}

    def __call__(self, templates: tuple[str, ...], **fields: str) -> str:
        return self.some(templates, 1, **fields)[0]

    def fresh(self, templates: tuple[str, ...], **fields: str) -> str | None:
        """A sentence from a template not used yet in this pool, or ``None`` when every one is."""
        return self.some(templates, 1, **fields)[0] if any(t not in self.used for t in templates) else None

    def some(self, templates: tuple[str, ...], k: int, **fields: str) -> list[str]:
        """``k`` sentences from distinct templates, unused ones first (fewer when there are fewer templates)."""
        fresh = [t for t in templates if t not in self.used]
        if len(fresh) >= k:
            picks = self.rng.sample(fresh, k)
        else:
            here = self.scoped.setdefault(self.scope, set())
            rest = [t for t in templates if t not in fresh and t not in here] or [t for t in templates if t not in fresh]
            picks = fresh + self.rng.sample(rest, min(k - len(fresh), len(rest)))
        self.used.update(picks)
        self.scoped.setdefault(self.scope, set()).update(picks)
        return [_fill(t, fields) for t in picks]


class _Fields(dict):
    """Template fields; ``{X}`` with a capital is field ``x`` capitalised (``{An_pa}``: "A lighthouse")."""

    def __missing__(self, key: str) -> str:
        low = key[:1].lower() + key[1:]
        if low != key and low in self:
            v = self[low]
            return v[:1].upper() + v[1:]
        raise KeyError(key)


def _fill(template: str, fields: Mapping[str, str]) -> str:
    text = template.format_map(_Fields(fields))
    return text[:1].upper() + text[1:]


def _description(spec: M.WorldSpec, root: TableInfo, infos: Mapping[str, TableInfo], draw: _Drawer) -> list[str]:
    """The spec's description without its authoring words: a noun phrase in a sentence, a full sentence as it is
    (sentences with a digit or a template field left out)."""
    out = []
    words = {w for i in infos.values() for w in (i.noun + " " + i.plural).lower().split()}
    for part in re.split(r"(?<=[.!?])\s+", (spec.description or "").strip()):
        if not part or _has_digit(part) or "{" in part:
            continue
        text = _META.sub("", part).strip().rstrip(".!?").strip(" ,;:")
        text = re.sub(r"\s+", " ", re.sub(r"\(\s*\)", "", text))
        text = re.sub(r"\b([Aa])n? (\w)", lambda m: _article(m.group(1), m.group(2)), text)
        if len(text.split()) < 3:
            continue
        if _FINITE.search(text):
            out.append(text[:1].upper() + text[1:] + ".")
            continue
        first = text.split()[0]
        if first.lower() in words or first.lower() in ("a", "an", "the", "some", "several", "many"):
            text = first.lower() + text[len(first):]
        out.append(draw(_DESC_NP_T, np=text))
    return out


def _article(a: str, head: str) -> str:
    """``a``/``an`` before a word's first letter, once a word between them is gone ("an invented orchard" -> "an orchard")."""
    art = "an" if head.lower() in "aeiou" else "a"
    return f"{art.capitalize() if a.isupper() else art} {head}"


def _record_fields(base: dict[str, str], refs: list[tuple[str, str]], infos: Mapping[str, TableInfo]) -> dict[str, str]:
    """The fields of the sentences on how records are kept: rows of a child table named with their parent ("readings of
    sites", "readings of stations"), so that two worlds whose rows share a noun do not share the sentence."""
    return {**base, "p": f"{base['p']} of {infos[refs[0][1]].plural}"} if refs else base


def _table(spec: M.WorldSpec, t: str, info: TableInfo, infos: Mapping[str, TableInfo], person: bool, draw: _Drawer) -> list[str]:
    """What a table's rows are: what an entry gives, how rows are called, whom they belong to, how records of them are kept."""
    table = spec.tables[t]
    n, p = info.noun, info.plural
    base = {"n": n, "p": p, "an_n": a_or_an(n), "its": "their" if person else "its"}
    out = []
    kinds = _kinds(table, info)
    attrs = [c for c in info.columns if not info.columns[c].compose_only and c not in (info.label_column, table.primary_key)]
    profile = [info.columns[c].label for c in attrs if kinds[c] in ("number", "share", "category")]
    if len(profile) >= 2:
        out.append(draw(_PROFILE_T, **_profile(profile[:4], base["its"]), **base))
        if len(profile) >= 6:
            out.append(draw(_PROFILE_T, **_profile(profile[4:8], base["its"]), **base))
    refs = [(r, col.parent) for r, col in table.references.items() if col.parent in infos and col.parent != t]
    nameless = info.label_column == table.primary_key
    if person:
        out.append(draw(_PERSON_NAMED_T, **base))
    elif nameless and refs and "{n}" not in (info.designation or ""):
        out.append(draw(_NAMELESS_T, pa=infos[refs[0][1]].noun, **base))
    elif not nameless:
        out.append(draw(_NAMED_T, **base))
    for r, parent in refs:
        pi = infos[parent]
        card = table.columns[r].cardinality
        fields = {**base, "c": n, "cs": p, "pa": pi.noun, "an_pa": a_or_an(pi.noun), "an_c": a_or_an(n)}
        logged = nameless and not person
        out.append(draw(_LOGGED_T if logged else _BELONGS_OPT_T if card is not None and card.min == 0 else _BELONGS_T, **fields))
        out.append(draw(_LISTED_LOG_T if logged else _LISTED_T, **fields))
        series = [info.columns[c].label for c in attrs if kinds[c] == "number"]
        if nameless and not person and any(kinds[c] == "date" for c in attrs) and len(series) >= 2:
            out.append(draw(_SERIES_T, list=_and(series[:3]), **fields))
    out += draw.some(_RECORD_T, 3, **_record_fields(base, refs, infos))
    if person:
        out.append(draw(_PERSON_T, **base))
    return out


def _profile(labels: list[str], its: str) -> dict[str, str]:
    """A profile's labels as a list after a possessive: ``list`` "its city, style and the number of beers" and ``bare``
    "city, style and the number of beers" (a count's label takes "the", never "its number of")."""
    plain = [lab for lab in labels if not lab.lower().startswith(("number of", "count of"))]
    counts = [f"the {lab}" for lab in labels if lab not in plain]
    return {"list": f"{its} {_and(plain + counts)}" if plain else _and(counts), "bare": _and(plain + counts)}


def _column(spec: M.WorldSpec, t: str, c: str, ci: ColumnInfo, kind: str, info: TableInfo, infos: Mapping[str, TableInfo],
            person: bool, draw: _Drawer) -> list[str]:
    """Sentences about one column: how it is grouped, dated, counted, totalled, ranked or compared."""
    col = spec.tables[t].columns[c]
    n, p = info.noun, info.plural
    base = {"n": n, "p": p, "an_n": a_or_an(n), "l": ci.label, "be": "are" if _plural_label(ci.label) else "is",
            "its": "their" if person else "its"}
    if kind == "category":
        return draw.some(_GROUP_T, 2, **base)
    if kind == "date":
        fr = frame_for(ci.label, "date", None, None, name=c, event=ci.event, person=person)
        ev = fr.vps[0].removesuffix(" on {value}") if fr.event and fr.vps and fr.vps[0].endswith(" on {value}") else None
        if ev:
            fields = {**base, "ev": ev, "ev_it": conjugate(ev, True) if person else ev, "it": "they" if person else "it"}
            return [draw(_EVENT_T, **fields), draw(_EVENT_MORE_T, **fields)]
        if fr.noun:
            return draw.some(_DATE_T, 2, a_l=a_or_an(ci.label), **base)
        return []
    if isinstance(col, M.AggregateColumn) and col.child in infos:
        child = infos[col.child]
        of = child.columns[col.of].label if col.of and col.of in child.columns else ""
        fields = {**base, "pa": n, "an_pa": a_or_an(n), "c": child.noun, "cs": child.plural, "of": of}
        if col.fn == "count":
            if not ci.label.lower().startswith("number of"):
                return [draw(_COUNT_NAMED_T, **fields)]
            return [draw(_COUNT_LOG_T if _observations(spec, col.child, child) else _COUNT_T, **fields)]
        if not of:
            return []
        if col.fn == "sum":
            return [draw(_SUM_T, **fields)]
        if col.fn == "mean":
            return [draw(_MEAN_T, **fields)]
        return [draw(_EXTREME_T, most="highest" if col.fn == "max" else "lowest", **fields)]
    if isinstance(col, (M.RankColumn, M.ShareColumn)):
        of = info.columns[col.of].label if col.of in info.columns else ""
        if not of:
            return []
        group = spec.tables[t].columns.get(col.within) if col.within else None
        parent = infos[group.parent].noun if isinstance(group, M.ReferenceColumn) and group.parent in infos else None
        if isinstance(col, M.RankColumn):
            within = f" within each {parent}" if parent else ""
            return [draw(_RANK_T, of=of, within=within, most="highest" if col.descending else "lowest", **base)]
        return [draw(_SHARE_T, of=of, within=f" in the same {parent}" if parent else "", **base)]
    if isinstance(col, M.DeriveColumn):
        return [draw(_DERIVE_T, **base)]
    if kind == "number":
        many = sum(k == "number" for k in _kinds(spec.tables[t], info).values()) > 3  # one sentence each, or pages repeat skeletons
        templates, fields = _number_templates(spec, t, ci, info)
        return draw.some(templates, 1 if many else 2, **fields)
    return []


def _number_templates(spec: M.WorldSpec, t: str, ci: ColumnInfo, info: TableInfo) -> tuple[tuple[str, ...], dict[str, str]]:
    """The :data:`_NUMBER_T` templates that fit a number column (by its label's number, its unit, whether it adds up and
    whether its rows are observations), and their fields."""
    fields = {"n": info.noun, "p": info.plural, "an_n": a_or_an(info.noun), "l": ci.label, "be": "are" if _plural_label(ci.label) else "is"}
    unfit = {"thing" if _observations(spec, t, info) else "observed"} | ({"one"} if fields["be"] == "are" else set())
    unfit |= set() if ci.additive else {"sum"}
    unfit |= set() if ci.unit is not None and ci.unit.kind in ("measure", "time") and _unit_words(ci) in _UNIT_WORDS.values() else {"measured"}
    return tuple(x for x, tags in _NUMBER_T if not tags & unfit), fields


def _unit_sentences(words: str, cols: list[ColumnInfo], draw: _Drawer) -> list[str]:
    """What the labels measured in one unit are measured in ("Tower height and wave height are measured in metres"), three
    labels a sentence, and where the unit is often converted, a sentence on that."""
    labels = list(dict.fromkeys(ci.label for ci in cols if not _unit_in_label(ci)))
    if not labels or not words:
        return []
    kind = cols[0].unit.kind if cols[0].unit else "measure"
    out = []
    for i in range(0, len(labels), 3):
        group = labels[i:i + 3]
        fields = {"l": _and(group), "be": "are" if len(group) > 1 or _plural_label(group[0]) else "is", "u": words}
        if kind == "money":
            out.append(draw(_UNIT_MONEY_T, **fields))
        elif kind == "percent":
            out.append(draw(_UNIT_PERCENT_T, **fields))
        elif words.startswith("a number of "):
            out.append(draw(_UNIT_COUNT_T, **{**fields, "u": words.removeprefix("a number of ")}))
        else:
            out.append(draw(_UNIT_T, **fields))
            if words in _ALT_UNITS:
                out.append(draw(_CONVERT_T, alt=_ALT_UNITS[words], l=group[0]))
    return out


def _unit_words(ci: ColumnInfo) -> str:
    """A column's unit as a sentence writes it: ``km/h`` -> "kilometres per hour", ``million USD`` -> "millions of US dollars",
    ``members`` -> "a number of members" (a count noun); "" for a unit a sentence cannot name (a share, a calendar year)."""
    unit = ci.unit
    if unit is None or unit.kind in ("share", "year"):
        return ""
    if unit.kind == "percent":
        return "percentages"
    base = unit.base
    words = _UNIT_WORDS.get(base.lower()) or _UNIT_WORDS.get(base)
    if words is None:
        if unit.kind == "time":
            words = base if base.endswith("s") else plural_noun(base)
        elif base[:1].islower() and singular_of_plural(base.split()[0]):  # a count noun: "members", "flights per week"
            return f"{_SCALE_WORDS[unit.scale]} {base}" if unit.scale in _SCALE_WORDS else f"a number of {base}"
        else:
            words = base
    scale = _SCALE_WORDS.get(unit.scale, "") if unit.scale != 1 else ""
    return f"{scale} {words}".strip()


def _unit_in_label(ci: ColumnInfo) -> bool:
    """The label already names the unit ("years of service" in years, "membership" in members): no sentence on the unit."""
    if ci.unit is None:
        return False
    base = ci.unit.base.lower().split()
    stem = (singular_of_plural(base[0]) or base[0]) if base else ""
    return bool(stem) and any(w.startswith(stem) for w in ci.label.lower().split())


def _plural_label(label: str) -> bool:
    """Whether a label's head noun is plural ("shifts per month", "hours without light": "are"; "number of keepers": "is")."""
    words = label.lower().split()
    head = next((words[:i] for i, w in enumerate(words) if w in _PREPS), words)
    return bool(head) and head[-1].endswith("s") and singular_of_plural(head[-1]) is not None


def _faker_person(table: M.TableSpec, info: TableInfo) -> bool:
    """Whether rows are named by a Faker person name alone (``{{first_name}} {{last_name}}``; ``{{last_name}} Point Light``
    names a thing)."""

    col = table.columns.get(info.label_column)
    if isinstance(col, M.FakerColumn) and col.template and re.sub(r"\{\{\s*\w+\s*\}\}", "", col.template).strip():
        return False
    return faker_person(col)


def _observations(spec: M.WorldSpec, t: str, info: TableInfo) -> bool:
    """Whether a table's rows are observations or events (storms, readings): no names, a date, a parent to file them under."""
    table = spec.tables[t]
    return (info.label_column == table.primary_key and bool(table.references)
            and any(_kinds(table, info)[c] == "date" for c in info.columns))


def _kinds(table: M.TableSpec, info: TableInfo) -> dict[str, str]:
    """Each column's kind; numbers of a table not generated yet (no frame to read dtypes from) read as numbers."""
    out = {}
    for c, ci in info.columns.items():
        col = table.columns[c]
        numeric = isinstance(col, (M.NumberColumn, M.AggregateColumn)) or (isinstance(col, M.DeriveColumn) and col.dtype in ("int", "float"))
        out[c] = "number" if ci.kind == "text" and numeric else ci.kind
    return out


def _and(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    items = [i for i in items if i]
    if not items:
        return ""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _has_digit(text: str) -> bool:
    return any(ch.isdigit() for ch in text)
