"""WideSearch preprocessors and cell metrics.

Definitions follow the WideSearch evaluation (ByteDance, MIT; ``eval/evaluation/metric_utils``):

* preprocess ``norm_str``: lower-case, strip, drop spaces and ``*``;
  ``extract_number``: the first number (``,`` removed; ``%`` kept), ``"NULL"`` if none;
  ``norm_date``: ``dateparser`` with day-of-month ``first``, as ``YYYY-MM-DD`` (the text
  itself when unparseable).
* metric ``exact_match`` (case-insensitive equality), ``in_match`` (response is a substring of
  the target), ``url_match`` (same set of URL hosts), ``number_near`` (relative tolerance
  ``criterion``; a percentage is divided by 100; our default tolerance is 0 when the task
  gives none), ``date_near`` (within 31 days; both unparseable counts as a match).

``llm_judge`` is not here: it needs a judge, see :mod:`worldforge.tasks.scorer`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from urllib.parse import urlparse

_NUMBER = re.compile(r"[-+]?\d*\.\d+%?|[-+]?\d+\.?\d*%?")
_URL = re.compile(r"http[s]?://(?:[a-zA-Z]|[0-9]|[$-_@.&+]|[!*\\(\\),]|(?:%[0-9a-fA-F][0-9a-fA-F]))+")


_FULL_DATES = ("%Y-%m-%d", "%b %d, %Y", "%B %d, %Y", "%d %B %Y", "%d %b %Y")
"""Formats that name year, month and day, in English: ``datetime.strptime`` reads them as ``dateparser`` does
(midnight, no time zone) in microseconds instead of milliseconds (the oracle's scoring parses hundreds a world)."""


@lru_cache(maxsize=65536)
def parse_date(text: str) -> datetime | None:
    """``dateparser.parse`` with WideSearch's settings (``None`` when unparseable); a full date in one of
    :data:`_FULL_DATES` takes a fast path with the same result."""
    import dateparser

    stripped = text.strip()
    if 8 <= len(stripped) <= 20 and stripped[:1].isalnum():
        for fmt in _FULL_DATES:
            try:
                return datetime.strptime(stripped, fmt)
            except ValueError:
                continue
    try:
        return dateparser.parse(text, settings={"PREFER_DAY_OF_MONTH": "first"})
    except Exception:  # dateparser raises assorted errors on odd input
        return None


def norm_str(content: str) -> str:
    """WideSearch ``norm_str``: lower case, stripped, spaces and ``*`` removed."""
    return str(content).lower().strip().replace(" ", "").replace("*", "")


def extract_number(content: str) -> str:
    """WideSearch ``extract_number``: the first number in the text (``,`` removed, a trailing ``%`` kept), or ``"NULL"``."""
    found = _NUMBER.findall(str(content).replace(",", ""))
    return found[0] if found else "NULL"


def norm_date(content: str) -> str:
    """WideSearch ``norm_date``: the date as ``YYYY-MM-DD`` (:func:`parse_date`), or the text itself when unparseable."""
    parsed = parse_date(str(content))
    return str(content) if parsed is None else parsed.strftime("%Y-%m-%d")


PREPROCESS: dict[str, Callable[[str], str]] = {"norm_str": norm_str, "extract_number": extract_number, "norm_date": norm_date}


def exact_match(response: str, target: str, criterion=None) -> float:
    """WideSearch ``exact_match``: 1.0 when equal ignoring case, else 0.0 (``criterion`` is unused)."""
    return 1.0 if response.lower() == target.lower() else 0.0


def in_match(response: str, target: str, criterion=None) -> float:
    """WideSearch ``in_match``: 1.0 when ``response`` is a substring of ``target`` (case-sensitive), else 0.0."""
    return 1.0 if response in target else 0.0


def _hosts(text: str) -> tuple[list[str], list[str]]:
    raw = _URL.findall(text)
    hosts = []
    for url in raw:
        try:
            host = urlparse(url).netloc
        except ValueError:
            host = url.split("://", 1)[-1].split("/", 1)[0]
        if host:
            hosts.append(host)
    return raw, hosts


def url_match(response: str, target: str, criterion=None) -> float:
    """WideSearch ``url_match``: 1.0 when both texts name the same set of URL hosts, or neither has a host and
    their raw URL matches agree (so two texts without any URL match), else 0.0."""
    r_raw, r_hosts = _hosts(response)
    t_raw, t_hosts = _hosts(target)
    if r_hosts and t_hosts and set(r_hosts) == set(t_hosts):
        return 1.0
    if not r_hosts and not t_hosts and set(r_raw) == set(t_raw):
        return 1.0
    return 0.0


def _number(text: str) -> float | None:
    try:
        return float(text.replace("%", "")) / 100.0 if "%" in text else float(text)
    except ValueError:
        return None


def number_near(response: str, target: str, criterion=None) -> float:
    """WideSearch ``number_near``: 1.0 when ``response`` lies within relative tolerance ``criterion`` of ``target``.

    A percentage is divided by 100; the tolerance is 0 when ``criterion`` is missing or not a number; two
    values that are not numbers match only when their texts are equal.
    """
    try:
        tolerance = float(criterion)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        tolerance = 0.0
    r, t = _number(response), _number(target)
    if r is None or t is None:
        return 1.0 if r is None and t is None and response == target else 0.0
    return 1.0 if abs(r - t) <= abs(t) * tolerance else 0.0


def date_near(response: str, target: str, criterion=None) -> float:
    """WideSearch ``date_near``: 1.0 when both dates parse and lie within 31 days, or when neither parses; else 0.0."""
    r, t = parse_date(response), parse_date(target)
    if r is None or t is None:
        return 1.0 if r is None and t is None else 0.0
    return 1.0 if abs((r - t).days) <= 31 else 0.0


METRICS: dict[str, Callable[[str, str, object], float]] = {
    "exact_match": exact_match, "in_match": in_match, "url_match": url_match,
    "number_near": number_near, "date_near": date_near,
}


@dataclass
class Score:
    """Scores of one answer (all in [0, 1]) and what the scorer noticed (:func:`worldforge.tasks.scorer.score_table`, either rule set)."""

    precision_by_row: float = 0.0
    recall_by_row: float = 0.0
    f1_by_row: float = 0.0
    precision_by_item: float = 0.0
    recall_by_item: float = 0.0
    f1_by_item: float = 0.0
    notes: list[str] = field(default_factory=list)
    by_column: dict[str, float] = field(default_factory=dict)
    """Item-F1 of each required column on its own (normalised name → [0, 1]); key columns score
    their matched rows. Empty when the answer has no table or lacks a required column."""
    score: float | None = None
    """WideSearch's ``score``, its success rate (1.0 when the answer reproduces the gold table, else 0.0);
    only the ``widesearch`` rules set it (``None`` otherwise)."""

    def as_dict(self) -> dict:
        """The scores and notes as a JSON-ready dict keyed by field name (``score`` first, when set)."""
        keys = ("precision_by_row", "recall_by_row", "f1_by_row", "precision_by_item", "recall_by_item", "f1_by_item", "by_column", "notes")
        return ({"score": self.score} if self.score is not None else {}) | {k: getattr(self, k) for k in keys}
