"""Questions read like real ones: no template seams, varied frames, totals only of what adds up, no compose-only columns.

Questions are collected from every bundled world and one world per archetype (drawn as the catalog draws
them). The skeleton of a question masks capitalised words and numbers: the share of distinct skeletons
measures how much the wording varies beyond the world's own names.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from tests.conftest import BUNDLED, SPECS_DIR
from tests.conftest_worlds import built_world
from worldforge.catalog.archetype import load_archetypes
from worldforge.catalog.generate import draw_spec
from worldforge.corpus import generate_corpus, write_corpus
from worldforge.corpus.vocab import table_info
from worldforge.errors import SpecError
from worldforge.spec import load_spec, spec_from_dict
from worldforge.synth import build_world
from worldforge.tasks.store import build_tasks
from worldforge.warehouse import Warehouse, read_world, write_world

# constructions a template leaves behind when it does not fit (never in a question)
BANNED = {
    "bare row number": r"#\d",
    "unfilled placeholder": r"\{(?!table\})[^}]*\}",
    "'what the X of Y is?'": r"\bwhat the [^?]* is\?",
    "'a number of X of N'": r"\ba number of \w+ of\b",
    "'number of X of at least'": r"\bnumber of \w+ (of|no) (at|more|less|higher)",
    "doubled word": r"\b(the|a|an|of|and|its|their|with|in|is)\s+\1\b",
    "space before punctuation": r"\w [,.;:?](\s|$)",
    "doubled punctuation": r"[,;:]\s*[,.;:]|\.\.(?!\.)",
    "article before a vowel": r"\ba (?=[aeio][a-z])",
    "'every X that were'": r"\bevery [a-z ]+? that were\b",
    "'whose X are/is' with a verb label": r"\bwhose (has|is) ",
    "column identifier": r"\b[a-z]+_[a-z_]+\b",
    "a None or nan": r"\b(None|nan)\b",
    "a preface's colon before a new sentence": r"\b(briefing|analysis|drafting|task|please):\s+[A-Z]",
}


def _skeleton(question: str) -> str:
    """The words of a question's prose with names (capitalised words, after the first), italics and numbers masked."""
    prose = question.split("\n\n")[0]
    prose = re.sub(r"\*[^*]+\*", "W", prose)
    prose = re.sub(r"[$€£]?\d[\d,.]*%?", "N", prose)
    words = prose.split()
    return " ".join([words[0]] + ["C" if w[:1].isupper() else w for w in words[1:]]) if words else ""


def _archetype_world(name, arch, wh: Warehouse) -> Path | None:
    for seed in range(8):
        try:
            spec = spec_from_dict(draw_spec(arch, random.Random(seed), f"arch_{name}"))
        except SpecError:
            continue
        tables = build_world(spec)
        path = write_world(spec, tables, wh)
        write_corpus(path, generate_corpus(path))
        return path
    return None


@pytest.fixture(scope="module")
def worlds(tmp_path_factory):
    """``(spec, tables, tasks)`` of every bundled world and one world per archetype."""
    out = []
    wh = Warehouse(tmp_path_factory.mktemp("wh"))
    for name in BUNDLED:
        path = built_world(load_spec(SPECS_DIR / f"{name}.yaml"), wh)
        wf = read_world(path)
        out.append((wf.spec, wf.tables, build_tasks(path).tasks))
    for name, arch in sorted(load_archetypes().items()):
        path = _archetype_world(name, arch, wh)
        if path is not None:
            wf = read_world(path)
            out.append((wf.spec, wf.tables, build_tasks(path).tasks))
    return out


def test_no_template_seams_in_any_question(worlds):
    found: dict[str, list[str]] = {}
    for _, _, tasks in worlds:
        for t in tasks:
            prose = t.question.split("\n\n")[0] if t.extra["kind"] != "deep_wide" else t.question.rsplit("\n\n", 1)[0]
            for what, pattern in BANNED.items():
                if re.search(pattern, prose):
                    found.setdefault(what, []).append(prose[:240])
    assert not found, {k: v[:3] for k, v in found.items()}


def test_questions_vary_in_wording(worlds):
    questions = [t.question for _, _, tasks in worlds for t in tasks]
    skeletons = {_skeleton(q) for q in questions}
    openings = {" ".join(_skeleton(q).split()[:3]) for q in questions}
    blocks = {re.sub(r"[^\n]*: [^\n]*\n?", "", q.split("\n\n", 1)[1])[:60] for q in questions if "\n\n" in q}
    ratio = len(skeletons) / len(questions)
    print(f"{len(questions)} questions, {len(skeletons)} skeletons ({ratio:.2f}), {len(openings)} openings, {len(blocks)} instruction blocks")
    assert ratio >= 0.9 and len(openings) >= 150 and len(blocks) >= 5  # measured: 0.99, 396 openings over 1,284 questions


def test_totals_only_of_additive_columns_and_no_compose_only_column(worlds):
    sums = 0
    for spec, tables, tasks in worlds:
        info = {t: table_info(spec, t, tables[t]) for t in spec.tables}
        compose = {(t, c) for t in info for c, ci in info[t].columns.items() if ci.compose_only}
        for task in tasks:
            plan = task.extra["plan"]
            fields = [c["field"] for c in plan["columns"]] + [w["field"] for w in plan.get("where", [])]
            fields += [plan["group"]] if "group" in plan else []
            for f in fields:
                col = next((c for c, ci in info[f["table"]].columns.items() if ci.label[:1].upper() + ci.label[1:] == f.get("read")), None)
                assert (f["table"], col) not in compose, (task.instance_id, f)
            for c in plan["columns"]:
                if c["agg"] == "sum":
                    sums += 1
                    f = c["field"]
                    col = next(x for x, ci in info[f["table"]].columns.items() if ci.label[:1].upper() + ci.label[1:] == f["read"])
                    assert info[f["table"]].columns[col].additive, (task.instance_id, f["table"], col)
            prov_cols = {c[2] for c in task.extra["provenance"]["cells"]}
            assert not prov_cols & {c for _, c in compose if _ == plan["table"]}, task.instance_id
    assert sums > 0
