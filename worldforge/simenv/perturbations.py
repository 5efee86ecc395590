"""Controllable perturbations of the simulated search environment (typed, seeded, logged).

The Qwen-AgentWorld paper perturbs its simulator on purpose so agents learn to cope with
an unreliable web. The schema here is the source of truth; each perturbation has a
``rate`` (probability per decision) or a ``schedule`` (a curriculum: rates that change with
the episode count, as ZeroSearch's noise threshold does):

================== ================================================================
kind               effect when it fires
================== ================================================================
transient_error    the call fails with a rate-limit, timeout or HTTP 5xx message
pagination         ``page_size`` results per page; ``page`` selects further pages
partial_batch      one query of a ``queries`` batch fails, the others answer
snippet_withhold   a snippet is cut before its key value ("…")
stale_ranking      the result order is shuffled
empty_results      a query returns no results
================== ================================================================

Every decision is drawn from a stream seeded by ``(seed, session, turn, kind, slot)``, so a
session replays identically from its seed, and every turn logs which decisions fired.
:func:`from_instruction` maps a natural-language instruction to this schema through a small
documented vocabulary (:data:`VOCABULARY`).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from worldforge.errors import WorldforgeError, validation_problems

Kind = Literal["transient_error", "pagination", "partial_batch", "snippet_withhold", "stale_ranking", "empty_results"]


class Step(BaseModel):
    """Rate in force until (excluding) episode ``until_episode``; the last step has none."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    until_episode: int | None = Field(None, ge=1)
    rate: float = Field(ge=0, le=1)


class Perturbation(BaseModel):
    """One perturbation kind and how often it fires: exactly one of ``rate`` or ``schedule``.

    Attributes:
        kind: what fires (see the module table).
        rate: the probability per decision, in [0, 1].
        schedule: a curriculum of :class:`Step` rates by episode count, ``until_episode`` increasing, the last
            step open-ended.
        page_size: ``pagination`` only: results per page (1 to 10).
        error_kinds: ``transient_error`` only: the failures drawn from.

    Example: ``{"kind": "transient_error", "rate": 0.1}``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Kind
    rate: float | None = Field(None, ge=0, le=1)
    schedule: list[Step] | None = None
    page_size: int = Field(3, ge=1, le=10, description="pagination: results per page")
    error_kinds: list[Literal["rate_limit", "timeout", "http_5xx"]] = Field(default_factory=lambda: ["rate_limit", "timeout", "http_5xx"])

    @model_validator(mode="after")
    def _rate_or_schedule(self) -> "Perturbation":
        if (self.rate is None) == (self.schedule is None):
            raise ValueError("give exactly one of 'rate' or 'schedule'")
        if self.schedule:
            bounds = [s.until_episode for s in self.schedule[:-1]]
            if any(b is None for b in bounds) or bounds != sorted(bounds) or self.schedule[-1].until_episode is not None:
                raise ValueError("schedule steps need increasing until_episode, the last one without")
        return self

    def rate_at(self, episode: int) -> float:
        """The rate in force for an episode (0-based count of episodes run before)."""
        if self.rate is not None:
            return self.rate
        for step in self.schedule or []:
            if step.until_episode is None or episode < step.until_episode:
                return step.rate
        return 0.0


class PerturbationConfig(BaseModel):
    """The perturbations of a session (empty: a perfectly reliable web)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    perturbations: list[Perturbation] = Field(default_factory=list)

    def get(self, kind: str) -> Perturbation | None:
        """The perturbation of ``kind`` (the first listed), or ``None`` when the session has none."""
        return next((p for p in self.perturbations if p.kind == kind), None)


DEFAULT_MIX = PerturbationConfig(perturbations=[
    Perturbation(kind="transient_error", rate=0.1),
    Perturbation(kind="partial_batch", rate=0.2),
    Perturbation(kind="snippet_withhold", rate=0.2),
    Perturbation(kind="stale_ranking", rate=0.1),
    Perturbation(kind="empty_results", rate=0.05),
])
"""The default mix: errors, partial batches, withheld snippets, shuffles and empty pages."""

MAX_INSTRUCTION_CHARS = 2_000
"""The longest instruction :func:`from_instruction` reads (longer ones are refused, not truncated)."""

_A_THEN_B = "  ...  "
"""In a :data:`VOCABULARY` key: the phrase on the left, then (later on the same line) the one on the right."""

VOCABULARY: dict[str, tuple[str, float]] = {
    r"\b(api|server|transient|intermittent)\b  ...  \berrors?\b": ("transient_error", 0.2),
    r"\berrors?\b  ...  \b(intermittent|transient|api)\b": ("transient_error", 0.2),
    r"\brate[- ]?limit": ("transient_error", 0.2),
    r"\btime ?outs?\b": ("transient_error", 0.2),
    r"\bpaginat|\bpages? of results\b|\bfewer results\b": ("pagination", 1.0),
    r"\bpartial\b|\bbatch(es)? (partly|partially) fail": ("partial_batch", 0.3),
    r"\b(withh[eo]ld|truncat|cut)\w*\b  ...  \bsnippets?\b": ("snippet_withhold", 0.3),
    r"\bsnippets?\b  ...  \b(withh[eo]ld|truncat|cut)": ("snippet_withhold", 0.3),
    r"\b(stale|shuffl|noisy ranking|random order)": ("stale_ranking", 0.3),
    r"\bempty results?\b|\bno results\b": ("empty_results", 0.1),
}
"""Instruction phrases → (perturbation kind, default rate).

A key is a regular expression without nested quantifiers or ``.*`` (one scan of the text), or
two of them joined by ``"  ...  "``: the first phrase, then the second later on the same line
(what ``A.*B`` says, matched in linear time: the first ``A``, then a ``B`` after it)."""

_COMPILED = [(tuple(re.compile(part) for part in key.split(_A_THEN_B)), kind, rate) for key, (kind, rate) in VOCABULARY.items()]
_PERCENT = re.compile(r"(\d{1,3})[ \t]{0,8}%")


def _matches(parts: tuple[re.Pattern[str], ...], lines: list[str]) -> bool:
    """Whether the phrases occur in order on one line (each a single left-to-right scan)."""
    for line in lines:
        pos = 0
        for part in parts:
            m = part.search(line, pos)
            if m is None:
                break
            pos = m.end()
        else:
            return True
    return False


def from_instruction(text: str) -> PerturbationConfig:
    """Map an instruction ("inject intermittent API errors and shuffle rankings") to a schema.

    A rate given as a percentage in the instruction ("30% of the time") applies to every
    perturbation it names. Matching takes time linear in the text, which is at most
    :data:`MAX_INSTRUCTION_CHARS` characters.

    Raises:
        WorldforgeError: the instruction is not a string, is too long, or no phrase of the vocabulary matches.
    """
    if not isinstance(text, str):
        raise WorldforgeError(f"an instruction is a string, not {type(text).__name__}")
    if len(text) > MAX_INSTRUCTION_CHARS:
        raise WorldforgeError(f"the instruction has {len(text)} characters; at most {MAX_INSTRUCTION_CHARS} are read")
    low = text.lower()
    pct = _PERCENT.search(low)
    lines = low.split("\n")  # ``.`` in ``A.*B`` stops at a newline, and only there
    kinds: dict[str, float] = {}
    for parts, kind, rate in _COMPILED:
        if kind not in kinds and _matches(parts, lines):
            kinds[kind] = min(1.0, int(pct.group(1)) / 100) if pct else rate
    if not kinds:
        shown = text if len(text) <= 200 else text[:200] + "…"
        raise WorldforgeError(f"no perturbation recognised in {shown!r}; vocabulary: {', '.join(sorted({k for k, _ in VOCABULARY.values()}))}")
    return PerturbationConfig(perturbations=[Perturbation(kind=k, rate=r) for k, r in kinds.items()])  # type: ignore[arg-type]


def decision_rng(seed: int, session: str, turn: int, kind: str, slot: int = 0) -> random.Random:
    """The random stream of one decision (replays identically from the seed)."""
    digest = hashlib.sha256(f"{seed}\x1f{session}\x1f{turn}\x1f{kind}\x1f{slot}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def parse_perturbations(spec: str | dict | PerturbationConfig | None) -> PerturbationConfig:
    """The perturbation schema an episode runs under.

    Args:
        spec: ``None``/``""``/``"none"`` (none); ``"default"`` (the default mix,
            :data:`~worldforge.simenv.perturbations.DEFAULT_MIX`); a schema as JSON text or a dict
            (``{"perturbations": [{"kind", "rate"}, ...]}``); or an instruction in words
            ("inject intermittent API errors", :func:`~worldforge.simenv.perturbations.from_instruction`).

    Raises:
        WorldforgeError: the schema is invalid or the instruction names no perturbation.
    """
    if isinstance(spec, PerturbationConfig):
        return spec
    if spec is None or (isinstance(spec, str) and spec.strip().lower() in ("", "none")):
        return PerturbationConfig()
    if isinstance(spec, str) and spec.strip().lower() == "default":
        return DEFAULT_MIX
    if isinstance(spec, str) and spec.lstrip().startswith(("{", "[")):
        try:
            spec = json.loads(spec)
        except json.JSONDecodeError as exc:
            raise WorldforgeError(f"perturbations: not valid JSON ({exc.msg} at column {exc.colno})") from None
        except RecursionError:
            raise WorldforgeError("perturbations: nested too deeply to read") from None
        except ValueError as exc:  # an integer of more than 4,300 digits
            raise WorldforgeError(f"perturbations: not usable JSON ({exc})") from None
    if isinstance(spec, (dict, list)):
        try:
            return PerturbationConfig.model_validate({"perturbations": spec} if isinstance(spec, list) else spec)
        except ValidationError as exc:
            problems = validation_problems(exc)
            raise WorldforgeError(f"invalid perturbations: {problems}") from None
        except RecursionError:
            raise WorldforgeError("invalid perturbations: nested too deeply") from None
    return from_instruction(spec)
