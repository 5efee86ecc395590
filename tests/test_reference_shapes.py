"""The schemas every relational modeller writes in the first hour, built end to end (bench/specs): roles (a match's
home and away team), a junction with two cardinalities, a hierarchy (a staff member's line manager), optional
references (a film's distributor, its earlier film) and a mean of a one-decimal measure aggregated again.

Each world goes through every step with every check passing (oracle F1 1.0 on every task and question, no
contradiction); then what its pages and tasks say of each shape is read back."""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import pytest

from worldforge.corpus.page import slug
from worldforge.pipeline import run_world
from worldforge.warehouse import Warehouse

ROOT = Path(__file__).resolve().parent.parent
SHAPES = ("football_fixtures", "course_enrolments", "org_chart", "film_sequels", "sensor_means")
FLOAT_NOISE = re.compile(r"\d\.\d*9999999|\d\.\d*0000000\d")


@pytest.fixture(scope="module")
def shapes(tmp_path_factory):
    wh = Warehouse(tmp_path_factory.mktemp("shapes"))
    results = {name: run_world(ROOT / "bench" / "specs" / f"{name}.yaml", wh, export_tasks=False) for name in SHAPES}
    return wh, results


def _query(wh: Warehouse, world: str, sql: str) -> list[tuple]:
    con = duckdb.connect(str(wh.world(world)), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


@pytest.mark.parametrize("world", SHAPES)
def test_every_step_passes_every_check(shapes, world):
    _, results = shapes
    assert [r.step for r in results[world]][-1] == "oracle_episodes"
    failed = {(r.step, c.name): c.summary for r in results[world] for c in r.checks if not c.passed}
    assert failed == {}


def test_roles_are_said_with_their_role_and_tasks_read_them(shapes):
    wh, _ = shapes
    matches = [b for (b,) in _query(wh, "football_fixtures", "SELECT body_md FROM corpus_pages WHERE page_type = 'encyclopedia' AND url LIKE '%/wiki/matches/%'")]
    assert matches and all("\n| Home team | [" in b and "\n| Away team | [" in b for b in matches)
    assert all(re.search(r"Its home team is \[[^]]+\]\([^)]+\) and its away team is \[", b) for b in matches)
    teams = [b for (b,) in _query(wh, "football_fixtures", "SELECT body_md FROM corpus_pages WHERE page_type = 'encyclopedia' AND url LIKE '%/wiki/teams/%'")]
    assert any("## Matches as home team\n" in b for b in teams) and any("## Matches as away team\n" in b for b in teams)
    plans = [json.loads(p) for (p,) in _query(wh, "football_fixtures", "SELECT plan_json FROM search_tasks")]
    fields = [c["field"] for p in plans if p["table"] == "matches" for c in p["columns"] if c["field"]["of"] == "parent" and c["field"]["table"] == "teams"]
    assert {f.get("role") for f in fields} >= {"home team", "away team"}
    assert None not in {f.get("role") for f in fields}  # never just "the team" of a match
    # no team plays itself (the declared check, enforced while the rows were assigned)
    assert _query(wh, "football_fixtures", "SELECT count(*) FROM matches WHERE home_team_id = away_team_id") == [(0,)]


def test_a_hierarchy_reads_as_one(shapes):
    wh, _ = shapes
    staff = [b for (b,) in _query(wh, "org_chart", "SELECT body_md FROM corpus_pages WHERE page_type = 'encyclopedia' AND url LIKE '%/wiki/staff/%'")]
    assert any("## Line manager of\n" in b for b in staff)
    assert any("Its line manager is [" in b for b in staff)
    roots = [slug(name) for (name,) in _query(wh, "org_chart", "SELECT name FROM staff WHERE manager_id IS NULL")]
    assert roots
    for (url, body) in _query(wh, "org_chart", "SELECT url, body_md FROM corpus_pages WHERE page_type = 'encyclopedia' AND url LIKE '%/wiki/staff/%'"):
        if url.rsplit("/", 1)[1] in roots:  # a root has no line manager: its article says nothing of one
            assert "\n| Line manager | [" not in body and "line manager is" not in body.split("\n\n", 1)[0]

@pytest.mark.parametrize("world", ["film_sequels", "org_chart"])
def test_an_absent_parent_is_never_a_value(shapes, world):
    wh, _ = shapes
    said = _query(wh, world, "SELECT count(*) FROM corpus_pages WHERE regexp_matches(body_md, '\\](\\(None\\)|: None)|\\bthe none\\b|\\bNone\\b')")
    assert said == [(0,)]
    gold = _query(wh, world, "SELECT count(*) FROM search_tasks WHERE regexp_matches(gold_json, '\"(None|none|n/a)\"')")
    assert gold == [(0,)]


@pytest.mark.parametrize("world", SHAPES)
def test_no_binary_float_noise(shapes, world):
    wh, _ = shapes
    texts = _query(wh, world, "SELECT body_md FROM corpus_pages UNION ALL SELECT gold_json FROM search_tasks UNION ALL "
                              "SELECT question FROM search_tasks UNION ALL SELECT question FROM deep_questions UNION ALL SELECT answer FROM deep_questions")
    noisy = [m.group(0) for (t,) in texts for m in FLOAT_NOISE.finditer(t or "")]
    assert noisy == []
