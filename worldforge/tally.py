"""One accounting rule for every step that reads records: records in = kept + dropped by named reason.

After datatrove's per-step stats (``src/datatrove/utils/stats.py``: each pipeline step counts
what it received, forwarded and dropped, with a counter per drop reason). Ingestion (files →
trajectories), the corpus fact check (facts → consistent), task building (tasks → solvable),
the dataset builders (inputs → written) and evaluation (lines → predicted) each keep a
:class:`Tally`; the CLI prints it and the Dagster assets put it in their metadata and their
``records_balance`` checks, from the same :meth:`Tally.summary` and :meth:`Tally.to_dict`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass
class Tally:
    """Counts of one step: what came in, what was kept, and what was dropped, by reason.

    Attributes:
        unit: what is counted, plural (``records``, ``facts``, ``tasks``, ``lines``).
        kept_as: the word for kept units (``kept``, ``written``, ``predicted``, ``solvable``).
        dropped_as: the word for dropped units (``dropped``, ``quarantined``, ``skipped``, ``failed``).
        inputs: units that came in.
        kept: units that went on.
        dropped: ``{reason: count}`` of the units that did not.
    """

    unit: str = "records"
    kept_as: str = "kept"
    dropped_as: str = "dropped"
    inputs: int = 0
    kept: int = 0
    dropped: Counter = field(default_factory=Counter)

    def take(self, n: int = 1) -> None:
        """Count ``n`` units in."""
        self.inputs += n

    def keep(self, n: int = 1) -> None:
        """Count ``n`` units kept."""
        self.kept += n

    def drop(self, reason: str, n: int = 1) -> None:
        """Count ``n`` units dropped for ``reason`` (a short, stable phrase: it is a counter key)."""
        self.dropped[reason] += n

    @property
    def dropped_total(self) -> int:
        """Units dropped, over all reasons."""
        return sum(self.dropped.values())

    @property
    def balanced(self) -> bool:
        """Records in = kept + dropped: nothing was lost or counted twice."""
        return self.inputs == self.kept + self.dropped_total

    def reasons(self) -> list[tuple[str, int]]:
        """``(reason, count)`` pairs, most frequent first, then by reason."""
        return sorted(self.dropped.items(), key=lambda kv: (-kv[1], kv[0]))

    def summary(self) -> str:
        """One line, e.g. ``records in 1,417 = trajectories 1,410 + quarantined 7 (no trajectories: 4, broken JSON: 3)``."""
        reasons = ", ".join(f"{r}: {n:,}" for r, n in self.reasons())
        line = f"{self.unit} in {self.inputs:,} = {self.kept_as} {self.kept:,} + {self.dropped_as} {self.dropped_total:,}"
        return line + (f" ({reasons})" if reasons else "")

    def to_dict(self) -> dict:
        """``{"inputs", <kept_as>, <dropped_as>: {reason: n}, "balanced"}`` (reasons sorted by name)."""
        return {"inputs": self.inputs, self.kept_as: self.kept, self.dropped_as: dict(sorted(self.dropped.items())), "balanced": self.balanced}

    @classmethod
    def of(cls, inputs: int, kept: int, dropped: Mapping[str, int] | None = None, unit: str = "records", kept_as: str = "kept",
           dropped_as: str = "dropped") -> Tally:
        """A tally from counts already known."""
        return cls(unit, kept_as, dropped_as, inputs, kept, Counter(dict(dropped or {})))
