"""Genres that fit the entity, designations said once, and clauses for labels without a verb.

Measurements (rows designated by their parent and a date: a resort's snow observation, a lighthouse's logged storm)
get datasets and timelines and are listed in their parent's article, but no news story, press release, rumour or forum
thread of their own; a designation that holds a cell (its date, its parent's name) is never followed by that cell again;
labels with no ``verb`` hint ("closes", "days", "people caught", "lifts") read as clauses.
"""

from __future__ import annotations

import random
import re
from functools import cache
from pathlib import Path

import polars as pl
import pytest

from tests.conftest import BUNDLED
from worldforge.corpus import generate_pages
from worldforge.corpus.builder import CorpusBuilder
from worldforge.corpus.kinds import GENRES_BY_KIND, fits, table_kinds
from worldforge.corpus.lexicon import Referent, frame_for, is_past
from worldforge.corpus.measures import bad_constructions, prose_sentences
from worldforge.corpus.planner import Said, realise
from worldforge.corpus.quantity import format_date
from worldforge.corpus.vocab import row_labels, table_info
from worldforge.spec.load import load_spec, spec_from_dict
from worldforge.synth import build_world

ROOT = Path(__file__).resolve().parents[2]
SKI = ROOT / "tests" / "corpus" / "data" / "ski_resorts_2036.yaml"
LIGHTHOUSES = ROOT / "bench" / "specs" / "lighthouse_keepers_2033.yaml"
OWN_PAGES = ("news", "press_release", "rumor", "forum")
_DATE_STYLES = ("mdy_short", "mdy_abbr", "mdy_long", "dmy_long", "iso")


@cache
def _world(path: Path):
    spec = load_spec(path)
    tables = build_world(spec)
    return spec, tables, generate_pages(spec, tables)


def _kinds(spec, tables):
    b = CorpusBuilder(spec, tables, None, spec.seed)
    return table_kinds(spec, tables, b.info, b.person)


def test_tables_are_classified_by_what_their_rows_are():
    spec, tables, _ = _world(SKI)
    assert _kinds(spec, tables) == {"resorts": "thing", "patrollers": "person", "observations": "measurement", "rescues": "event"}
    spec, tables, _ = _world(LIGHTHOUSES)  # "{{last_name}} Point Light" names a lighthouse, not a person
    assert _kinds(spec, tables) == {"lighthouses": "thing", "keepers": "person", "storms": "measurement"}
    assert not fits("measurement", "news") and not fits("measurement", "forum") and fits("measurement", "dataset")
    assert fits("person", "profile") and not fits("person", "rumor") and GENRES_BY_KIND["event"] >= {"news", "timeline"}


@pytest.mark.parametrize("path, table", [(SKI, "observations"), (LIGHTHOUSES, "storms")])
def test_measurements_get_datasets_timelines_and_their_parents_articles_not_news_or_threads(path, table):
    spec, tables, pages = _world(path)
    info = table_info(spec, table, tables[table])
    pk = spec.tables[table].primary_key
    about = {p.url: p for p in pages if any(f.table_name == table and f.section == "lead" for f in p.facts)}
    own = [p for p in about.values() if p.page_type in OWN_PAGES]
    assert own == [], [(p.page_type, p.title) for p in own[:5]]
    assert any(p.page_type == "dataset" and p.title.startswith(f"Dataset: {info.plural} in ") for p in pages)
    listed = {f.row_key for p in pages if p.page_type == "dataset" for f in p.facts if f.table_name == table}
    assert listed == {str(k) for k in tables[table][pk]}  # every measurement in its dataset
    timelines = [p for p in pages if p.page_type == "timeline" and f"/{table}/" in p.url]
    assert timelines and {f.row_key for p in timelines for f in p.facts if f.table_name == table} == listed
    # each one is listed in its parent's article
    labels = row_labels(spec, tables)[table]
    ref, col = next(iter(spec.tables[table].references.items()))
    articles = {f.row_key: p.body_md for p in pages if p.page_type == "encyclopedia" and f"/wiki/{col.parent}/" in p.url
                for f in p.facts[:1] if f.table_name == col.parent}
    for key, parent in zip(tables[table][pk], tables[table][ref], strict=True):
        assert f"[{labels[key].text}](" in articles[str(parent)]


@pytest.mark.parametrize("name", BUNDLED + ["ski_resorts_2036", "lighthouse_keepers_2033"])
def test_no_designation_restates_the_cell_it_holds(specs, name):
    """"Mont Silence observation of 6 February 2036 was observed on 6 February 2036": never, in any date style; and no
    designation carries a bare "(2)"."""
    path = SKI if name == "ski_resorts_2036" else LIGHTHOUSES if name == "lighthouse_keepers_2033" else None
    spec, tables, pages = _world(path) if path else (specs[name], None, None)
    if path is None:
        tables = build_world(spec)
        pages = generate_pages(spec, tables)
    dated = []
    for t, labs in row_labels(spec, tables).items():
        for key, lab in labs.items():
            assert not re.search(r" \(\d+\)$", lab.text), lab.text
            for ct, ck, cc, _ in lab.cells:
                if ct == t and ck == str(key) and tables[t].schema[cc].is_temporal():
                    day = tables[t].filter(pl.col(spec.tables[t].primary_key) == key)[cc][0]
                    dated.append((lab.text, {format_date(day, s) for s in _DATE_STYLES}))
    assert name == "mars_colony_2030" or dated
    by_label = dict(dated)
    if not by_label:
        return
    pattern = re.compile("|".join(re.escape(x) for x in sorted(by_label, key=len, reverse=True)))
    for p in pages:
        for line in (p.title, *prose_sentences(p.body_md)):
            rest = pattern.sub(" ", line)  # the sentence without the designations it names rows by
            for m in pattern.finditer(line):
                assert not any(form in rest for form in by_label[m.group(0)]), (p.page_type, line)


def _read(items, ref=("Mont Weber", "resort"), seeds=60):
    return " ".join(" ".join(realise(random.Random(s), Referent(*ref), items, voice)) for s in range(seeds) for voice in ("encyclopedia", "news", "forum"))


@pytest.mark.parametrize("label, kind, unit, ukind, value, clause", [
    ("closes", "date", None, None, "7 May 2030", "closes on 7 May 2030"),
    ("days", "number", "days", "time", "11 days", "has 11 days on record"),
    ("days", "number", None, None, "11", "has 11 days on record"),
    ("people caught", "number", None, None, "3", "caught 3 people"),
    ("people caught", "number", None, None, "1", "caught 1 person"),
    ("lifts", "number", None, None, "12", "has 12 lifts"),
    ("lifts open", "number", None, None, "13", "has 13 lifts open"),
    ("shifts per month", "number", None, None, "14", "has 14 shifts per month"),
    ("trained in", "category", None, None, "Lyon", "was trained in Lyon"),
])
def test_labels_without_a_verb_read_as_clauses(label, kind, unit, ukind, value, clause):
    from worldforge.corpus.lexicon import fill

    fr = frame_for(label, kind, unit, ukind, name=label.replace(" ", "_"))
    said = [fill(v, value) for v in fr.vps]
    assert clause in said, said
    text = _read([Said(fr, value), Said(frame_for("top elevation", "number", "m", "measure"), "3,140 m")])
    assert bad_constructions(text) == {}, bad_constructions(text)
    assert not re.search(r"\blisted (with|under) [^.]* for\b|\b[Ii]ts (closes|lifts|days|people caught|lifts open) (is|are)\b", text), text


def test_a_date_named_by_a_present_verb_gets_a_dated_label():
    spec, tables, pages = _world(SKI)
    info = table_info(spec, "resorts", tables["resorts"])
    assert info.columns["opens"].label == "opening date"  # derived from the name: "opens" -> "opening date"
    assert info.columns["closes"].label == "closes"  # the spec's own label stays, and its frame is a verb
    text = "\n".join(p.body_md for p in pages)
    assert "closes on " in text and not re.search(r"\b[Ii]ts closes\b", text)


def test_it_was_on_a_date_that_takes_a_past_tense():
    assert is_past("launched on") and is_past("was announced") and is_past("first flew")
    assert not is_past("is due to finish") and not is_past("expires") and not is_past("closes") and not is_past("will open")
    doc = {"world": "trials_2031", "title": "Trials, 2031", "seed": 5, "target_year": 2031, "tables": {
        "sponsors": {"primary_key": "sponsor_id", "rows": 12, "columns": {
            "sponsor_id": {"kind": "sequence"},
            "name": {"kind": "faker", "template": "{{last_name}} Pharma", "unique": True, "weighted": False}}},
        "trials": {"primary_key": "trial_id", "columns": {
            "trial_id": {"kind": "sequence"},
            "sponsor_id": {"kind": "reference", "parent": "sponsors", "cardinality": {"min": 26, "max": 30}},
            "code": {"kind": "format", "template": "KIRE-{n}", "start": 1},
            "completion": {"kind": "date", "start": "Y-01-01", "end": "Y+2-12-31", "label": "primary completion",
                           "verb": "is due to finish on {value}"},
            "enrolment": {"kind": "number", "dtype": "int", "min": 20, "max": 900, "label": "enrolment"}}}}}
    spec = spec_from_dict(doc)
    pages = generate_pages(spec, build_world(spec))
    leads = [p.lead for p in pages if p.page_type == "news"]
    assert len(leads) > 200 and any(" is due to finish" in x for x in leads)
    slips = [x for x in leads if re.search(r"\bIt was on [^.]* that [^.]* is due to finish\b", x)]
    assert slips == [], slips[:3]
    assert all(bad_constructions(x) == {} for x in leads)


def test_only_versioned_products_get_a_rumoured_successor(specs):
    """Phone models carry a model number and get rumour pages; a lighthouse, a resort, a team gets none (it has no
    successor)."""
    spec = specs["smartphones_2029"]
    tables = build_world(spec)
    assert _kinds(spec, tables)["models"] == "product"
    pages = generate_pages(spec, tables)
    rumoured = {f.table_name for p in pages if p.page_type == "rumor" for f in p.facts if f.section == "lead"}
    assert rumoured == {"models"}
    for path in (SKI, LIGHTHOUSES):
        spec, tables, pages = _world(path)
        assert "product" not in _kinds(spec, tables).values()
        assert not [p.title for p in pages if p.page_type == "rumor"]


def test_running_text_never_writes_an_iso_date():
    """Spec sheets and datasets list ISO dates; a sentence on any page writes a date as prose does."""
    _, _, pages = _world(LIGHTHOUSES)
    iso = [s for p in pages for s in prose_sentences(p.body_md) if re.search(r"\b\d{4}-\d{2}-\d{2}\b", s) and not s.startswith("|")]
    assert iso == [], iso[:5]


@pytest.mark.parametrize("label, kind, unit, ukind, noun, value, said", [
    ("island", "category", None, None, "port", "Mull", "is on Mull"),
    ("county", "category", None, None, "library system", "Kent", "is in Kent"),
    ("style", "category", None, None, "beer", "Pils", "is a Pils beer"),
    ("style", "category", None, None, "beer", "IPA", "is an IPA beer"),
    ("type of buyer", "category", None, None, "offtaker", "retailer", "is a retailer"),
    ("vessel type", "category", None, None, "vessel", "catamaran", "is a catamaran vessel"),
    ("type", "category", None, None, "elevator", "passenger", "is a passenger elevator"),  # never "is a passenger"
    ("type", "category", None, None, "swimming pool", "indoor", "is an indoor swimming pool"),  # never "is an indoor"
    ("lift type", "category", None, None, "lift", "chairlift", "is a chairlift"),  # never "a chairlift lift"
    ("nationality", "category", None, None, "runner", "Germany", "is from Germany"),
    ("rank", "category", None, None, "firefighter", "senior firefighter", "is a senior firefighter"),
    ("marathons run in 2036", "number", None, None, "runner", "2", "ran 2 marathons in 2036"),
    ("defects found", "number", None, None, "inspection", "1", "found 1 defect"),
    ("headcount", "number", "people", None, "maker", "1,452 people", "employs 1,452 people"),
    ("concert hall capacity", "number", "seats", None, "orchestra", "888 seats", "has 888 seats"),
    ("year built", "number", "calendar year", "year", "vessel", "1997", "was built in 1997"),
    ("year of debut", "number", "calendar year", "year", "soloist", "2009", "debuted in 2009"),
    ("languages spoken", "number", "languages", None, "warden", "3 languages", "speaks 3 languages"),
    ("price per half litre", "number", "EUR", "money", "beer", "€4.50", "costs €4.50 per half litre"),
    ("alcohol by volume", "number", "percent", "percent", "beer", "7.7%", "is 7.7% ABV"),
    ("opening hours", "number", "hours per week", "time", "library", "36 hours per week", "is open 36 hours per week"),
    ("annual visitors", "number", "visitors", None, "department", "234,063 visitors", "has 234,063 visitors a year"),
    ("number of employees", "number", "people", None, "brewery", "26 people", "employs 26 people"),
])
def test_the_lexicon_says_what_it_is_sure_of(label, kind, unit, ukind, noun, value, said):
    from worldforge.corpus.lexicon import fill

    values = {"nationality": ("Germany", "Spain"), "rank": ("firefighter", "senior firefighter", "squad boss")}.get(label, ())
    fr = frame_for(label, kind, unit, ukind, name=label.replace(" ", "_"), noun_of_row=noun, person=label in ("nationality", "rank"),
                   values=values)
    assert fr.prose and said in [fill(v, value) for v in fr.vps], fr


@pytest.mark.parametrize("label, kind, unit, ukind", [
    ("series", "category", None, None),            # "its series is gala"
    ("farming method", "category", None, None),    # "its farming method is organic"
    ("status", "category", None, None),            # "its status is on time"
    ("concert date", "date", None, None),          # "has a concert date of"
    ("ascent from the valley", "number", "m", "measure"),  # "its ascent from the valley is 1,260 m"
    ("loans in 2032", "number", "loans", None),    # "its loans in 2032 are 109,736 loans"
    ("days until next inspection", "number", "days", "time"),  # "has 180 days until next inspection"
    ("days after launch", "number", "days", "time"),  # "is dated 184 days after launch"
])
def test_frames_the_lexicon_is_not_sure_of_stay_in_tables(label, kind, unit, ukind):
    """A bare copula, a number with no verb, a date with no event: said in infoboxes and tables, never in a sentence."""
    assert not frame_for(label, kind, unit, ukind, name=label.replace(" ", "_")).prose
    assert frame_for("conductor", "text", None, None, role=True).prose  # a role held by a person: "its conductor is Lucas Jimenez"


def test_absences_are_never_words_in_a_sentence():
    """"none" is a value of the table, an absence in prose: never "is a none player" or "its title is none"."""
    doc = {"world": "clubs_2032", "title": "Chess clubs, 2032", "seed": 3, "target_year": 2032, "tables": {
        "clubs": {"primary_key": "club_id", "rows": 40, "columns": {
            "club_id": {"kind": "sequence"},
            "name": {"kind": "faker", "template": "{{last_name}} Chess Club", "unique": True, "weighted": False},
            "city": {"kind": "choice", "values": ["Leeds", "York", "Hull"]}}},
        "players": {"primary_key": "player_id", "columns": {
            "player_id": {"kind": "sequence"},
            "club_id": {"kind": "reference", "parent": "clubs", "cardinality": {"min": 7, "max": 10}},
            "name": {"kind": "faker", "provider": "name", "unique": True},
            "title": {"kind": "choice", "values": ["none", "FM", "IM", "GM"], "weights": [6, 2, 1, 1], "label": "FIDE title"},
            "rating": {"kind": "number", "dtype": "int", "min": 1200, "max": 2700, "label": "rating"}}}}}
    spec = spec_from_dict(doc)
    pages = generate_pages(spec, build_world(spec))
    said = [s for p in pages for s in prose_sentences(p.body_md) if not s.startswith("|")]
    assert said and not [s for s in said if re.search(r"\bnone\b", s, re.I)], [s for s in said if "none" in s.lower()][:3]
    tables = "\n".join(p.body_md for p in pages)
    assert "| none |" in tables  # the value stays where a table lists it


def test_press_releases_come_from_organisations_about_recent_events(specs):
    """A brand announces a phone model of this year; a lighthouse announces no keeper, and nobody announces a 1933 opening."""
    from worldforge.corpus.kinds import is_organisation

    spec = specs["smartphones_2029"]
    tables = build_world(spec)
    pages = [p for p in generate_pages(spec, tables) if p.page_type == "press_release"]
    assert pages
    b = CorpusBuilder(spec, tables, None, spec.seed, None)
    try:
        issuers = {f.table_name for p in pages for f in p.facts if f.section == "lead" and f.table_name != "models"}
        assert issuers and all(is_organisation(b.info[t].noun) for t in issuers), issuers
        assert all(p.published is None or (b.as_of - p.published).days <= 366 for p in pages)
    finally:
        b.close()
    _, _, light = _world(LIGHTHOUSES)
    assert not [p for p in light if p.page_type == "press_release"]


def test_comparatives_fit_what_is_measured():
    from worldforge.corpus.claims import read
    from worldforge.corpus.context import _scale

    assert _scale("running time")[0] == "longest" and _scale("tickets sold")[0] == "most" and _scale("number of berths")[1] == "fewest"
    assert _scale("maximum draught")[2] == "deeper" and _scale("vineyard area")[0] == "largest" and _scale("altitude")[0] == "highest"
    assert _scale("alcohol by volume")[0] == "highest"  # "volume" is not what is measured here
    got = read("the third-deepest maximum draught of the 14 ports", "maximum draught")
    assert got.extreme == "high" and got.position == 3 and read("deeper than that of Oban").comparative == "more"


def test_names_repeated_between_parents_are_said_with_their_parent():
    """Every boat has a "Race 3": its results are "Race 3 of Plover" (pages, tasks and the oracle share the label), a
    record with no news, forum thread, fact sheet or comparison of its own; a category of codes ("M", "F") groups
    nothing; a person is "the seasonal lifeguard", never "the seasonal"."""
    doc = {"world": "regatta_2034", "title": "Summer regatta, 2034", "seed": 5, "target_year": 2034, "tables": {
        "boats": {"primary_key": "boat_id", "rows": 30, "columns": {
            "boat_id": {"kind": "sequence"},
            "name": {"kind": "faker", "template": "{{first_name}}", "unique": True, "weighted": False},
            "sex": {"kind": "choice", "values": ["M", "F"], "label": "skipper sex"},
            "length_ft": {"kind": "number", "min": 20, "max": 45, "decimals": 1, "unit": "ft", "label": "length overall"}}},
        "results": {"primary_key": "result_id", "columns": {
            "result_id": {"kind": "sequence"},
            "boat_id": {"kind": "reference", "parent": "boats", "cardinality": {"min": 6, "max": 6}},
            "race": {"kind": "format", "template": "Race {n}", "counter_within": "boat_id"},
            "elapsed_min": {"kind": "number", "dtype": "int", "min": 55, "max": 210, "unit": "minutes", "label": "elapsed time"}}},
        "crew": {"primary_key": "crew_id", "columns": {
            "crew_id": {"kind": "sequence"},
            "boat_id": {"kind": "reference", "parent": "boats", "cardinality": {"min": 3, "max": 4}},
            "name": {"kind": "faker", "provider": "name", "unique": True},
            "contract": {"kind": "choice", "values": ["seasonal", "part-time"], "label": "contract type"}}}}}
    spec = spec_from_dict(doc)
    tables = build_world(spec)
    labels = row_labels(spec, tables)
    boats = {r["boat_id"]: r["name"] for r in tables["boats"].to_dicts()}
    results = tables["results"].to_dicts()
    assert all(labels["results"][r["result_id"]].text == f"{r['race']} of {boats[r['boat_id']]}" for r in results)
    assert len({lab.text for lab in labels["results"].values()}) == len(results)
    assert labels["boats"][1].text == boats[1]  # a unique name stays as it is
    b = CorpusBuilder(spec, tables, None, spec.seed, None)
    try:
        assert b.kind("results") == "measurement"
    finally:
        b.close()
    pages = generate_pages(spec, tables)
    own = {p.page_type for p in pages if " of " in p.title and p.title.startswith("Race ")}
    assert own and not own & {"news", "forum", "comparison", "profile", "rumor"}, own
    said = [s for p in pages for s in prose_sentences(p.body_md) if not s.startswith("|")]
    assert not [s for s in said if re.search(r"whose skipper sex is|\bthe (seasonal|part-time)\b(?! crew)", s)], \
        [s for s in said if "sex" in s or "seasonal" in s][:5]


def test_categories_say_what_they_are_not_whose_label_is():
    """"one of 7 red pistes of X", "the 12 lifts made by Doppelmayr", "is 1.8 km long": never "whose difficulty is red",
    "whose manufacturer is Doppelmayr", "has a piste length of 1.8 km", nor a rank said as "The third-longest ... belongs to"."""
    doc = {"world": "ski_2038", "title": "Ski resorts, 2038", "seed": 11, "target_year": 2038, "tables": {
        "resorts": {"primary_key": "resort_id", "rows": 16, "columns": {
            "resort_id": {"kind": "sequence"},
            "name": {"kind": "faker", "template": "{{last_name}} Valley", "unique": True, "weighted": False},
            "day_pass_eur": {"kind": "number", "dtype": "int", "min": 40, "max": 90, "unit": "EUR", "label": "day pass price"}}},
        "pistes": {"primary_key": "piste_id", "columns": {
            "piste_id": {"kind": "sequence"},
            "resort_id": {"kind": "reference", "parent": "resorts", "cardinality": {"min": 11, "max": 12}},
            "name": {"kind": "faker", "template": "{{first_name}} Run", "unique": True, "weighted": False},
            "difficulty": {"kind": "choice", "values": ["blue", "red", "black"]},
            "length_km": {"kind": "number", "min": 0.5, "max": 6, "decimals": 1, "unit": "km", "label": "piste length"}}},
        "lifts": {"primary_key": "lift_id", "columns": {
            "lift_id": {"kind": "sequence"},
            "resort_id": {"kind": "reference", "parent": "resorts", "cardinality": {"min": 8, "max": 10}},
            "name": {"kind": "faker", "template": "{{last_name}} Express", "unique": True, "weighted": False},
            "manufacturer": {"kind": "choice", "values": ["Doppelmayr", "Leitner", "Poma"]},
            "rise_m": {"kind": "number", "dtype": "int", "min": 80, "max": 900, "unit": "m", "label": "vertical rise"}}}}}
    spec = spec_from_dict(doc)
    pages = generate_pages(spec, build_world(spec))
    said = [s for p in pages for s in prose_sentences(p.body_md) if not s.startswith("|")]
    glued = [s for s in said if re.search(r"whose (difficulty|manufacturer) is|has a piste length of| belongs to ", s)]
    assert not glued, glued[:5]
    assert any(re.search(r"\bone of \d+ (blue|red|black) pistes\b", s) for s in said)
    assert any(re.search(r"\bmade by (Doppelmayr|Leitner|Poma)\b", s) for s in said)
    assert any(re.search(r"\bis \d+(\.\d)? km long\b", s) for s in said)
