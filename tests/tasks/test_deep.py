"""Deep questions (issue 32, item 1): one short answer at the end of a 2-4 hop chain, unique in DuckDB, answered by the
oracle through the environment's tools, graded as BrowseComp grades them."""

from __future__ import annotations

import dataclasses
import re

import pytest

from tests.conftest import BUNDLED
from tests.conftest_worlds import built_world
from worldforge.agents.oracle import answer_deep
from worldforge.corpus import index_corpora, read_corpus
from worldforge.simenv.env import SearchEnv
from worldforge.tasks.deep import (
    ANSWER_FORMAT,
    PATTERNS,
    as_task,
    build_deep_questions,
    grade_response,
    matches,
    parse_response,
    prompt,
    question_of,
    read_deep_questions,
    verify_deep,
)
from worldforge.tasks.store import build_tasks
from worldforge.warehouse import Warehouse
from worldforge.warehouse.duck import open_readonly


@pytest.fixture(scope="module", params=BUNDLED)
def world(request, specs, tmp_path_factory):
    wh = Warehouse(tmp_path_factory.mktemp(f"deep-{request.param}"))
    path = built_world(specs[request.param], wh)
    index_corpora(path)
    questions, problems = build_deep_questions(path)
    return wh, path, questions, problems


def test_every_corpus_gets_twenty_unique_chained_questions(world):
    wh, path, questions, problems = world
    assert problems == {}  # DuckDB answers every question with exactly its answer
    by_corpus: dict = {}
    for q in questions:
        by_corpus.setdefault(q.scenario, []).append(q)
    assert None in by_corpus and len(by_corpus) >= 2  # the world and its time-shifted scenarios
    for scen, qs in by_corpus.items():
        assert len(qs) >= 20, (scen, len(qs))
        assert len({q.question for q in qs}) == len(qs)
    for scen, qs in by_corpus.items():  # issue 48: at least eight patterns in every corpus
        assert len({q.pattern for q in qs}) >= 8 and {q.pattern for q in qs} <= set(PATTERNS), (scen, sorted({q.pattern for q in qs}))
    assert {q.answer_type for q in questions} >= {"name", "number", "date"}
    assert all(2 <= q.hops <= 6 for q in questions) and max(q.hops for q in questions) >= 5 and len({q.hops for q in questions}) >= 4
    for q in questions:
        pages = set(read_corpus(path, q.scenario, dressed=False)[0]["url"].to_list())
        assert q.gold_urls and set(q.gold_urls) <= set(q.evidence_urls) <= pages, q.question_id
        assert q.answer.lower() not in q.question.lower() or q.answer.replace(".", "").isdigit() or len(q.answer) <= 3
        assert "{" not in q.question and "  " not in q.question
        assert prompt(q).endswith(ANSWER_FORMAT)


def test_the_oracle_answers_every_deep_question_through_the_tools(world):
    wh, path, questions, _ = world
    for q in questions:
        env = SearchEnv(q.world, q.scenario, as_task(q), warehouse=wh, seed=3)
        run = answer_deep(env, q)
        assert run.failed is None, (q.question_id, run.failed)
        assert run.grade.correct and run.grade.method == "exact" and run.grade.confidence == 1.0, (q.question_id, q.answer, run.grade)
        tools = {call["name"] for call, _ in run.steps}
        assert tools <= {"web_search", "web_extractor"} and "web_search" in tools


def _loose(q):
    """``q`` with its chain loosened (a parent question without its clues; an extreme one that takes every child at or
    above the lowest): its SQL answers with several rows."""
    return dataclasses.replace(q, question_id="loose", sql=re.sub(r" WHERE .*$", "", q.sql) if q.pattern == "parent" else
                               q.sql.replace("(SELECT max(", "(SELECT min(").replace("= (SELECT", ">= (SELECT"))


def test_verify_deep_rejects_a_wrong_answer_and_an_ambiguous_chain(world):
    _, path, questions, _ = world
    q = next(x for x in questions if x.pattern == "parent")
    wrong = dataclasses.replace(q, answer=q.answer + "x")
    loose = _loose(q)
    broken = dataclasses.replace(q, question_id="broken", sql="SELECT nope FROM nowhere")
    with open_readonly(path) as con:
        problems = verify_deep(con, [q, wrong, loose, broken])
    assert q.question_id in problems and "the question's answer is" in problems[q.question_id]  # the wrong copy shares its id
    assert "rows answer it in DuckDB, not one" in problems["loose"]
    assert problems["broken"].startswith("its query failed")


def test_verify_deep_asks_duckdb_once_and_gets_what_a_query_a_question_gets(world):
    from worldforge.tasks.deep import _answers_together

    _, path, questions, _ = world
    q = next(x for x in questions if x.pattern == "parent")
    wrong = dataclasses.replace(q, question_id="wrong", answer=q.answer + "x")
    loose = _loose(q)
    with open_readonly(path) as con:
        together = _answers_together(con, questions + [loose])
        for i, x in enumerate(questions + [loose]):  # the same values, of the same types, as each query alone
            alone = [r[:1] for r in con.execute(x.sql).fetchall()]
            assert sorted(together.get(i, []), key=repr) == sorted(alone, key=repr), x.question_id
            assert [type(v) for (v,) in together.get(i, [])] == [type(v) for (v,) in alone]
        assert verify_deep(con, questions) == {}
        problems = verify_deep(con, [q, wrong, loose])
    assert set(problems) == {"wrong", "loose"} and "the question's answer is" in problems["wrong"]


def test_grading_follows_browsecomp(world):
    q = next((q for q in world[2] if q.answer_type == "number" and not q.exact), None) \
        or dataclasses.replace(next(q for q in world[2] if q.answer_type == "number"), exact=False)  # a world whose numbers asked are all whole
    name = next(q for q in world[2] if q.answer_type == "name")
    ok = f"Explanation: I read the pages.\nExact Answer: {q.answer}\nConfidence: 85%"
    assert parse_response(ok) == (q.answer, 0.85)
    assert grade_response(ok, q).correct
    near = float(q.answer) * 1.004
    assert grade_response(f"Exact Answer: {near:.4f}\nConfidence: 0.5", q).correct  # within 1%
    assert not grade_response(f"Exact Answer: {float(q.answer) * 1.2 + 1:.4f}", q).correct
    assert not grade_response(f"The answer is {q.answer}.", q).correct  # no Exact Answer line: wrong
    assert grade_response(f"**Exact Answer:** {name.answer.upper()}", name).correct
    assert not grade_response("Exact Answer: somebody else", name).correct
    assert matches("March 5, 2029", "Mar 05, 2029", "date") and not matches("March 6, 2029", "Mar 05, 2029", "date")
    assert matches("7", "7", "number", exact=True) and not matches("7.01", "7", "number", exact=True)
    assert matches("72.3%", "72.3", "number") and matches("72.3%", "0.723", "number") and not matches("72.3", "0.723", "number")
    assert matches("1,234 units", "1234", "number", exact=True) and not matches("1999", "1987", "number", exact=True)
    assert matches('"Finland."', "Finland", "name") and not matches("Finlandia", "Finland", "name")
    assert parse_response("Exact Answer:\nConfidence: 100%") == (None, 1.0)  # an empty answer line is no answer
    assert parse_response("Exact Answer: X\nConfidence: 1%") == ("X", 0.01)
    exact = [q for q in world[2] if q.exact]  # whole-number columns (counts, years, ranks) match exactly
    assert exact and all(q.answer_type == "number" and "." not in q.answer for q in exact)

    verdicts = []

    def judge(responses, targets, criterion):
        verdicts.append((responses, targets))
        return [0.0]

    graded = grade_response(ok, q, judge=judge)
    assert (graded.correct, graded.method) == (False, "judge") and verdicts == [([q.answer], [q.answer])]
    undecided = grade_response(ok, q, judge=lambda r, t, c: [None])
    assert (undecided.correct, undecided.method) == (True, "exact")


def test_the_task_build_stores_the_same_verified_questions(world):
    _, path, questions, _ = world
    built = build_tasks(path)
    assert built.deep_problems == {} and len(built.deep) == len(questions)
    stored = read_deep_questions(path, all_scenarios=True)
    assert [q.to_dict() for q in stored] == sorted((q.to_dict() for q in built.deep), key=lambda d: d["question_id"])
    assert {q.question_id: q.answer for q in stored} == {q.question_id: q.answer for q in questions}  # the same stream: the same questions
    assert {q.scenario for q in read_deep_questions(path)} == {None}
    with open_readonly(path) as con:  # inspectable with SQL, and not listed among the world's tables
        assert con.execute("SELECT count(*) FROM deep_questions").fetchone()[0] == len(questions)
        assert con.execute("SELECT count(*) FROM v_columns WHERE table_name = 'deep_questions'").fetchone()[0] == 0


def test_an_environment_rewards_a_deep_answer_by_its_correctness(world):
    wh, _, questions, _ = world
    q = next(q for q in questions if q.answer_type == "name")
    rewards = []
    for text in (f"Explanation: read it.\nExact Answer: {q.answer}\nConfidence: 90%", "Exact Answer: not it", q.answer):
        env = SearchEnv(q.world, q.scenario, as_task(q), warehouse=wh, seed=1)
        env.reset()
        env.step({"name": "web_search", "arguments": {"query": q.question[:80]}})
        rewards.append(env.submit(text))
    assert [r.value for r in rewards] == [1.0, 0.0, 0.0]
    assert [r.format_ok for r in rewards] == [True, True, False]
    assert rewards[0].score.f1_by_row == 1.0 and "exact match" in rewards[0].score.notes[0]
    assert question_of(as_task(q)).question == q.question


def test_clues_over_negative_fractional_values_are_whole_numbers(tmp_path):
    """A spec whose air temperatures are negative with decimals: the blurred range is whole numbers one past each side
    ("between -8 °C and -5 °C"), never binary floating-point noise ("-7.659999999999999 °C")."""
    from pathlib import Path

    from worldforge.spec import load_spec

    path = built_world(load_spec(Path(__file__).parents[2] / "bench" / "specs" / "avalanche_watch_2035.yaml"), tmp_path)
    index_corpora(path)
    questions, problems = build_deep_questions(path)
    assert problems == {}
    spans = [m for q in questions for m in re.findall(r"between (-[\d.,]+) °C and (-?[\d.,]+) °C", q.question)]
    assert spans  # the spec's temperatures are clues
    for lo, hi in spans:
        assert re.fullmatch(r"-\d+", lo) and re.fullmatch(r"-?\d+", hi), (lo, hi)
        assert int(hi) - int(lo) >= 2
    assert not any(re.search(r"\d\.\d{5,}", q.question) for q in questions)


def test_every_pattern_is_checked_by_its_own_query(world):
    """Each pattern's SQL is what makes its answer unique: the answer of another question of the same pattern (or a
    changed one) is rejected, and each pattern's chain is asked as its own kind of query (issue 48)."""
    _, path, questions, _ = world
    by_pattern: dict = {}
    for q in questions:
        by_pattern.setdefault(q.pattern, []).append(q)
    wrong = []
    for pattern, qs in by_pattern.items():
        q = qs[0]
        other = next((x.answer for x in qs if x.answer != q.answer and x.answer_type == q.answer_type), q.answer + "x")
        wrong.append(dataclasses.replace(q, question_id=f"wrong-{pattern}", answer=other))
    with open_readonly(path) as con:
        problems = verify_deep(con, wrong)
    assert set(problems) == {w.question_id for w in wrong}
    assert all("the question's answer is" in p for p in problems.values())
    shapes = {"aggregate": "count(*)", "temporal": "min(", "two_entity": " IN (SELECT", "comparative": " > a.", "exclusion": "WITH p AS"}
    for pattern, needle in shapes.items():
        qs = by_pattern.get(pattern, [])
        assert qs, pattern
        assert any(needle in q.sql or (pattern == "comparative" and " < a." in q.sql) or (pattern == "aggregate" and "sum(" in q.sql)
                   for q in qs), (pattern, qs[0].sql)


def test_hand_written_specs_get_every_pattern_and_the_oracle_answers_them(tmp_path):
    """A spec no archetype names (bench/specs) gets eight or more patterns, 20+ questions, hops up to 5 or 6, each
    verified unique and answered by the oracle through the tools."""
    from pathlib import Path

    from worldforge.spec import load_spec

    path = built_world(load_spec(Path(__file__).parents[2] / "bench" / "specs" / "lighthouse_keepers_2033.yaml"), tmp_path)
    index_corpora(path)
    questions, problems = build_deep_questions(path)
    assert problems == {} and len(questions) >= 20
    assert len({q.pattern for q in questions}) >= 8 and max(q.hops for q in questions) >= 5
    for q in questions:
        run = answer_deep(SearchEnv(q.world, q.scenario, as_task(q), warehouse=Warehouse(tmp_path), seed=3), q)
        assert run.grade.correct, (q.question_id, q.pattern, run.failed, q.answer)


def test_clues_include_the_ranks_pages_claim_and_the_base_years_archive(world):
    """Clues are things pages say: a rank a page claims ("it has the second-lowest launch price of the models of its
    brand") is a clue, checked in DuckDB by a rank() window; and in a scenario, a temporal question may describe a row by
    what the base year's archived dataset said of it (issue 48)."""
    _, path, questions, _ = world
    from worldforge.corpus.store import read_claims

    ranked = [q for q in questions if "rank() OVER" in q.sql]
    assert ranked, "no question uses a claimed rank"
    claims = read_claims(path)
    claimed = {(t, k, c) for t, k, c in claims.filter(claims["kind"] == "rank").select("table_name", "row_key", "column_name").iter_rows()}
    for q in ranked:
        assert re.search(r"(highest|lowest|most|fewest|earliest|latest) .*of (the|all the) ", q.question), q.question
        if q.scenario is None:  # the ranked cell is one a page of the world's corpus claims a rank for
            assert any(tuple(c[:3]) in claimed for c in q.cells), q.question_id
    archive = [q for q in questions if q.scenario and q.pattern == "temporal" and "JOIN \"main\"." in q.sql]
    for q in archive:
        assert re.search(r" (was|were|had) .* in \d{4}", q.question) and q.plan["base"]["title"].startswith("Archived dataset: ")


def test_a_never_negative_quantity_is_never_blurred_below_zero(world):
    _, _, questions, _ = world
    assert not [q.question for q in questions if re.search(r"between -\d+ (hours?|days?|readings?|points?|wins?)\b", q.question)]
