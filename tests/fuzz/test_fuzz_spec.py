"""Fuzzing world specs: random YAML, and the bundled specs mutated as documents and as text.

Promise: :func:`~worldforge.spec.load_spec` (what ``worldforge world build`` reads a spec with)
returns a spec or raises :class:`~worldforge.errors.SpecError`; a spec that loads builds a world
(:func:`~worldforge.synth.build_world`, its invariants and scenarios) or fails with a
:class:`~worldforge.errors.WorldforgeError`: never a raw Python, YAML, pydantic or polars
exception, and within a bounded time.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import event, given
from hypothesis import strategies as st

from tests.conftest import BUNDLED, SPECS_DIR
from tests.fuzz.budget import bounded, fuzz
from tests.fuzz.strategies import edge_values, json_values, mutated, text_edits
from worldforge.errors import SpecError, WorldforgeError
from worldforge.scenarios import build_scenarios
from worldforge.spec import WorldSpec, load_spec, spec_from_dict
from worldforge.synth import build_world
from worldforge.synth.invariants import check_world

pytestmark = pytest.mark.filterwarnings("ignore:Generating overly large repr")

TEXTS = {name: (SPECS_DIR / f"{name}.yaml").read_text() for name in BUNDLED}
DOCS = {name: yaml.safe_load(text) for name, text in TEXTS.items()}
SPEC_FIELDS = [
    "kind", "expr", "rows", "min", "max", "values", "weights", "unique", "parent", "cardinality", "of", "within", "fn",
    "child", "template", "provider", "args", "start", "step", "end", "dtype", "decimals", "percent", "distribution",
    "mean", "std", "scenarios", "shift_years", "as_of", "counter_within", "locale", "columns", "constraints", "by", "rank",
]
KINDS = ["sequence", "faker", "choice", "number", "date", "format", "reference", "derive", "rank", "share", "aggregate",
         "unique", "range", "monotone", "check", "not_after_as_of"]
spec_values = st.one_of(json_values, st.sampled_from(KINDS), edge_values,
                        st.sampled_from(["name * 2", "lead_days + 1", "'a' + 'b'", "Y-06-30", "Y+1-02-29", "{n:05d}", "{brands.code}-{n}"]))
YAML_NOISE = ["&a ", "*a", "<<: *a\n", "!!python/object/apply:os.system ['true']", "!!binary AAAA", "{", "[", "\t", "- ", ": ",
              "'", '"', "\x00", "\ufeff", "%YAML 1.1\n", "---\n", "? ", "1" * 400, "9" * 30, ".inf", ".nan", "~", "\ud800"]


def _write(text: str, folder: str) -> Path:
    path = Path(folder) / "fuzzed.yaml"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))  # a lone surrogate becomes bytes that are not UTF-8
    return path


def _load(text: str) -> WorldSpec | None:
    """``load_spec`` on ``text`` written to a file: the spec, or None after a SpecError."""
    with tempfile.TemporaryDirectory() as folder:
        try:
            spec = load_spec(_write(text, folder))
        except SpecError as exc:
            assert str(exc).startswith(str(Path(folder) / "fuzzed.yaml")) and exc.problems
            event("refused: SpecError")
            return None
    assert isinstance(spec, WorldSpec)
    return spec


def _build(spec: WorldSpec) -> None:
    """Build, check and shift a valid spec's world: it works or raises a WorldforgeError."""
    try:
        tables = build_world(spec)
        check_world(spec, tables)
        build_scenarios(spec, tables)
    except WorldforgeError as exc:
        assert str(exc)
        event(f"refused at build: {type(exc).__name__}")
        return
    event("built")
    assert 0 < sum(t.height for t in tables.values())


@fuzz(weight=1)
@given(st.text(max_size=300) | st.lists(st.sampled_from(YAML_NOISE) | st.text(max_size=10), max_size=20).map("".join))
def test_random_text_is_a_spec_error(text):
    with bounded("spec", 5):
        _load(text)


@fuzz(weight=1)
@given(st.dictionaries(st.sampled_from(["world", "seed", "target_year", "as_of", "tables", "scenarios", "title"]) | st.text(max_size=6),
                       spec_values, max_size=6) | json_values)
def test_random_documents_are_spec_errors(doc):
    with bounded("spec", 5):
        try:
            text = yaml.safe_dump(doc, allow_unicode=True)
        except yaml.YAMLError:  # pragma: no cover - safe_dump writes any JSON value
            return
        spec = _load(text)
        if spec is not None:
            _build(spec)


@fuzz(weight=1)
@given(st.sampled_from(BUNDLED).flatmap(lambda name: mutated(DOCS[name], SPEC_FIELDS, spec_values)))
def test_mutated_bundled_specs_build_or_are_clear_errors(doc):
    with bounded("spec", 20):
        try:
            spec = spec_from_dict(doc)
        except SpecError as exc:
            assert exc.problems and all(isinstance(p, str) and isinstance(m, str) for p, m in exc.problems)
            event("refused: SpecError")
            return
        _build(spec)


@fuzz(weight=0.5)
@given(st.sampled_from(BUNDLED).flatmap(lambda name: text_edits(TEXTS[name], YAML_NOISE)))
def test_edited_spec_files_build_or_are_clear_errors(text):
    with bounded("spec", 20):
        spec = _load(text)
        if spec is not None:
            _build(spec)
