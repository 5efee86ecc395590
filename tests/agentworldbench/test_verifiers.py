"""Rule verifiers: a faithful prediction passes every one, each kind of damage is caught by its verifier."""

from __future__ import annotations

import json

from worldforge.agentworldbench.verifiers import exact_match, format_check, json_structure, numeric_entity, score, token_f1

RESULTS = """[1] https://wiki.example/zenith-x5
Title: Zenith X5 - Smartphone Wiki
Snippet: The Zenith X5 launched in March 2029 at $899.
Date: Mar 12, 2029

[2] https://news.example/zenith
Title: Zenith shares climb
Snippet: Analysts expect 12.5% growth.
Date: N/A"""

TOOL = json.dumps({"reservation_id": "ABC123", "flights": [{"number": "HAT004", "price": 120}], "status": "confirmed"})


def test_the_reference_itself_passes_everything():
    for ref, domain in ((RESULTS, "search"), (TOOL, "tool"), ("total 4\ndrwxr-xr-x 2 root root 4096 .", "terminal")):
        s = score(ref, ref, domain)
        assert s.aggregate == 1.0
        assert all(v in (None, 1.0) for v in s.scores.values())


def test_format_catches_a_changed_shape():
    assert format_check("The Zenith X5 costs $899.", RESULTS, "search") == 0.0  # results became prose
    assert format_check("Error: invalid url", "# Zenith X5\n\nbody", "search") == 0.0
    assert format_check("reservation confirmed", TOOL, "tool") == 0.0  # JSON became text
    assert format_check("some output", "", "terminal") == 0.0  # a command with no output
    assert format_check("", "", "terminal") == 1.0


def test_numbers_and_entities_catch_an_invented_fact():
    wrong = RESULTS.replace("$899", "$999")
    assert numeric_entity(wrong, RESULTS) < 1.0
    assert numeric_entity(RESULTS.replace("Zenith X5", "Nova Z1"), RESULTS) < numeric_entity(wrong, RESULTS)
    assert numeric_entity("ok", "ok") is None  # nothing to compare


def test_json_structure_compares_keys_and_types():
    assert json_structure(TOOL, TOOL) == 1.0
    renamed = json.dumps({"reservation": "ABC123", "flights": [{"number": "HAT004", "price": "120"}], "status": "confirmed"})
    assert 0.0 < json_structure(renamed, TOOL) < 0.8
    assert json_structure("not json", TOOL) == 0.0
    assert json_structure("anything", "plain text") is None


def test_text_metrics():
    assert exact_match("  Hello,   WORLD ", "hello world") == 1.0
    assert token_f1("the cat sat", "the cat sat down") == 2 * 1.0 * 0.75 / 1.75
    assert token_f1("dog", "cat") == 0.0
    assert score("totally different words here", RESULTS, "search").aggregate == 0.0  # wrong format: no credit
