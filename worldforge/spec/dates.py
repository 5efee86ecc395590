"""Dates in specs: absolute (``2029-03-01``) or relative to the world's ``target_year``."""

from __future__ import annotations

import re
from datetime import date

from worldforge.spec.limits import MAX_YEAR_OFFSET

_RELATIVE_DATE = re.compile(r"^Y(?:([+-])(\d+))?-(\d{2})-(\d{2})$")


def resolve_date(text: str, target_year: int) -> date:
    """Resolve ``YYYY-MM-DD`` or ``Y[+N|-N]-MM-DD`` (relative to ``target_year``) to a date.

    ``Y-06-30`` is June 30 of the target year, ``Y-2-01-01`` January 1 two years before; ``N`` is at
    most :data:`~worldforge.spec.limits.MAX_YEAR_OFFSET`.

    Raises:
        ValueError: when the text is neither form or names an impossible date.
    """
    m = _RELATIVE_DATE.match(text)
    if m:
        sign, n, month, day = m.groups()
        if n is not None and (len(n) > 6 or int(n) > MAX_YEAR_OFFSET):
            raise ValueError(f"{text!r}: a relative date moves at most {MAX_YEAR_OFFSET} years")
        year = target_year + (int(n) if sign == "+" else -int(n) if sign == "-" else 0)
        return date(year, int(month), int(day))
    return date.fromisoformat(text)
