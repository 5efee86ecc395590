"""How the generated pages read: no template constructions, varied sentences, long and noisy pages, verbs that agree."""

import random
import re
import statistics
from pathlib import Path

import pytest

from tests.conftest import BUNDLED
from worldforge.catalog.archetype import load_archetypes
from worldforge.catalog.generate import draw_spec
from worldforge.corpus import generate_pages
from worldforge.corpus.generate import page_markdown, served
from worldforge.corpus.lexicon import Referent, conjugate, frame_for
from worldforge.corpus.measures import ATTRIBUTION, CONNECTIVE, bad_constructions, fact_sentences, page_words, prose_sentences, skeleton, variety
from worldforge.corpus.planner import Said, realise
from worldforge.corpus.vocab import table_info
from worldforge.errors import SpecError
from worldforge.spec.load import load_spec, spec_from_dict
from worldforge.synth import build_world

ROOT = Path(__file__).resolve().parents[2]
HAND_WRITTEN = sorted((ROOT / "bench" / "specs").glob("*.yaml"))


def _corpus(spec):
    """The pages of a world, each served whole (its article in the site's chrome, as web_extractor returns it)."""
    tables = build_world(spec)
    pages = generate_pages(spec, tables)
    bodies = served(pages)
    for p in pages:
        p.served = bodies[p.url]
    labels = {t: table_info(spec, t, tables[t]).label_column for t in spec.tables}
    return pages, labels


def _md(p):
    return page_markdown({"title": p.title, "published": p.published, "body_md": p.served})


def _archetype_spec(name):
    return spec_from_dict(draw_spec(load_archetypes()[name], random.Random(0), f"{name}_w0"), f"<archetype {name}>")


ARCHETYPE_THIN = {
    "restaurant_guide": "awards (295 of 456 rows: a date, a category and a guide) have articles of median 237 words once the "
                        "attributions that padded them went; more content, not padding, is what they need",
    "chess_tournaments": "grandmasters (336 rows: a rating, a title, an ID, a rank, a birth year) have articles of median "
                         "248 words once label glue went to the infobox; more content is what they need",
    "electric_vehicles": "sales records (202 rows designated 'Sales record 4 of Luxembourg', one registrations figure each) have "
                         "articles of median 226 words once the lead no longer cited the reference work and padding went",
    "bike_sharing": "docks (80 rows, three columns a sentence can state) have articles of median 232 words once the sentences "
                    "that joined unrelated facts were split and label glue went to the infobox; more content is what they need",
    "data_centers": "halls (308 of 404 rows, a rack count and an IT load each) have articles of median 241 words (249 over the "
                    "world) once peer sentences said each figure once ('at X, ... higher than that of Y, at W' went); a rack "
                    "density or the site's other halls would be content",
}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=ARCHETYPE_THIN[n])) if n in ARCHETYPE_THIN else n
                                  for n in sorted(load_archetypes())])
def test_archetype_worlds_read_like_pages(name):
    """On one world of each archetype: no template construction, no attribution stuck on a fact (<= 2% of the
    sentences of encyclopedia, profile and dataset pages), no connective that connects nothing, median page >= 400 words.
    (The sentence-skeleton variety target is retired: it was met by decoration, the hedges this test now keeps out.)"""
    pages, labels = _corpus(_archetype_spec(name))
    found, said, words = {}, [], []
    for p in pages:
        md = _md(p)
        for k, n in bad_constructions(md).items():
            found[k] = found.get(k, 0) + n
        said += fact_sentences(md, [f.value_text for f in p.facts if f.column_name != labels[f.table_name]])
        words.append(page_words(md))
    assert found == {}, f"{name}: {found}"
    _no_decoration(name, pages)
    assert statistics.median(words) >= 400, f"{name}: median words {statistics.median(words)}"
    _articles_say_where_rows_stand(name, pages)


def _no_decoration(name, pages):
    """Attributions in <= 2% of the prose sentences of encyclopedia, profile and dataset pages (none is written today:
    the slack is for a value that reads like one); no sentence of any page opens with a connective that connects nothing."""
    facts = [s for p in pages if p.page_type in ("encyclopedia", "profile", "dataset") for s in prose_sentences(p.body_md)]
    hedged = [s for s in facts if ATTRIBUTION.search(s)]
    assert len(hedged) <= 0.02 * len(facts), f"{name}: {len(hedged)} of {len(facts)} sentences attributed, e.g. {hedged[:3]}"
    opened = [s for p in pages for s in prose_sentences(p.body_md) if CONNECTIVE.search(s)]
    assert opened == [], f"{name}: {len(opened)} sentences open with a connective, e.g. {opened[:3]}"


def _articles_say_where_rows_stand(name, pages):
    """The depth targets: encyclopedia articles (chrome not counted) of median >= 250 words, each with a derived claim,
    every claim phrase verbatim in its article."""
    enc = [p for p in pages if p.page_type == "encyclopedia"]
    assert statistics.median(page_words(p.body_md) for p in enc) >= 250, f"{name}: median article words"
    assert all(p.claims for p in enc), f"{name}: {sum(not p.claims for p in enc)} articles without a derived claim"
    assert all(c.text in p.body_md for p in pages for c in p.claims)


# Depth the corpus does not reach yet on three schemas written after it (their rows hang from parents in groups of one
# or two, or have no children at all, so few derived claims apply): known, and meant to be fixed, not hidden.
THIN = {
    "course_enrolments": "students with fewer than two enrolments get no derived claim (no group: 100 rows, no category)",
    "film_sequels": "reviews (200, one or two per film) have short articles: median 230 words",
    "org_chart": "projects (160, about one per lead) have short articles: median 197 words",
}


@pytest.mark.parametrize("name", BUNDLED + [pytest.param(p.stem, marks=pytest.mark.xfail(strict=True, reason=THIN[p.stem]))
                                            if p.stem in THIN else p.stem for p in HAND_WRITTEN])
def test_bundled_and_hand_written_worlds_read_like_pages(specs, name):
    spec = specs[name] if name in specs else load_spec(ROOT / "bench" / "specs" / f"{name}.yaml")
    pages, labels = _corpus(spec)
    said, words, shares, bad = [], [], [], {}
    for p in pages:
        md = _md(p)
        said += fact_sentences(md, [f.value_text for f in p.facts if f.column_name != labels[f.table_name]])
        w = page_words(md)
        words.append(w)
        shares.append(sum(page_words(v) for v in {f.value_text for f in p.facts}) / w)
        bad.update(bad_constructions(md))
        for f in p.facts:  # every stated text is in the article, which the served page holds whole
            assert f.value_text in p.body_md and p.body_md in p.served
    assert bad == {}
    assert len(said) > 500
    _no_decoration(name, pages)
    assert statistics.median(words) >= 400, f"{name}: median words {statistics.median(words)}"
    # stated values a small share of a page's words (10.0 % median in avalanche_watch once the attributions and hedges that
    # padded its observation pages went: the values are the same, the filler is gone)
    assert max(shares) < 0.5 and statistics.median(shares) <= 0.12
    _articles_say_where_rows_stand(name, pages)


def test_chrome_never_links_into_the_encyclopedia_space_or_adds_tables(specs):
    pages, _ = _corpus(specs["mars_colony_2030"])
    for p in pages[:400]:
        head = p.served.split(p.lead, 1)[0]
        assert "/wiki/" not in head and "|" not in head  # navigation, cookie line, breadcrumbs
        foot = p.served[p.served.rfind("\n---\n"):]
        assert "/wiki/" not in foot and "\n|" not in foot


def test_measures_mask_names_and_numbers():
    assert skeleton("Ares Dome has a capacity of 79 people.") == skeleton("Gale Ring has a capacity of 1,024 people.")
    assert skeleton("Ares Dome has a capacity of 79 people.") != skeleton("Ares Dome can house 79 people.")
    assert variety(["A b c d.", "E b c d."]) == 0.5
    assert bad_constructions("Its number of models stands at 14.") == {"its <label> stands at": 1, "its number of": 1}
    assert bad_constructions("Kim Lee was departed on May 5, 2030.") == {"passive of an intransitive verb": 1}
    assert bad_constructions("Nova X has a screen size of 6.1 inches.") == {}
    assert bad_constructions("**Al Kirby** is a player whose nationality is Ukraine documented in *Circuits, 2031*.") == {"citation after a closed clause": 1}
    assert bad_constructions("**Al Kirby** is a player (nationality: Ukraine) in *Circuits, 2031*.") == {"citation after a closed clause": 1}
    assert bad_constructions("**Al Kirby** is a player whose nationality is Ukraine, as recorded in *Circuits, 2031*.") == {}
    # label glue, a present tense after "It was on <date> that", designations that restate their date or carry "(2)"
    assert bad_constructions("It is listed with 11 days for days. It is listed with 1 for people caught.") == {"is listed with <value> for <label>": 2}
    assert bad_constructions("Its closes are recorded as 7 May 2030.") == {"its <verb label> are": 1}
    assert bad_constructions("Its lifts are 12, and its lifts open is 9.") == {"its <plural label> are <count>": 1, "its <plural> <adjective> is": 1}
    assert bad_constructions("Its shipments are 5,000 units. It has 12 lifts and caught 1 person.") == {}
    assert bad_constructions("It was on Jan 31, 2031 that KIRE-16 is due to finish.") == {"It was on <date> that <row> <present tense>": 1}
    assert bad_constructions("It was on Jan 31, 2031 that KIRE-16 launched.") == {}
    assert bad_constructions("Sources confirmed that Mont Silence observation of 6 February 2036 was observed on 6 February 2036.") == {
        "a designation that repeats its date": 1}
    assert bad_constructions("Honey Pyshihoth chart run of 28 January 2027 (2) debuted.") == {"a designation numbered (2)": 1}
    assert bad_constructions("Honey Pyshihoth chart run of 28 January 2027 (Billboard 200) debuted.") == {}
    assert bad_constructions("It caught 1 people.") == {"1 <plural noun>": 1}
    assert bad_constructions("The Dadripour Prime launch launched on May 3.") == {"the <designation> <verb>ed": 1}
    assert bad_constructions("The Dadripour Prime launch took place on May 3.") == {}


@pytest.mark.parametrize("label,kind,unit,ukind,name,value,expect", [
    ("number of models", "number", None, None, "model_count", "14", "has 14 models"),
    ("days after launch", "number", "days", "time", "days_after_launch", "27 days", "came 27 days after launch"),
    ("age at census", "number", "years", "time", "age_at_census", "50 years", "was 50 years old at the census"),
    ("departure date", "date", None, None, "departure_date", "May 5, 2030", "departed on May 5, 2030"),
    ("date departed", "date", None, None, "departed", "May 5, 2030", "departed on May 5, 2030"),
    ("launch price", "number", "USD", "money", "launch_price_usd", "$399", "costs $399"),
    ("market share", "share", "percent", "percent", "market_share_pct", "12.5%", "has a market share of 12.5%"),
    ("share of weekly departures", "share", "percent", "percent", "s", "12.5%", "accounts for 12.5% of weekly departures"),
    ("in service since", "date", None, None, "in_service_since", "May 5, 2030", "has been in service since May 5, 2030"),
])
def test_derived_frames_are_grammatical(label, kind, unit, ukind, name, value, expect):
    fr = frame_for(label, kind, unit, ukind, name=name)
    assert fr.vps[0].format(value=value) == expect


def test_a_spec_verb_wins_and_its_alternatives_are_used():
    fr = frame_for("cargo", "number", "tonnes", "measure", verb="carried {value} of cargo | delivered {value} of supplies")
    assert fr.vps == ("carried {value} of cargo", "delivered {value} of supplies")
    used = " ".join(realise(random.Random(s), Referent("SF-001", "supply flight"), [Said(fr, "12.2 tonnes")])[0] for s in range(20))
    assert "carried 12.2 tonnes of cargo" in used and "delivered 12.2 tonnes of supplies" in used


def test_a_verb_without_its_value_slot_is_a_spec_error():
    doc = {"world": "w", "seed": 1, "target_year": 2030, "tables": {"t": {"primary_key": "id", "rows": 300, "columns": {
        "id": {"kind": "sequence"}, "x": {"kind": "number", "min": 1, "max": 2, "verb": "weighs {weight}"}}}}}
    with pytest.raises(SpecError, match="verb"):
        spec_from_dict(doc)


def test_people_are_never_it_and_verbs_agree():
    fr = frame_for("role", "category", None, None)
    ref = Referent("Tricia Benton", "resident", person=True)
    text = " ".join(" ".join(realise(random.Random(s), ref, [Said(fr, "medic"), Said(frame_for("arrival date", "date", None, None), "May 1, 2028")]))
                    for s in range(30))
    assert not re.search(r"\b(it|its|It|Its)\b", text)
    assert conjugate("has 3 models", True) == "have 3 models" and conjugate("costs $399", True) == "cost $399"
    assert conjugate("was announced", True) == "were announced" and conjugate("launched on", True) == "launched on"
    plural = frame_for("opening hours", "category", None, None)  # a plural head's copula agrees: "are"
    said = " ".join(" ".join(realise(random.Random(s), Referent("Kim Lee", "keeper", True), [Said(plural, "9 to 5")])) for s in range(10))
    assert " is 9 to 5" not in said and "are" in said
    counted = frame_for("shifts per month", "number", None, None)  # a plural count is had: "has 14 shifts per month"
    said = " ".join(" ".join(realise(random.Random(s), Referent("Kim Lee", "keeper", True), [Said(counted, "14")])) for s in range(10))
    assert "14 shifts per month" in said and not re.search(r"shifts per month (is|are) 14", said)


def _sentences(items, ref_args=("Skeimuk Market", "halt"), voice="encyclopedia", seeds=200):
    out = []
    for s in range(seeds):
        out.append(realise(random.Random(s), Referent(*ref_args), items, voice))
    return out


def test_adverbs_fit_the_verb_and_also_never_opens_a_paragraph():
    fares = Said(frame_for("fare zone", "number", None, None), "2")
    opened = Said(frame_for("opening date", "date", None, None), "May 5, 2030")
    service = Said(frame_for("years of service", "number", "years", "time", verb="has put in {value} of service"), "32 years")
    for voice in ("encyclopedia", "news", "forum"):
        for sents in _sentences([opened, fares, service], voice=voice):
            text = " ".join(sents)
            assert not re.search(r"\b(currently|now|still) (opened|has put|was)\b", text), text  # no present adverb on a past verb
            assert not re.search(r"\b(currently|now|still|also|reportedly) has put\b", text), text  # "has also put in"
            assert " also " not in sents[0], sents  # "also" needs something said before it
            for x in sents:  # no attribution or connective: only a forum reply may hedge
                assert not CONNECTIVE.search(x) and (voice == "forum" or not ATTRIBUTION.search(x)), x


def test_sentence_shapes_vary_and_read_naturally():
    passengers = Said(frame_for("daily boardings", "number", "passengers per day", None, verb="handles {value} | sees {value} board"), "3,745 passengers per day")
    fares = Said(frame_for("fare zone", "number", None, None), "1")
    colour = Said(frame_for("line colour", "category", None, None), "Green")
    firsts = [sents[0] for sents in _sentences([passengers, fares])]
    # variety comes from the spec's verbs, never from joining facts: one fact a sentence (two only when the row "has" both)
    assert {"Skeimuk Market handles 3,745 passengers per day.", "Skeimuk Market sees 3,745 passengers per day board."} <= set(firsts)
    assert not any(s.startswith(("Handling", "With")) for s in firsts)  # never a fronted phrase that says one fact explains the other
    assert not any(" whose " in s or ", and " in s or "; " in s for s in firsts), firsts  # nor a clause that joins unrelated facts
    text = " ".join(" ".join(s) for s in _sentences([passengers, fares]) + _sentences([passengers, colour], ("Zeiquek Connector", "line")))
    assert not re.search(r"\b(Showing|Counting|Reporting|Seeing)\b", text)  # neutral verbs are never fronted
    assert "line's line colour" not in text and "its line colour" in text.lower()
    for s in firsts:  # one fronted phrase a sentence: never "According to the register, with a fare zone of 1, ..."
        assert not re.match(r"^[A-Z][^,]*, (with|handling|on) ", s), s


def test_the_subject_never_echoes_the_verb():
    counts = Said(frame_for("visitors", "number", "visitors", None, verb="records {value}"), "46,608 visitors")
    text = " ".join(" ".join(s) for s in _sentences([counts, counts], ("Gale visitation record of 3 July 2040", "visitation record")))
    assert "record records" not in text


def test_nouns_and_people_are_recognised():
    from worldforge.corpus.builder import faker_person
    from worldforge.corpus.lexicon import is_participle
    from worldforge.corpus.vocab import singular
    from worldforge.spec import models as M

    assert [singular(t) for t in ("lighthouses", "statuses", "categories", "supply_flights", "data_centers")] == [
        "lighthouse", "status", "category", "supply flight", "data center"]
    assert frame_for("first lit", "date", None, None).vps == ("was first lit on {value}",)
    assert is_participle("lit") and is_participle("added") and not is_participle("red") and not is_participle("speed")
    person = M.FakerColumn(kind="faker", template="{{first_name}} {{last_name}}")
    thing = M.FakerColumn(kind="faker", template="{{color_name}} {{last_name}}")
    assert faker_person(person) and not faker_person(thing)


@pytest.mark.parametrize("name, label, lo, hi, year", [
    ("founded", "year founded", 1839, 2020, True),
    ("launch_year", "", 1990, 2031, True),
    ("founded", "", 1800, 2015, True),  # a founding event's whole numbers in year range
    ("visitors_per_year", "visitors a year", 1000, 900_000, False),  # a count, however it is named
    ("launched", "satellites launched", 1, 60, False),
    ("years_active", "", 1000, 2500, False),  # "years" is a duration
])
def test_calendar_years_are_written_as_years_and_counts_keep_their_separators(name, label, lo, hi, year):
    import polars as pl

    from worldforge.corpus.quantity import CALENDAR_YEAR, denotes, format_value, parse_unit
    from worldforge.corpus.vocab import is_calendar_year
    from worldforge.spec import models as M

    col = M.NumberColumn(kind="number", dtype="int", min=lo, max=hi)
    assert is_calendar_year(col, name, label) is year  # from the spec's bounds
    assert is_calendar_year(col, name, label, pl.DataFrame({name: [lo, hi]})) is year  # from the generated values
    unit = parse_unit(CALENDAR_YEAR)
    assert format_value(1950, unit) == "1950" and format_value(1950, None) == "1,950" and unit.header() == ""
    assert denotes("1950", 1950, unit) and not denotes("1951", 1950, unit)


def test_a_repeated_has_is_said_once_only_when_both_are_possessive():
    from worldforge.corpus.planner import _join

    assert _join(["has a mass of 5 kg", "has a range of 9 km"]) == "has a mass of 5 kg and a range of 9 km"
    for perfect in ("has been sailing since 1976", "has also been sailing since 1976", "has sold 5 ships"):
        assert _join([perfect, "has 6.78% of the global berth capacity"]) == f"{perfect} and has 6.78% of the global berth capacity"
        assert _join(["has 3 ships", perfect]) == f"has 3 ships and {perfect}"


def test_a_count_of_one_takes_the_singular_noun_and_other_counts_keep_the_plural():
    from worldforge.corpus.lexicon import fill

    assert fill("placed {value} films in festival line-ups", "1") == "placed 1 film in festival line-ups"
    assert fill("sails {value} itineraries", "1") == "sails 1 itinerary" and fill("has found the net {value} times", "1").endswith("1 time")
    assert fill("placed {value} films", "2") == "placed 2 films" and fill("placed {value} films", "11") == "placed 11 films"
    assert fill("ranks No. {value} in its fleet", "1") == "ranks No. 1 in its fleet"  # no noun after the value: unchanged
    assert fill("has {value} series out", "1") == "has 1 series out"  # singular and plural alike
