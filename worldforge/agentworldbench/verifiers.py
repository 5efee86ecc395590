"""Rule verifiers: score a predicted observation against the real one, with no judge model.

Used twice: to select world-model candidates by rejection sampling (SFT), and as the
judge-free metrics of ``worldforge eval judge``. Each verifier returns a score in [0, 1] and
whether it passed its bar, or ``None`` when it does not apply to the reference (JSON structure
on a plain-text observation, numbers and entities on a reference without any).

* ``format`` — the prediction has the reference's shape, per domain: search result lists keep
  the ``[n] <url>`` / ``Title:`` / ``Snippet:`` blocks, pages keep a ``#`` heading, errors stay
  errors; JSON replies (tool, MCP, API domains) stay JSON of the same top-level type; every
  domain: a non-empty prediction for a non-empty reference and the empty one for an empty
  reference (a command with no output), line count within a factor of 4.
* ``exact_match`` — equal after Unicode/whitespace/case normalisation (SQuAD-style).
* ``token_f1`` — F1 of normalised word tokens (SQuAD's token F1); passes at 0.5.
* ``json_structure`` — Jaccard similarity of the sets of ``(key path, value type)`` of both
  JSON documents; applies when the reference parses as a JSON object or array; passes at 0.8.
* ``numeric_entity`` — F1 of the numbers and capitalised entity names stated in each text (the
  facts a world model must not invent); applies when the reference states any; passes at 0.8.

The aggregate of a candidate is the mean of the applicable scores, and 0 when the format check
fails (a malformed observation is never a good target).
"""

from __future__ import annotations

import json
import re
import string
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

VERIFIERS = ("format", "exact_match", "token_f1", "json_structure", "numeric_entity")
PASS_AT = {"format": 1.0, "exact_match": 1.0, "token_f1": 0.5, "json_structure": 0.8, "numeric_entity": 0.8}
"""The score each verifier needs to pass."""

_WS = re.compile(r"\s+")
_PUNCT = str.maketrans("", "", string.punctuation)
_RESULT = re.compile(r"^\[\d+\]\s+\S+", re.M)
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?%?")
_ENTITY = re.compile(r"\b[A-Z][\w'-]*(?:\s+[A-Z0-9][\w'-]*)*")


def normalise(text: str) -> str:
    """NFKC, lower case, punctuation removed, whitespace collapsed (SQuAD's answer normalisation, minus articles)."""
    return _WS.sub(" ", unicodedata.normalize("NFKC", text).lower().translate(_PUNCT)).strip()


def _json(text: str):
    t = text.strip()
    if not t or t[0] not in "[{":
        return None
    try:
        return json.loads(t)
    except json.JSONDecodeError:
        return None


def _shape(text: str) -> str:
    t = text.strip()
    if not t:
        return "empty"
    if _json(t) is not None:
        return "json-" + type(_json(t)).__name__
    if t.lower().startswith(("error", "[error", "traceback")):
        return "error"
    if len(_RESULT.findall(t)) >= 1 and "Title:" in t:
        return "results"
    if t.startswith("# "):
        return "page"
    return "text"


def format_check(prediction: str, reference: str, domain: str = "") -> float:
    """1.0 when the prediction has the reference's shape (see the module doc), else 0.0."""
    ref_shape, pred_shape = _shape(reference), _shape(prediction)
    if ref_shape == "empty" or pred_shape == "empty":
        return float(ref_shape == pred_shape)
    structured = {"results", "page", "error"} | {s for s in (ref_shape,) if s.startswith("json-")}
    if ref_shape in structured and pred_shape != ref_shape:
        return 0.0
    if domain in ("tool", "mcp") and ref_shape.startswith("json-") and pred_shape != ref_shape:
        return 0.0
    a, b = reference.strip().count("\n") + 1, prediction.strip().count("\n") + 1
    return float(max(a, b) <= 4 * min(a, b) + 3)


def exact_match(prediction: str, reference: str) -> float:
    """1.0 when both texts are equal after :func:`normalise` (SQuAD-style exact match), else 0.0."""
    return float(normalise(prediction) == normalise(reference))


def token_f1(prediction: str, reference: str) -> float:
    """SQuAD token F1 over normalised words (1.0 when both are empty)."""
    p, r = normalise(prediction).split(), normalise(reference).split()
    if not p or not r:
        return float(p == r)
    common = sum((Counter(p) & Counter(r)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(p), common / len(r)
    return 2 * precision * recall / (precision + recall)


def _paths(obj, prefix: str = "$") -> set[tuple[str, str]]:
    out = {(prefix, type(obj).__name__)}
    if isinstance(obj, dict):
        for k, v in obj.items():
            out |= _paths(v, f"{prefix}.{k}")
    elif isinstance(obj, list):
        for v in obj[:50]:
            out |= _paths(v, f"{prefix}[]")
    return out


def json_structure(prediction: str, reference: str) -> float | None:
    """Jaccard of ``(path, type)`` sets; ``None`` when the reference is not JSON; 0.0 for a non-JSON prediction."""
    ref = _json(reference)
    if ref is None:
        return None
    pred = _json(prediction)
    if pred is None:
        return 0.0
    a, b = _paths(ref), _paths(pred)
    return len(a & b) / len(a | b)


def facts(text: str) -> Counter:
    """The numbers (commas dropped) and capitalised entity names a text states, with counts."""
    nums = [m.group().replace(",", "").lstrip("+") for m in _NUMBER.finditer(text)]
    ents = [m.group().strip() for m in _ENTITY.finditer(text) if len(m.group().strip()) > 1]
    return Counter(nums) + Counter(e.lower() for e in ents)


def numeric_entity(prediction: str, reference: str) -> float | None:
    """F1 of the stated numbers and entities; ``None`` when the reference states none."""
    r = facts(reference)
    if not r:
        return None
    p = facts(prediction)
    common = sum((p & r).values())
    if common == 0:
        return 0.0
    precision, recall = common / sum(p.values()), common / sum(r.values())
    return 2 * precision * recall / (precision + recall)


@dataclass(frozen=True)
class Scores:
    """Scores of one prediction: ``{verifier: score or None (not applicable)}`` and the aggregate."""

    scores: dict[str, float | None]

    @property
    def aggregate(self) -> float:
        """The mean of the applicable scores (``format`` included), in [0, 1]; 0.0 when the format check failed."""
        if not self.scores.get("format"):
            return 0.0
        vals = [v for v in self.scores.values() if v is not None]
        return sum(vals) / len(vals) if vals else 0.0

    def passed(self, name: str) -> bool | None:
        """Whether verifier ``name`` reached its bar in :data:`PASS_AT`; ``None`` when it does not apply."""
        v = self.scores.get(name)
        return None if v is None else v >= PASS_AT[name]


_CHECKS: dict[str, Callable[[str, str], float | None]] = {
    "exact_match": exact_match, "token_f1": token_f1, "json_structure": json_structure, "numeric_entity": numeric_entity,
}


def score(prediction: str, reference: str, domain: str = "") -> Scores:
    """Every verifier on one prediction.

    Args:
        prediction: the predicted observation (without tags or header).
        reference: the real observation.
        domain: selects the format rules (``tool``/``mcp`` keep JSON replies JSON).
    """
    out: dict[str, float | None] = {"format": format_check(prediction, reference, domain)}
    for name, fn in _CHECKS.items():
        out[name] = fn(prediction, reference)
    return Scores(out)
