"""Dataset builds as reader → filters → writer steps (datatrove's pipeline shape).

A *reader* yields records (trajectories, pages); each *step* takes the stream and yields what
goes on: a :class:`Filter` keeps a record or drops it with a named reason counted in the
build's :class:`~worldforge.tally.Tally` (records in = kept + dropped by named reason), a
:func:`transform` maps each record, :func:`batched` groups records so that a step can make one
call for many (a tokenizer batch, a batch of model requests), and a *writer* is a sink of
:mod:`worldforge.datasets.output`. :func:`pipeline` chains them; nothing runs until the result
is consumed (:func:`drain`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import Any, TypeVar

from worldforge.tally import Tally

T = TypeVar("T")
U = TypeVar("U")

Step = Callable[[Iterable[Any]], Iterator[Any]]
"""One pipeline step: a stream of records in, a stream out (lazily)."""


class Filter:
    """A step that keeps a record or drops it with ``reason``, counted in ``tally``.

    Args:
        reason: the drop reason, a short stable phrase (a counter key of the tally and of ``report.json``).
        drop: ``True`` for a record to drop.
        tally: the build's tally; a dropped record counts ``weight(record)`` units under ``reason``.
        weight: the units a record stands for (default 1; SFT: a trajectory's target turns).
    """

    def __init__(self, reason: str, drop: Callable[[Any], bool], tally: Tally, weight: Callable[[Any], int] | None = None):
        self.reason, self.drop, self.tally, self.weight = reason, drop, tally, weight

    def __call__(self, records: Iterable[T]) -> Iterator[T]:
        """The records kept, in order; each dropped one is counted under :attr:`reason`."""
        for r in records:
            if self.drop(r):
                self.tally.drop(self.reason, self.weight(r) if self.weight else 1)
            else:
                yield r


def transform(fn: Callable[[T], U]) -> Step:
    """A step mapping each record with ``fn`` (one in, one out)."""
    def step(records: Iterable[T]) -> Iterator[U]:
        for r in records:
            yield fn(r)
    return step


def expand(fn: Callable[[T], Iterable[U]]) -> Step:
    """A step mapping each record to zero or more records (``fn`` counts what it drops)."""
    def step(records: Iterable[T]) -> Iterator[U]:
        for r in records:
            yield from fn(r)
    return step


def batched(size: int) -> Step:
    """A step grouping records into lists of ``size`` (the last may be shorter; none is empty)."""
    def step(records: Iterable[T]) -> Iterator[list[T]]:
        it = iter(records)
        while batch := list(islice(it, size)):
            yield batch
    return step


def pipeline(reader: Iterable[Any], *steps: Step) -> Iterator[Any]:
    """The reader's records through ``steps`` in order (lazy: nothing is read until iterated)."""
    stream: Iterable[Any] = reader
    for step in steps:
        stream = step(stream)
    return iter(stream)


def drain(stream: Iterable[Any], writer: Callable[[Any], None]) -> None:
    """Consume ``stream``, handing each item to ``writer`` (a sink's ``add`` or ``add_table``)."""
    for item in stream:
        writer(item)
