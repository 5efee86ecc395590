from datetime import date

import polars as pl
import pytest

from worldforge.errors import ExpressionError
from worldforge.spec import expr as E


def evaluate(text: str, frame: pl.DataFrame, target_year: int = 2029) -> list:
    return frame.select(E.to_polars(E.parse(text), target_year).alias("v"))["v"].to_list()


FRAME = pl.DataFrame({"a": [1, 2, 3], "b": [10.0, 20.0, 30.0], "s": ["alpha", "Beta", "gamma"], "d": [date(2029, 1, 1), date(2029, 2, 1), date(2029, 3, 1)]})


@pytest.mark.parametrize(
    "text, expected",
    [
        ("a + b * 2", [21.0, 42.0, 63.0]),
        ("(a + 1) * 2 - -1", [5, 7, 9]),
        ("round(b / 3, 1)", [3.3, 6.7, 10.0]),
        ("if(a >= 2 and not (s == 'gamma'), 'yes', 'no')", ["no", "yes", "no"]),
        ("upper(substr(s, 0, 3))", ["ALP", "BET", "GAM"]),
        ("concat(s, '-', str(a))", ["alpha-1", "Beta-2", "gamma-3"]),
        ("max(a, 2)", [2, 2, 3]),
        ("year(d) * 100 + month(d)", [202901, 202902, 202903]),
        ("days_between(d, add_days(d, a))", [1, 2, 3]),
        ("days_between(d, date('Y-12-31'))", [364, 333, 305]),
        ("days_between(d, as_of())", [364, 333, 305]),  # as_of() defaults to Dec 31 of the target year
        ("a % 2 == 1 or a == 2", [True, True, True]),
    ],
)
def test_evaluates(text, expected):
    assert evaluate(text, FRAME) == expected


def test_as_of_follows_the_given_date():
    assert evaluate("days_between(d, as_of())", FRAME.head(1)) == [364]
    got = FRAME.head(1).select(E.to_polars(E.parse("days_between(d, as_of())"), 2029, date(2029, 1, 31)).alias("v"))["v"].to_list()
    assert got == [30]


def test_columns_of_includes_parent_lookups():
    assert E.columns_of(E.parse("price * (100 - discount) + brands.code_len")) == {"price", "discount", "brands.code_len"}


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("__import__('os')", "unknown function '__import__'"),
        ("open('/etc/passwd')", "unknown function 'open'"),
        ("a.b.c", "only one level"),
        ("a; b", "unexpected character ';'"),
        ("lambda: 1", "unexpected character ':'"),
        ("a[0]", "unexpected character '['"),
        ("round(a", "expected ')'"),
        ("if(a, b)", "if() takes 3 arguments"),
        ("date(a)", "string literal"),
        ("date('2029-13-01')", "use 'YYYY-MM-DD'"),
        ("", "empty"),
        ("a +", "unexpected end of expression"),
    ],
)
def test_rejects(text, fragment):
    with pytest.raises(ExpressionError, match=None) as info:
        E.parse(text)
    assert fragment in str(info.value)


@pytest.mark.parametrize("text", ["(not a) == b", "-(not a)", "(not a) + 1", "0.00001", "0.0000015"])
def test_unparse_keeps_the_meaning_of_not_and_small_floats(text):
    """Found by tests/fuzz: ``unparse`` wrote ``not a == b`` for ``(not a) == b``, ``-not a`` and ``1e-05``."""
    node = E.parse(text)
    assert E.parse(E.unparse(node)) == node
