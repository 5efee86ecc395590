"""How the generated pages read: no template constructions, varied sentences, long and noisy pages, verbs that agree."""

import random
import re
import statistics
from pathlib import Path

import pytest

from tests.conftest import BUNDLED
from worldforge.catalog.archetype import load_archetypes
from worldforge.catalog.generate import draw_spec
from worldforge.corpus import build_pages
from worldforge.corpus.lexicon import Referent, conjugate, frame_for
from worldforge.corpus.measures import bad_constructions, fact_sentences, page_words, skeleton, variety
from worldforge.corpus.pages import page_markdown
from worldforge.corpus.planner import Said, realise
from worldforge.corpus.vocab import table_info
from worldforge.errors import SpecError
from worldforge.spec.load import load_spec, spec_from_dict
from worldforge.synth import build_world

ROOT = Path(__file__).resolve().parents[2]
HAND_WRITTEN = sorted((ROOT / "bench" / "specs").glob("*.yaml"))


def _corpus(spec):
    tables = build_world(spec)
    pages = build_pages(spec, tables)
    labels = {t: table_info(spec, t, tables[t]).label_column for t in spec.tables}
    return pages, labels


def _md(p):
    return page_markdown({"title": p.title, "published": p.published, "body_md": p.body_md})


def _archetype_spec(name):
    return spec_from_dict(draw_spec(load_archetypes()[name], random.Random(0), f"{name}_w0"), f"<archetype {name}>")


@pytest.mark.parametrize("name", sorted(load_archetypes()))
def test_no_template_construction_in_any_archetype_world(name):
    pages, _ = _corpus(_archetype_spec(name))
    found = {}
    for p in pages:
        for k, n in bad_constructions(_md(p)).items():
            found[k] = found.get(k, 0) + n
    assert found == {}, f"{name}: {found}"


@pytest.mark.parametrize("name", BUNDLED + [p.stem for p in HAND_WRITTEN])
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
        for f in p.facts:  # the chrome never hides a fact: each stated text is on the page
            assert f.value_text in p.body_md
    assert bad == {}
    assert len(said) > 500
    # the target (0.70) holds on the bundled worlds, whose specs give verbs; a hand-written spec with none gets derived
    # frames only (bench/prose.py prints every world's figure)
    floor = 0.70 if name in BUNDLED else 0.55
    assert variety(said) >= floor, f"{name}: fact-sentence variety {variety(said):.2f}"
    assert statistics.median(words) >= 380, f"{name}: median words {statistics.median(words)}"
    assert max(shares) < 0.5 and statistics.median(shares) < 0.1


def test_chrome_never_links_into_the_encyclopedia_space_or_adds_tables(specs):
    pages, _ = _corpus(specs["mars_colony_2030"])
    for p in pages[:400]:
        head = p.body_md.split(p.lead, 1)[0]
        assert "/wiki/" not in head and "|" not in head  # navigation, cookie line, breadcrumbs
        foot = p.body_md[p.body_md.rfind("\n---\n"):]
        assert "/wiki/" not in foot and "\n|" not in foot


def test_measures_mask_names_and_numbers():
    assert skeleton("Ares Dome has a capacity of 79 people.") == skeleton("Gale Ring has a capacity of 1,024 people.")
    assert skeleton("Ares Dome has a capacity of 79 people.") != skeleton("Ares Dome can house 79 people.")
    assert variety(["A b c d.", "E b c d."]) == 0.5
    assert bad_constructions("Its number of models stands at 14.") == {"its <label> stands at": 1, "its number of": 1}
    assert bad_constructions("Kim Lee was departed on May 5, 2030.") == {"passive of an intransitive verb": 1}
    assert bad_constructions("Nova X has a screen size of 6.1 inches.") == {}


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
    used = {realise(random.Random(s), Referent("SF-001", "supply flight"), [Said(fr, "12.2 tonnes")])[0] for s in range(20)}
    assert {"SF-001 carried 12.2 tonnes of cargo.", "SF-001 delivered 12.2 tonnes of supplies."} <= used


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
    plural = frame_for("shifts per month", "number", None, None)
    said = " ".join(" ".join(realise(random.Random(s), Referent("Kim Lee", "keeper", True), [Said(plural, "14")])) for s in range(10))
    assert " is 14" not in said and "are" in said
