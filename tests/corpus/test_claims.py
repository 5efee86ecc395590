"""Derived claims: what pages say about ranks, comparisons, totals, changes and date gaps, registered with their cells and
recomputed by the corpus check, so that a reversed direction or a wrong rank is a contradiction like a wrong number."""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path

import duckdb
import pytest

from tests.conftest_worlds import built_world
from worldforge.corpus import check_corpus, read_corpus
from worldforge.corpus.claims import CLAIM_KINDS, Claim, ClaimWorld, date_span, read
from worldforge.corpus.store import read_claims
from worldforge.warehouse import read_world

WORLD = "mars_colony_2030"


@pytest.fixture(scope="module")
def template(specs, tmp_path_factory) -> Path:
    return built_world(specs[WORLD], tmp_path_factory.mktemp("claims-wh"))


@pytest.fixture
def world(template, tmp_path) -> Path:
    path = tmp_path / template.name
    shutil.copyfile(template, path)
    return path


# -- reading a phrase --------------------------------------------------------------------------------


@pytest.mark.parametrize("text, want", [
    ("the second-highest population of the 4 habitats of Tharsis", {"extreme": "high", "position": 2, "count": 4}),
    ("the lowest among all 12 habitats", {"extreme": "low", "position": 1, "count": 12}),
    ("the 11th-lowest price of the 40 models of Xiaomi", {"extreme": "low", "position": 11, "count": 40}),
    ("the third-earliest of the 6 supply flights of Ares Dome", {"extreme": "low", "position": 3, "count": 6}),
    ("higher than that of Gale Ring", {"comparative": "more"}),
    ("more than twice that of Gale Ring", {"comparative": "more", "multiple": "twice"}),
    ("less than half those of Gale Ring", {"comparative": "less", "multiple": "half"}),
    ("above the average of 3,120 people for the 4 habitats of Tharsis", {"relative": "above", "stat": "average", "amount": "3,120 people", "count": 4}),
    ("below the median of $483 for the 10 models of Tecno", {"relative": "below", "stat": "median", "amount": "$483", "count": 10}),
    ("up from 3,870 in 2029", {"direction": "up", "amount": "3,870", "year": 2029}),
    ("down two places from 5th in 2029", {"direction": "down", "places": 2, "amount": "5th", "year": 2029}),
    ("45 days after being announced", {"span": (45, "day", "after")}),
    ("three years before Xiaomi was founded", {"span": (3, "year", "before")}),
    ("31.2% of the combined population of the 4 habitats of Tharsis", {"percent": 31.2, "count": 4}),
    ("22 residents", {"count": 22}),
    ("one of 5 residents of Ares Dome whose role is engineer", {"count": 5}),
])
def test_a_phrase_reads_back_as_its_assertion(text, want):
    got = read(text)
    assert {k: getattr(got, k) for k in want} == want


def test_a_label_is_not_read_as_a_direction():
    assert read("its total lower berths are higher").comparative == "less"  # the label's "lower" wins without it
    assert read("its total lower berths are higher", label="total lower berths").comparative == "more"


def test_date_spans_count_days_months_and_whole_years():
    assert date_span(date(2030, 1, 1), date(2030, 2, 15)) == (45, "day", "after")
    assert date_span(date(2030, 1, 31), date(2030, 11, 30)) == (9, "month", "after")
    assert date_span(date(2020, 3, 5), date(2023, 3, 4)) == (2, "year", "after")
    assert date_span(date(2023, 3, 5), date(2020, 3, 5)) == (3, "year", "before")


def test_the_recomputation_catches_each_kind_of_error():
    rows = {"h": [{"id": 1, "g": "A", "pop": 10}, {"id": 2, "g": "A", "pop": 30}, {"id": 3, "g": "A", "pop": 20}, {"id": 4, "g": "B", "pop": 5}]}
    w = ClaimWorld(rows, {"h": "id"}, {("h", "pop"): None})
    rank = {"of": "h", "by": "pop", "group": "g", "cells": []}
    assert w.verify(Claim("rank", "h", "2", "pop", "the highest pop of the 3 h of A", rank)) is None
    assert w.verify(Claim("rank", "h", "2", "pop", "the lowest pop of the 3 h of A", rank)) == "wrong rank"
    assert w.verify(Claim("rank", "h", "3", "pop", "the second-highest pop of the 4 h of A", rank)) == "wrong count"
    peer = {"of": "h", "by": "pop", "peer": "1", "cells": []}
    assert w.verify(Claim("peer", "h", "2", "pop", "higher than that of X", peer)) is None
    assert w.verify(Claim("peer", "h", "2", "pop", "lower than that of X", peer)) == "wrong direction"
    assert w.verify(Claim("peer", "h", "2", "pop", "more than twice that of X", peer)) is None
    assert w.verify(Claim("peer", "h", "3", "pop", "more than twice that of X", peer)) == "wrong direction"
    avg = {"of": "h", "by": "pop", "group": "g", "stat": "mean", "additive": True, "cells": []}
    assert w.verify(Claim("average", "h", "2", "pop", "above the average of 20 for the 3 h of A", avg)) is None
    assert w.verify(Claim("average", "h", "2", "pop", "below the average of 20 for the 3 h of A", avg)) == "wrong direction"
    assert w.verify(Claim("average", "h", "2", "pop", "above the average of 25 for the 3 h of A", avg)) == "wrong amount"
    assert w.verify(Claim("average", "h", "2", "pop", "above the average of 20 for the 3 h of A", {**avg, "additive": False})) == "not additive"
    share = {**avg, "stat": None}
    assert w.verify(Claim("share", "h", "2", "pop", "50.0% of the combined pop of the 3 h of A", share)) is None
    assert w.verify(Claim("share", "h", "2", "pop", "40.0% of the combined pop of the 3 h of A", share)) == "wrong amount"


def test_a_tie_is_never_a_rank():
    rows = {"h": [{"id": 1, "pop": 10}, {"id": 2, "pop": 10}, {"id": 3, "pop": 5}]}
    w = ClaimWorld(rows, {"h": "id"}, {})
    assert w.verify(Claim("rank", "h", "1", "pop", "the highest pop of all 3 h", {"of": "h", "by": "pop", "group": None})) == "tied"


# -- a built corpus ----------------------------------------------------------------------------------


def test_claims_are_registered_in_corpus_facts_with_their_cells(template):
    claims = read_claims(template)
    assert set(claims["kind"]) <= set(CLAIM_KINDS)
    assert {"rank", "peer", "average", "count"} <= set(claims["kind"])
    wf = read_world(template)
    keys = {t: {str(k) for k in f[wf.spec.tables[t].primary_key]} for t, f in wf.tables.items()}
    for basis in claims["basis"].to_list()[:2000]:
        for t, ks, cols, scope in json.loads(basis)["cells"]:
            assert cols and set(cols) <= set(wf.spec.tables[t].columns)
            if scope is None:
                assert set(ks) <= keys[t]
    pages, facts = read_corpus(template, dressed=False)
    assert "kind" not in facts.columns  # readers of stated values get stated values only
    body = dict(zip(pages["url"], pages["body_md"]))
    assert all(text in body[url] for url, text in zip(claims["url"], claims["value_text"]))


def test_every_encyclopedia_article_of_a_grouped_row_makes_a_claim(template):
    pages, _ = read_corpus(template, dressed=False)
    claimed = set(read_claims(template)["url"])
    enc = [u for u in pages.filter(pages["page_type"] == "encyclopedia")["url"]]
    missing = [u for u in enc if u not in claimed]
    assert len(missing) <= len(enc) // 50, missing[:5]  # a row alone in its group (nothing to compare) may have none


def test_scenario_articles_say_what_changed_since_the_base_year(template):
    wf = read_world(template)
    scenario = next(iter(wf.scenarios))
    claims = read_claims(template, scenario)
    changes = claims.filter(claims["kind"] == "change")
    assert changes.height > 0
    year = str(wf.spec.as_of_date.year)
    assert all(year in t and (" from " in t) for t in changes["value_text"])


def _flip(path: Path, kind: str, old: str, new: str) -> str:
    """Rewrite one claim of ``kind`` containing ``old`` (its phrase and its page's body) to say ``new`` instead; its URL."""
    con = duckdb.connect(str(path))
    try:
        url, text = con.execute("SELECT url, value_text FROM corpus_facts WHERE kind = ? AND contains(value_text, ?) ORDER BY url LIMIT 1",
                                [kind, old]).fetchone()
        flipped = text.replace(old, new, 1)
        con.execute("UPDATE corpus_facts SET value_text = ? WHERE url = ? AND value_text = ?", [flipped, url, text])
        con.execute("UPDATE corpus_pages SET body_md = replace(body_md, ?, ?) WHERE url = ?", [text, flipped, url])
    finally:
        con.close()
    return url


@pytest.mark.parametrize("kind, old, new, problem", [
    ("rank", "highest", "lowest", "wrong rank"),
    ("average", "above", "below", "wrong direction"),
    ("peer", "higher", "lower", "wrong direction"),
    ("gap", "after", "before", "wrong gap"),
    ("count", "one of the ", "one of the 1", "wrong count"),
    ("change", "up from", "down from", "wrong direction"),
])
def test_a_reversed_claim_is_a_contradiction(world, kind, old, new, problem):
    assert check_corpus(world).height == 0
    url = _flip(world, kind, old, new)
    bad = check_corpus(world)
    assert bad.height == 1 and bad["url"][0] == url and bad["problem"][0] == problem and bad["actual"][0] == kind


def test_a_claim_its_page_no_longer_states_is_a_contradiction(world):
    con = duckdb.connect(str(world))
    try:
        url, text = con.execute("SELECT url, value_text FROM corpus_facts WHERE kind = 'rank' ORDER BY url LIMIT 1").fetchone()
        con.execute("UPDATE corpus_pages SET body_md = replace(body_md, ?, 'a place in the middle') WHERE url = ?", [text, url])
    finally:
        con.close()
    bad = check_corpus(world)
    assert bad.height == 1 and bad["problem"][0] == "the page does not state it"


def test_a_corpus_stored_before_derived_claims_still_reads_and_checks(world):
    con = duckdb.connect(str(world))
    try:
        con.execute("DROP VIEW IF EXISTS v_claims")
        con.execute("DROP VIEW IF EXISTS v_facts")
        con.execute("DROP VIEW IF EXISTS v_pages")
        con.execute("DELETE FROM corpus_facts WHERE kind <> 'value'")
        con.execute("ALTER TABLE corpus_facts DROP COLUMN basis")
        con.execute("ALTER TABLE corpus_facts DROP COLUMN kind")
        values = con.execute("SELECT count(*) FROM corpus_facts").fetchone()[0]
    finally:
        con.close()
    assert read_claims(world).height == 0
    _, facts = read_corpus(world, dressed=False)
    assert facts.height > 0 and "kind" not in facts.columns
    assert check_corpus(world).height == 0 and values > facts.height  # the world's corpus is one of several
