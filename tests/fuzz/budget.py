"""The fuzz budget: a fixed seed and a bounded number of examples per property.

``WORLDFORGE_FUZZ_EXAMPLES`` (default 100) is the number of examples of a property of weight
1; a property declares its weight (an expensive one, such as building a world, runs fewer).
``WORLDFORGE_FUZZ_SEED`` (default 19) seeds every property, so a run is reproducible: the same
seed, budget and code test the same inputs. ``bench/fuzz.py`` sets both before it imports the
tests. Hypothesis keeps no example database here (``database=None``), so nothing is written
beside the checkout and a run depends on nothing but the seed.
"""

from __future__ import annotations

import os
import resource
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from hypothesis import HealthCheck, Phase, seed, settings

EXAMPLES = int(os.environ.get("WORLDFORGE_FUZZ_EXAMPLES", "100"))
"""Examples of a property of weight 1."""

SEED = int(os.environ.get("WORLDFORGE_FUZZ_SEED", "19"))
"""The seed of every property."""

MAX_RSS_BYTES = 6 << 30
"""Peak resident memory of the test process an example may leave behind (a runaway input would pass it)."""

COUNTS: Counter[str] = Counter()
"""Examples run so far, by target (``spec``, ``expr``, ``trajectories``, ``http``); read by bench/fuzz.py."""

_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
           HealthCheck.large_base_example, HealthCheck.function_scoped_fixture]


def fuzz(weight: float = 1.0) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a ``@given`` property with the seed and ``weight × EXAMPLES`` examples (at least 5).

    No deadline per example (a slow machine must not fail the suite): each property bounds its
    own time with :func:`bounded`.
    """
    def wrap(test: Callable[..., Any]) -> Callable[..., Any]:
        limited = settings(max_examples=max(5, round(EXAMPLES * weight)), deadline=None, database=None,
                           suppress_health_check=_HEALTH, print_blob=True,
                           phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink])(test)
        return seed(SEED)(limited)
    return wrap


@contextmanager
def bounded(target: str, seconds: float) -> Iterator[None]:
    """Count one example of ``target`` and fail it if it takes over ``seconds`` or the process passes :data:`MAX_RSS_BYTES`."""
    COUNTS[target] += 1
    start = time.perf_counter()
    yield
    took = time.perf_counter() - start
    assert took < seconds, f"{target}: one input took {took:.1f} s (bound {seconds} s)"
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    assert rss < MAX_RSS_BYTES, f"{target}: peak memory {rss >> 20} MiB (bound {MAX_RSS_BYTES >> 20} MiB)"
