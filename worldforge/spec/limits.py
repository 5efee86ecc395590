"""Bounds on every size and magnitude a world spec can ask for.

A spec is user input: a hostile or mistaken one must fail with one clear
:class:`~worldforge.errors.SpecError` (or :class:`~worldforge.errors.GenerationError`) before
anything is generated, never with a traceback, a hang or gigabytes of memory. Every bound lives
here, so the whole attack surface is one page. The row count of a world is bounded separately by
:data:`worldforge.spec.models.ROW_BUDGET` (300–500 rows), which also caps ``rows`` and
``cardinality``.
"""

from __future__ import annotations

MAX_SPEC_BYTES = 1_000_000
"""Largest spec file read (bytes)."""

MAX_YAML_DEPTH = 32
"""Deepest nesting of mappings and lists in a spec document (a real spec nests about 7 deep)."""

MAX_YAML_NODES = 200_000
"""Most values in a spec document once YAML aliases are expanded (guards against alias bombs)."""

MAX_TABLES = 100
"""Most tables in one world."""

MAX_COLUMNS = 200
"""Most columns (and most constraints) in one table."""

MAX_EXPR_CHARS = 2_000
"""Longest expression (derive ``expr``, check ``expr``)."""

MAX_EXPR_DEPTH = 64
"""Deepest nesting of an expression: parentheses, calls, operators (``1+1+...`` chains count too)."""

MAX_ABS_NUMBER = 10**15
"""Largest magnitude of any number a spec writes: literals, ``min``/``max``, ``start``/``step``,
weights, Faker arguments. Keeps sums of 500 rows well inside 64-bit integers."""

MAX_ABS_INT64 = 2**63 - 1
"""Largest magnitude of a generated integer and of a seed (DuckDB ``BIGINT``)."""

MAX_STRING_CHARS = 10_000
"""Longest string a spec writes (choice values, templates, Faker text arguments) or a column generates."""

MAX_CHOICE_VALUES = 10_000
"""Most entries in a ``choice`` list (and in any list given to Faker)."""

MAX_FORMAT_WIDTH = 100
"""Largest width or precision in a ``format`` template field (``{n:05d}``)."""

MAX_FAKER_SIZE = 1_000
"""Largest size-like Faker argument (``length``, ``nb_words``, ``max_chars``, ``digits`` ...)."""

FAKER_SIZE_ARG = r"(length|^nb|_nb|nb_|chars|digits|size|count|elements|words|sentences|paragraphs|texts|precision)"
"""Faker argument names that ask for a size, bounded by :data:`MAX_FAKER_SIZE` (regex, searched)."""

MAX_LOGNORMAL_STD = 10.0
"""Largest ``std`` of a lognormal ``number`` (the spread of the log; larger overflows floats)."""

MAX_YEAR_OFFSET = 1_000
"""Largest ``N`` in a relative date ``Y+N-MM-DD`` / ``Y-N-MM-DD``."""

MAX_SHIFT_YEARS = 1_000
"""Largest ``shift_years`` of a scenario, either way."""

MAX_RESAMPLE_TRIES = 50
"""Most redraws of the rows that break a ``check`` with ``enforce: resample`` before generation fails
with a :class:`~worldforge.errors.GenerationError` naming the table, the check and the rows left."""
