"""Values as people write them, and back: units, site styles, formatting and parsing.

A page states a cell the way its site writes: ``$1,099`` or ``1,099 USD``; ``2,650,000 units``
on an encyclopedia, ``2.65 million units`` in a news story; ``Mar 5, 2029`` on one site,
``5 March 2029`` or ``2029-03-05`` on another. :func:`format_value` writes a value in a
:class:`Style`; :func:`parse_value` reads any of those forms back into the column's own unit, and
:func:`denotes` says whether a stated text is a faithful writing of a cell, allowing only the
rounding its own digits show (``$1.41 billion`` denotes 1,411.2 million USD; ``$1.42 billion``
does not). The corpus fact check, the LLM-rendering verifier and the oracle agent all read
values through these functions, so a page and its checker never disagree on what a text says.

Units are the spec's unit strings: an optional scale word (``thousand``, ``million``,
``billion``) and a base: a currency code (``USD``, ``EUR`` ...), ``percent``, a duration
(``days``, ``hours`` ...) or any other unit or count noun (``GWh``, ``mAh``, ``units``).
"""

from __future__ import annotations

import math
import re
from datetime import date, datetime
from functools import lru_cache
from typing import Any, NamedTuple

__all__ = ["CALENDAR_YEAR", "DATE_FORMATS", "Style", "Unit", "denotes", "format_date", "format_number", "format_value", "parse_date", "parse_number", "parse_unit", "parse_value", "render_value"]

SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
_SCALE_ABBR = {"k": 1e3, "mn": 1e6, "bn": 1e9, "tn": 1e12}
CURRENCIES = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "CNY": "CN¥", "INR": "₹", "KRW": "₩", "AUD": "A$", "CAD": "C$",
              "CHF": None, "BRL": "R$", "MXN": "MX$", "SGD": "S$", "HKD": "HK$", "SEK": None, "NOK": None, "ZAR": "R"}
CALENDAR_YEAR = "calendar year"
"""The unit of a column of calendar years (``year founded``): written as a year is, without a thousands separator."""
_TIME = {"day", "days", "hour", "hours", "minute", "minutes", "second", "seconds", "week", "weeks", "month", "months", "year", "years"}
_SINGULAR = {"days": "day", "hours": "hour", "minutes": "minute", "seconds": "second", "weeks": "week", "months": "month",
             "years": "year", "inches": "inch", "units": "unit", "people": "person", "passengers": "passenger"}
_PLURAL = {"inch": "inches", "foot": "feet", "person": "people"}

DATE_FORMATS = {
    "mdy_short": "%b {day2}, %Y",   # Mar 05, 2029
    "mdy_abbr": "%b {day}, %Y",     # Mar 5, 2029
    "mdy_long": "%B {day}, %Y",     # March 5, 2029
    "dmy_long": "{day} %B %Y",      # 5 March 2029
    "iso": "%Y-%m-%d",              # 2029-03-05
}
"""Date styles by name; ``{day}`` is the day without a leading zero, ``{day2}`` with one."""


class Unit(NamedTuple):
    """A unit as the spec writes it, split into a scale and a base (a named tuple: every written value's memo key holds
    one, and a tuple hashes in C).

    Attributes:
        text: the spec's text (``thousand units``).
        base: the unit without its scale (``units``, ``USD``, ``percent``; empty for a bare scale).
        scale: what one unit of the column is in ``base`` (1e3 for ``thousand units``).
        kind: ``money``, ``percent``, ``share`` (a 0–1 fraction), ``time``, ``year`` (a calendar year:
            ``1950``, never ``1,950``) or ``measure``.
        symbol: the currency symbol (``$``) or ``None``.
    """

    text: str
    base: str
    scale: float
    kind: str
    symbol: str | None = None

    def header(self) -> str:
        """The unit in a column header: ``USD``, ``thousand units``, ``%``."""
        return "%" if self.kind == "percent" else ("" if self.kind in ("share", "year") else self.text)

    def words(self, amount: float) -> str:
        """The base unit after an amount, singular for exactly 1 (``1 day``, ``6.1 inches``)."""
        base = self.base
        if amount == 1:
            if base in _SINGULAR:
                return _SINGULAR[base]
            if base.isalpha() and base.islower() and base.endswith("s") and len(base) > 3:  # "1 language"; never "ms" -> "m"
                from worldforge.corpus.lexicon import singular_of_plural

                return singular_of_plural(base) or base
            return base
        return _PLURAL.get(base, base)


@lru_cache(maxsize=1024)
def parse_unit(text: str) -> Unit:
    """A :class:`Unit` from the spec's unit text (``million USD``, ``percent``, ``GWh``, ``thousand``)."""
    words = text.strip().split()
    scale = 1.0
    if words and words[0].lower() in SCALES:
        scale = SCALES[words.pop(0).lower()]
    base = " ".join(words)
    if base.upper() in CURRENCIES:
        return Unit(text, base.upper(), scale, "money", CURRENCIES[base.upper()])
    if base.lower() in ("percent", "%", "pct", "percentage points", "pp"):
        return Unit(text, "percent", scale, "percent")
    if base.lower() in ("share", "fraction", "ratio"):
        return Unit(text, base, scale, "share")
    if base.lower() == CALENDAR_YEAR:
        return Unit(text, CALENDAR_YEAR, 1.0, "year")
    if base.lower() in _TIME:
        return Unit(text, base.lower(), scale, "time")
    return Unit(text, base, scale, "measure")


class Style(NamedTuple):
    """How one site writes values (a named tuple, hashed in C: it is part of the key of every value a page writes).

    Attributes:
        date_format: a key of :data:`DATE_FORMATS`.
        money: ``symbol`` ($1,099), ``code`` (1,099 USD) or ``prefixed`` (US$1,099).
        compact: write large amounts in words, to three significant digits (``2.65 million units``);
            otherwise every digit (``2,650,000 units``).
    """

    date_format: str = "mdy_short"
    money: str = "symbol"
    compact: bool = False


def format_date(d: date, date_format: str = "mdy_short") -> str:
    """A date in one of :data:`DATE_FORMATS`."""
    pattern = DATE_FORMATS[date_format].replace("{day2}", f"{d.day:02d}").replace("{day}", str(d.day))
    return d.strftime(pattern)


def format_number(x: float, decimals: int | None = None) -> str:
    """A number with thousands separators: ``2650000`` -> ``2,650,000``; ``1411.2`` -> ``1,411.2``.

    Floats keep their shortest exact digits unless ``decimals`` is given; whole floats lose ``.0``.
    """
    if isinstance(x, bool):
        return "yes" if x else "no"
    if decimals is not None:
        text = f"{x:,.{decimals}f}"
        return text.rstrip("0").rstrip(".") if "." in text else text
    if isinstance(x, int) or float(x).is_integer():
        return f"{int(round(x)):,}"
    whole, _, frac = repr(float(x)).partition(".")
    if "e" in frac or "e" in whole:
        return repr(float(x))
    return f"{int(whole):,}.{frac}" if whole not in ("-0",) else f"-0.{frac}"


def _compact(base: float) -> tuple[str, str] | None:
    """``(mantissa, scale word)`` with three significant digits: ``2650000`` -> ``("2.65", "million")``;
    ``None`` when the mantissa would end in zeros (``4.00`` reads as ``4``, a claim of less precision)."""
    for word, size in (("trillion", 1e12), ("billion", 1e9), ("million", 1e6)):
        if abs(base) >= size:
            m = base / size
            digits = max(0, 2 - int(math.floor(math.log10(abs(m)))))
            full = f"{round(m, digits):.{digits}f}"
            if digits and full.endswith("0"):
                return None
            return format_number(round(m, digits), digits), word
    return None


def _amount(base: float, unit: Unit, style: Style) -> tuple[str, str]:
    """The number part and scale word of an amount in base units, per style."""
    if style.compact and abs(base) >= 1e6 and (short := _compact(base)) is not None:
        return short
    if unit.scale != 1 and not float(base).is_integer():
        return format_number(base / unit.scale), [w for w, s in SCALES.items() if s == unit.scale][0]
    if unit.scale != 1 and abs(base) >= 1e15:
        return format_number(base / unit.scale), [w for w, s in SCALES.items() if s == unit.scale][0]
    if unit.kind == "money" and unit.scale == 1 and not float(base).is_integer() and abs(base - round(base, 2)) < 1e-9:
        return f"{base:,.2f}", ""  # cents are written in full: "€4.50", never "€4.5"
    return format_number(round(base, 9) if unit.scale != 1 else base), ""


def format_value(value: object, unit: Unit | None = None, style: Style = Style()) -> str:
    """A cell as a site writes it (:func:`_format_value`, remembered per ``(type, value, unit, style)``:
    a world's pages write the same cells again and again).

    Args:
        value: the cell (date, int, float, bool or text).
        unit: the column's unit (``None``: a bare number).
        style: the site's style.

    Returns:
        ``Mar 05, 2029``, ``$1,099``, ``1,099 USD``, ``2.65 million units``, ``12.34%``, ``28.5 GWh`` ...
        Text is returned as it is; ``None`` as ``n/a``.
    """
    try:
        return _format_cached(type(value), value, unit, style)
    except TypeError:  # an unhashable value: written without the memo
        return _format_value(value, unit, style)


@lru_cache(maxsize=65536)
def _format_cached(kind: type, value: object, unit: Unit | None, style: Style) -> str:
    """:func:`_format_value`, memoised; ``kind`` keeps equal values of other types apart (``True``/``1``/``1.0``)."""
    return _format_value(value, unit, style)


def _format_value(value: object, unit: Unit | None, style: Style) -> str:
    """:func:`format_value`'s writing of a cell."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, datetime):
        value = value.date()
    if isinstance(value, date):
        return format_date(value, style.date_format)
    if not isinstance(value, (int, float)):
        return str(value)
    if unit is not None and unit.kind == "year" and float(value).is_integer():
        return str(int(value))
    if unit is None or unit.kind == "share":
        return format_number(value)
    if unit.kind == "percent":
        return f"{format_number(value)}%"
    base = value * unit.scale
    number, word = _amount(base, unit, style)
    amount = f"{number} {word}".strip()
    if unit.kind == "money":
        if style.money == "code" or unit.symbol is None:
            return f"{amount} {unit.base}"
        prefix = "US$" if style.money == "prefixed" and unit.base == "USD" else unit.symbol
        return f"{prefix}{amount}"
    tail = unit.words(base if not word else 2) if unit.base else ""  # the amount written: "1,000 visitors" for 1 thousand
    return f"{amount} {tail}".strip()


_NUM = re.compile(r"(?P<sign>[-−])?(?P<cur>US\$|[A-Z]{0,2}[$€£¥₹₩])?\s?(?P<num>\d[\d,]*(?:\.\d+)?|\.\d+)\s*(?P<word>trillion|billion|million|thousand|bn|mn|tn|k)?\b(?P<pct>\s?%)?", re.I)


def parse_number(text: str) -> tuple[float, float] | None:
    """The first amount in ``text`` as ``(value, precision)`` in base units, scale words applied.

    ``precision`` is half the step of the last digit shown (``2.65 million`` -> 5,000), the most a
    faithful rounding can differ from the true value. ``None`` when the text holds no number.
    """
    m = _NUM.search(text.replace("\u202f", " ").replace("\xa0", " "))
    if not m:
        return None
    digits = m.group("num").replace(",", "")
    value = float(digits)
    decimals = len(digits.split(".")[1]) if "." in digits else 0
    word = (m.group("word") or "").lower()
    scale = SCALES.get(word) or _SCALE_ABBR.get(word, 1.0)
    if m.group("sign"):
        value = -value
    return value * scale, 0.5 * 10 ** -decimals * scale


@lru_cache(maxsize=65536)
def parse_date(text: str) -> date | None:
    """A date written in any of :data:`DATE_FORMATS` (also ``Mar. 5 2029`` and ``March 05, 2029``), or ``None``."""
    t = re.sub(r"\s+", " ", text.strip().replace(".", "").replace(",", ", ")).replace(" ,", ",").replace(",  ", ", ")
    for fmt in ("%b %d, %Y", "%B %d, %Y", "%d %B %Y", "%d %b %Y", "%Y-%m-%d", "%b %d %Y", "%B %d %Y"):
        try:
            return datetime.strptime(t, fmt).date()
        except ValueError:
            continue
    return None


def parse_value(text: str, unit: Unit | None, kind: str = "number") -> tuple[float, float] | date | str | None:
    """A stated value read back into the column's own unit.

    Args:
        text: the stated text (``$1.41 billion``, ``Mar 5, 2029``, ``Nova 3 Pro``).
        unit: the column's unit.
        kind: ``date``, ``number`` (also ``rank``, ``share``), anything else is text.

    Returns:
        For numbers ``(value, precision)`` in column units; a ``date``; the stripped text; ``None``
        when a number or date cannot be read.
    """
    if kind == "date":
        return parse_date(text)
    if kind not in ("number", "rank", "share"):
        return text.strip()
    got = parse_number(text)
    if got is None:
        return None
    value, precision = got
    scale = unit.scale if unit is not None and unit.kind not in ("percent", "share") else 1.0
    return value / scale, precision / scale


def denotes(text: str, value: object, unit: Unit | None, kind: str = "number") -> bool:
    """Whether ``text`` is a faithful writing of the cell ``value``: the same date, the same text (a capital first
    letter allowed), or a number that differs from the cell by no more than the rounding its own digits show."""
    if value is None:
        return False
    if isinstance(value, bool):
        return text.strip().lower() == ("yes" if value else "no")
    if isinstance(value, datetime):
        value = value.date()
    if isinstance(value, date):
        return parse_date(text) == value
    if isinstance(value, (int, float)):
        got = parse_value(text, unit, "number")
        if got is None:
            return False
        stated, precision = got
        return abs(stated - value) <= precision + 1e-9 * max(1.0, abs(value))
    got, want = text.strip(), str(value).strip()
    # the same text, or with a capital that starts a name or a sentence ("Yellow 7b on FJH-W02" of the value "yellow")
    return got == want or (bool(want) and want[:1].islower() and got == want[:1].upper() + want[1:])


def render_value(value: Any) -> str:
    """The canonical text of a cell (task gold tables, SQL inspection): dates as ``Mon DD, YYYY``,
    whole floats without ``.0``, booleans as yes/no; pages use :func:`format_value`."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, date):
        return value.strftime("%b %d, %Y")
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    return str(value)
