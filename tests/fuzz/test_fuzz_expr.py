"""Fuzzing the expression language: parser, printer, type checker and evaluation in a world.

Promises: any text parses to an AST or raises :class:`~worldforge.errors.ExpressionError`; a
parsed AST printed back (:func:`~worldforge.spec.expr.unparse`) parses to the same AST; the type
checker returns one of :data:`~worldforge.spec.expr.TYPES` or raises ExpressionError; and an
expression placed in a real spec (a ``derive`` column and a ``check`` constraint) ends in a world
or in a :class:`~worldforge.errors.WorldforgeError`, never a polars or Python exception.
"""

from __future__ import annotations

import copy

import pytest
import yaml
from hypothesis import event, given
from hypothesis import strategies as st

from tests.conftest import SPECS_DIR
from tests.fuzz.budget import bounded, fuzz
from tests.fuzz.strategies import expression_noise, expressions, typed_expressions
from worldforge.errors import ExpressionError, WorldforgeError
from worldforge.spec import expr as E
from worldforge.spec import spec_from_dict
from worldforge.spec.limits import MAX_EXPR_CHARS
from worldforge.synth import build_world
from worldforge.synth.invariants import check_world

pytestmark = pytest.mark.filterwarnings("ignore:Generating overly large repr")

PHONES = yaml.safe_load((SPECS_DIR / "smartphones_2029.yaml").read_text())
MODEL_TYPES = {"price_index": "float", "screen_in": "float", "lead_days": "int", "storage_gb": "int", "battery_mah": "int",
               "shipments_k": "int", "brand_id": "int", "announced": "date", "launch_date": "date", "segment": "str",
               "series": "str", "brands.name": "str", "brands.strategy": "str"}
COLUMN_TYPES = {"i": "int", "f": "float", "s": "str", "b": "bool", "d": "date", "a": "any"}

any_text = st.one_of(st.text(max_size=120), expression_noise, expressions(["a", "b", "s", "d", "p.q"]))


@fuzz(weight=3)
@given(any_text)
def test_any_text_parses_or_is_an_expression_error(text):
    with bounded("expr", 2):
        try:
            node = E.parse(text)
        except ExpressionError as exc:
            assert str(exc)
            return
        assert E._depth(node) <= E.MAX_EXPR_DEPTH


@fuzz(weight=2)
@given(expressions(["a", "b", "s", "d", "p.q"], max_leaves=20))
def test_a_parsed_expression_prints_back_to_itself(text):
    with bounded("expr", 2):
        try:
            node = E.parse(text)
        except ExpressionError:
            return
        printed = E.unparse(node)
        if len(printed) > MAX_EXPR_CHARS:  # the printer adds spaces and parentheses
            return
        assert E.parse(printed) == node, printed


@fuzz(weight=2)
@given(expressions(list("ifsbda"), max_leaves=16))
def test_the_type_checker_types_or_refuses(text):
    types = {c: COLUMN_TYPES[c] for c in "ifsbda"}
    with bounded("expr", 2):
        try:
            node = E.parse(text)
            t = E.infer_type(node, types, text)
        except ExpressionError as exc:
            assert str(exc)
            return
        assert t in E.TYPES


@fuzz(weight=1)
@given(st.one_of(expressions(list(MODEL_TYPES), max_leaves=8), typed_expressions(MODEL_TYPES)), st.sampled_from([None, "int", "float", "str", "bool", "date"]), st.booleans())
def test_an_expression_in_a_world_builds_or_is_a_clear_error(text, dtype, as_check):
    doc = copy.deepcopy(PHONES)
    table = doc["tables"]["models"]
    if as_check:
        table["constraints"].append({"kind": "check", "expr": text})
    else:
        table["columns"]["fuzzed"] = {"kind": "derive", "expr": text, **({"dtype": dtype} if dtype else {})}
    with bounded("expr", 15):
        try:
            spec = spec_from_dict(doc)
            tables = build_world(spec)
            check_world(spec, tables)
        except WorldforgeError as exc:
            assert str(exc)
            event(f"refused: {type(exc).__name__}")
            return
        event("built")
        if not as_check:
            assert tables["models"]["fuzzed"].len() == tables["models"].height

