"""The ``llm_judge`` metric of WideSearch tasks, answered by a world-model backend.

WideSearch scores columns whose values cannot be compared by rule (a description, a reason, a
list of names) with ``llm_judge``: a language model reads the answer cell, the gold cell and the
column's ``criterion`` and says whether they agree. :class:`LLMJudge` does that through any
:class:`~worldforge.llm.WorldModelBackend` (an OpenAI-compatible server in practice): the pairs of
one column are sent in batches of ``batch_size``, each batch one request asking for a JSON object
``{"scores": [0 or 1, ...]}`` (schema-constrained when the backend supports structured output),
and every reply is cached in a SQLite file, so scoring the same answers again costs nothing.

A batch whose reply cannot be read (or whose request failed) is retried once as single-pair
requests; a pair still without a verdict gets ``None``, which :func:`~worldforge.tasks.scorer.score_table`
scores by normalised exact match (0 under the ``widesearch`` rules) and reports in the score's notes.

Under the ``widesearch`` rules the judge also aligns vocabularies (:meth:`LLMJudge.align`): the answer's
column names onto the required ones, its key cells onto the gold keys, as WideSearch's
``primary_key_preprocess`` does; one request per call, cached the same way. The prompts are worldforge's own.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from worldforge.errors import WorldforgeError
from worldforge.llm import CachedBackend, GenerationParams, WorldModelBackend, WorldModelRequest

JUDGE_SYSTEM = (
    "You grade one column of a table that an AI agent filled in from web search. For each numbered pair you get "
    "the agent's cell and the reference cell, and the column's grading criterion. A pair is correct (1) when the "
    "agent's cell states the same fact as the reference under the criterion: wording, order, abbreviations, "
    "formatting and harmless extra detail do not matter; a different fact, a missing part the criterion asks for, "
    "or an empty cell is wrong (0). Reply with only a JSON object {\"scores\": [...]} holding one 0 or 1 per pair, in order."
)


ALIGN_SYSTEM = (
    "You align two vocabularies. For each value of the first list, find the value of the reference list that names the same "
    "entity, differing only in wording, case, abbreviation, markup or format (identical strings always correspond). Reply with "
    "only a JSON object mapping each value that has a counterpart to that reference value, exactly as both are written; leave "
    "out values without one."
)
_ALIGN_SCHEMA = {"type": "object", "additionalProperties": {"type": "string"}}


def parse_alignment(text: str) -> dict[str, str]:
    """The ``{value: reference value}`` object of an alignment reply (the last readable JSON object in it;
    values that are not text are dropped), ``{}`` when there is none: WideSearch's map then stays empty."""
    found: dict = {}
    decoder, pos = json.JSONDecoder(), text.find("{")
    while pos != -1:
        try:
            obj, length = decoder.raw_decode(text[pos:])
        except json.JSONDecodeError:
            pos = text.find("{", pos + 1)
            continue
        found = obj if isinstance(obj, dict) else found
        pos = text.find("{", pos + length)
    return {str(k): v for k, v in found.items() if isinstance(v, str)}


def _schema(n: int) -> dict:
    return {"type": "object", "additionalProperties": False, "required": ["scores"],
            "properties": {"scores": {"type": "array", "minItems": n, "maxItems": n, "items": {"type": "integer", "enum": [0, 1]}}}}


def parse_scores(text: str, n: int) -> list[float] | None:
    """The ``n`` 0/1 verdicts of a judge reply (the last JSON object in it), or ``None`` when unreadable."""
    for m in reversed(list(re.finditer(r"\{.*?\}", text, re.S))):
        try:
            obj = json.loads(m.group())
        except json.JSONDecodeError:
            continue
        scores = obj.get("scores") if isinstance(obj, dict) else None
        if isinstance(scores, list) and len(scores) == n and all(isinstance(v, (int, float)) and not isinstance(v, bool) and v in (0, 1) for v in scores):
            return [float(v) for v in scores]
    return None


class LLMJudge:
    """A :data:`~worldforge.tasks.scorer.Judge` backed by a world-model backend, batched and cached.

    Args:
        backend: the judge model (loaded on first use; :meth:`close` unloads it).
        cache_path: the reply cache (SQLite; ``worldforge tasks score`` uses ``<warehouse>/cache/llm-judge.sqlite``).
        batch_size: pairs per request.
        max_tokens: tokens per reply at most.

    Attributes:
        calls: requests that reached the backend (cache misses); unjudged: pairs left without a verdict.
    """

    def __init__(self, backend: WorldModelBackend, cache_path: str | Path, batch_size: int = 20, max_tokens: int = 512):
        if batch_size < 1:
            raise WorldforgeError(f"batch_size must be at least 1, got {batch_size}")
        self.backend = backend if isinstance(backend, CachedBackend) else CachedBackend(backend=backend, cache_path=str(cache_path))
        self.batch_size, self.max_tokens = batch_size, max_tokens
        self.calls = 0
        self.unjudged = 0

    @property
    def identity(self) -> str:
        """The judge model's identity (``kind:model``)."""
        return self.backend.identity

    def _request(self, responses: list[str], targets: list[str], criterion: str) -> WorldModelRequest:
        pairs = "\n".join(f"{i}. agent: {json.dumps(r, ensure_ascii=False)} | reference: {json.dumps(t, ensure_ascii=False)}"
                          for i, (r, t) in enumerate(zip(responses, targets), 1))
        user = f"Criterion: {criterion or 'the two cells state the same fact'}\n\nPairs ({len(responses)}):\n{pairs}"
        rid = hashlib.sha256(user.encode()).hexdigest()[:16]
        return WorldModelRequest(id=rid, messages=({"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": user}))

    def _ask(self, batches: list[tuple[list[str], list[str]]], criterion: str) -> list[list[float] | None]:
        """The verdicts of each batch (``None`` for a batch whose reply is missing or unreadable)."""
        reqs = [self._request(rs, ts, criterion) for rs, ts in batches]
        replies: dict[str, str] = {}
        for size in sorted({len(rs) for rs, _ in batches}):  # one call per batch size: the schema fixes the count
            group = list({r.id: r for r, (rs, _) in zip(reqs, batches) if len(rs) == size}.values())
            schema = _schema(size) if self.backend.backend.supports_json_schema else None
            params = GenerationParams(temperature=0.0, max_tokens=self.max_tokens, seed=0, json_schema=schema)
            result = self.backend.generate(group, 1, params)
            self.calls += sum(1 for cs in result.completions.values() if cs and not cs[0].cached) + len(result.failures)
            replies |= {rid: cs[0].text for rid, cs in result.completions.items() if cs}
        return [parse_scores(replies[r.id], len(rs)) if r.id in replies else None for r, (rs, _) in zip(reqs, batches)]

    def __call__(self, responses: list[str], targets: list[str], criterion: str) -> list[float | None]:
        """One verdict (1.0, 0.0, or ``None`` when the judge gave none) per ``(response, target)`` pair."""
        if not responses:
            return []
        chunks = [(responses[i:i + self.batch_size], targets[i:i + self.batch_size]) for i in range(0, len(responses), self.batch_size)]
        verdicts: list[float | None] = []
        for (rs, ts), scores in zip(chunks, self._ask(chunks, criterion)):
            if scores is None and len(rs) > 1:  # retry the batch pair by pair
                singles = self._ask([([r], [t]) for r, t in zip(rs, ts)], criterion)
                scores = [s[0] if s else None for s in singles]
            verdicts += scores if scores is not None else [None] * len(rs)
        self.unjudged += sum(v is None for v in verdicts)
        return verdicts

    def align(self, values: list[str], reference: list[str]) -> dict[str, str]:
        """Map ``values`` onto ``reference`` (WideSearch's ``primary_key_preprocess``): ``{value: reference value}``
        for each value the model finds a counterpart for; ``{}`` when the reply is missing or unreadable.

        One request (distinct values, in order; up to ``max_tokens`` or 48 tokens a value, whichever is more),
        answered from the cache when asked before."""
        values, reference = list(dict.fromkeys(values)), list(dict.fromkeys(reference))
        if not values or not reference:
            return {}
        user = (f"Values to align ({len(values)}):\n{json.dumps(values, ensure_ascii=False)}\n\n"
                f"Reference values ({len(reference)}):\n{json.dumps(reference, ensure_ascii=False)}")
        req = WorldModelRequest(id=hashlib.sha256(user.encode()).hexdigest()[:16],
                                messages=({"role": "system", "content": ALIGN_SYSTEM}, {"role": "user", "content": user}))
        schema = _ALIGN_SCHEMA if self.backend.backend.supports_json_schema else None
        params = GenerationParams(temperature=0.0, max_tokens=max(self.max_tokens, 48 * len(values)), seed=0, json_schema=schema)
        result = self.backend.generate([req], 1, params)
        self.calls += sum(1 for cs in result.completions.values() if cs and not cs[0].cached) + len(result.failures)
        replies = result.completions.get(req.id)
        return parse_alignment(replies[0].text) if replies else {}

    def close(self) -> None:
        """Unload the judge model and close the cache."""
        self.backend.unload()
