"""Background paragraphs about the world's own topic, on any spec: composed from a hand-written spec, its own
``background:`` sentences first, never another domain's sentences, and old chrome contexts still dress pages."""

import random
import re
from collections import Counter
from pathlib import Path

import pytest
import yaml

from worldforge.catalog.archetype import load_archetypes
from worldforge.catalog.generate import draw_spec
from worldforge.corpus import generate_pages
from worldforge.corpus.chrome import Dresser, background_pool
from worldforge.corpus.generate import served
from worldforge.corpus.measures import bad_constructions
from worldforge.corpus.topic import compose_background, spec_background
from worldforge.errors import SpecError
from worldforge.spec.load import load_spec, spec_from_dict
from worldforge.synth import build_world

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "bench" / "specs"
GENERIC = set(background_pool("generic"))
OWN = ["Many lighthouses were automated in the last century, and their keepers' cottages became holiday lets.",
       "A lighthouse's light characteristic, its pattern of flashes, tells sailors which light they are looking at."]


def _doc(name: str) -> dict:
    return yaml.safe_load((SPECS / f"{name}.yaml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def lighthouses():
    """The lighthouse world with two sentences of its own: its pages, their served bodies and the chrome context."""
    spec = spec_from_dict({**_doc("lighthouse_keepers_2033"), "background": OWN}, "<lighthouses>")
    pages = generate_pages(spec, build_world(spec))
    return spec, pages, served(pages), pages[0].context


def _background(body: str, pool: set[str]) -> list[str]:
    return [s for s in pool if s in body]


def test_hand_written_spec_gets_background_about_its_own_topic(lighthouses):
    spec, pages, bodies, ctx = lighthouses
    composed = [s for s in ctx["background"] if s not in OWN]
    assert ctx["pool"] == "lighthouse_keepers" and len(composed) >= 40  # large enough that pages do not repeat a few
    words = " ".join(composed).lower()
    for topic_word in ("lighthouse", "keeper", "storm", "wave height", "tower height", "peak wind", "nautical miles", "metres", "coast"):
        assert topic_word in words, topic_word
    nouns = re.compile(r"lighthouse|keeper|storm|wave height|tower height|peak wind|light range|hours without light|shifts per month|"
                       r"years of service|coast", re.I)
    assert all(nouns.search(s) for s in composed)  # every sentence is about this topic
    assert not any(ch.isdigit() for s in composed for ch in s)
    assert bad_constructions(" ".join(composed)) == {}
    served_bg = Counter(s for p in pages for s in _background(bodies[p.url], set(composed)))
    assert len(served_bg) >= 40
    dressed = sum(1 for p in pages if (p.chrome or {}).get("b"))
    assert served_bg.most_common(1)[0][1] < 0.6 * dressed  # no sentence on most pages
    assert not any(g in body for g in GENERIC for body in bodies.values())


def test_background_names_no_row(lighthouses):
    """Background never names a row: no lighthouse, keeper or category value of the tables."""
    spec, _, _, ctx = lighthouses
    tables = build_world(spec)
    names = set(tables["lighthouses"]["name"].to_list()) | set(tables["keepers"]["name"].to_list()) | set(tables["lighthouses"]["coast"].to_list())
    text = " ".join(ctx["background"])
    assert not [n for n in names if n in text]


def test_specs_on_different_topics_share_no_background_sentence():
    pools = {p.stem: spec_background(load_spec(p))[0] for p in sorted(SPECS.glob("*.yaml"))}
    assert len(pools) >= 3
    names = sorted(pools)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            assert not set(pools[a]) & set(pools[b]), (a, b, sorted(set(pools[a]) & set(pools[b]))[:3])
        assert not set(pools[a]) & GENERIC


def test_composed_background_is_drawn_by_seed_and_deterministic():
    spec = load_spec(SPECS / "seed_library_2034.yaml")
    assert compose_background(spec, seed=1) == compose_background(spec, seed=1)
    assert compose_background(spec, seed=1) != compose_background(spec, seed=2)


def test_spec_background_sentences_are_used_first(lighthouses):
    spec, pages, bodies, ctx = lighthouses
    assert ctx["background"][:2] == OWN
    assert all(any(s in body for body in bodies.values()) for s in OWN)
    # on a world with a pool file, the spec's sentences come first and the archetype's pool follows
    doc = draw_spec(load_archetypes()["national_parks"], random.Random(0), "national_parks_w0")
    plain = spec_from_dict(doc, "<archetype>")
    assert spec_background(plain) == (background_pool("national_parks"), False)
    own = spec_from_dict({**doc, "background": OWN[:1]}, "<archetype>")
    pool, carried = spec_background(own)
    assert carried and pool[0] == OWN[0] and set(background_pool("national_parks")) <= set(pool)


@pytest.mark.parametrize("entry, where", [("Lit first in 1850.", "background.1"), ("   ", "background.1"), (7, "background.1")])
def test_bad_background_entry_is_a_spec_error_naming_the_field(entry, where):
    with pytest.raises(SpecError) as exc:
        spec_from_dict({**_doc("lighthouse_keepers_2033"), "background": ["A fine sentence.", entry]}, "spec.yaml")
    text = str(exc.value)
    assert where in text and "spec.yaml" in text
    if isinstance(entry, str) and entry.strip():
        assert "digits" in text


def test_old_chrome_context_with_only_a_pool_name_still_dresses_pages(lighthouses):
    _, pages, bodies, ctx = lighthouses
    rows = [p.row() for p in pages[:40]]
    old = {k: v for k, v in ctx.items() if k != "background"}  # a corpus stored before composed background
    rendered = Dresser(old).render(rows)
    assert set(rendered) == {r["url"] for r in rows}
    for r in rows:
        body, start, end = rendered[r["url"]]
        assert body[start:end] == r["body_md"]
    with_bg = [r for r in rows if (r["chrome"] or {}).get("b")]
    assert with_bg and all(_background(rendered[r["url"]][0], GENERIC) for r in with_bg)  # as such corpora always read
    # an archetype's stored context (a name only) reads its pool file
    parks = Dresser({"pool": "national_parks", "seed": 1}).render(rows)
    assert all(_background(parks[r["url"]][0], set(background_pool("national_parks"))) for r in with_bg)
    assert not any(_background(parks[r["url"]][0], GENERIC) for r in with_bg)
    # the new context serves the same articles, with the corpus's own background around them
    new = Dresser(ctx).render(rows)
    assert all(new[r["url"]][0][new[r["url"]][1]:new[r["url"]][2]] == r["body_md"] for r in rows)
    assert all(_background(new[r["url"]][0], set(ctx["background"])) and not _background(new[r["url"]][0], GENERIC) for r in with_bg)


def test_stored_corpus_carries_its_composed_background_and_an_old_one_still_reads(tmp_path):
    """The composed pool travels in ``_corpus.chrome_context``; a stored context without it (a corpus built before)
    still serves every page whole."""
    import json

    import duckdb

    from tests.conftest_worlds import built_world
    from worldforge.corpus import read_corpus

    path = built_world(load_spec(SPECS / "seed_library_2034.yaml"), tmp_path)
    pages, _ = read_corpus(path)
    con = duckdb.connect(str(path))
    ctx = json.loads(con.execute("SELECT chrome_context FROM _corpus WHERE scenario IS NULL").fetchone()[0])
    pool = set(ctx["background"])
    assert pool and ctx["pool"] == "seed_library"
    bodies = pages["body_md"].to_list()
    assert any(_background(b, pool) for b in bodies) and not any(_background(b, GENERIC) for b in bodies)
    del ctx["background"]  # as corpora stored before composed background read
    con.execute("UPDATE _corpus SET chrome_context = ? WHERE scenario IS NULL", [json.dumps(ctx)])
    con.close()
    old, _ = read_corpus(path)
    articles = dict(zip(*read_corpus(path, dressed=False)[0].select("url", "body_md")))
    assert old["url"].to_list() == pages["url"].to_list()
    for row in old.iter_rows(named=True):
        assert row["body_md"][row["article_start"]:row["article_end"]] == articles[row["url"]]
    assert any(_background(b, GENERIC) for b in old["body_md"].to_list())
