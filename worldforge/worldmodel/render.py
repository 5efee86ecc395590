"""Grounded LLM search: ``web_search``/``web_extractor`` observations rendered by a world model.

With a renderer attached, :class:`~worldforge.simenv.env.SearchEnv` still decides *what* a
call returns (the ranked URLs, the page asked for, every perturbation), and a world model
decides *how it reads*. The model is grounded by a **Simulation Instruction** built from the
rows that the call retrieves (the world rows stated by the result pages, or by the page
extracted), the result list itself, and, with a task attached, the target query and the
reference facts of its gold rows — so the model writes about entities that exist only in the
world (Qwen-AgentWorld's fictional-world search).

Every rendering goes through :class:`~worldforge.worldmodel.verify.FactVerifier`. A reply that does
not parse, or that contradicts a world fact, is rejected: with ``on_reject="regenerate"`` the
model is asked again (another seed) up to ``max_attempts`` times; with ``on_reject="grounded"``
(or when the attempts run out) the template rendering is served. Each decision is logged and
returned on the observation (``Observation.rendering``).

Renderings are cached by (world, scenario, corpus hash, normalised tool call, seed; for a
result list also its grounded text, which carries the session's numbering) in
``<warehouse>/cache/render-<world>.sqlite``, so a URL extracts to the same text for the rest of
the world's life (a rebuilt corpus has another hash).
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from worldforge.corpus.quantity import render_value
from worldforge.corpus.store import stored_hash
from worldforge.corpus.vocab import table_info
from worldforge.llm.base import GenerationParams, WorldModelBackend, WorldModelRequest
from worldforge.llm.cache import KVCache
from worldforge.worldmodel.formats import action_prompt, observation_text
from worldforge.worldmodel.parsing import PREDICTION_SCHEMA, ParseFailure, parse_prediction
from worldforge.worldmodel.prompts import system_prompt
from worldforge.worldmodel.verify import FactVerifier, verifier_for

if TYPE_CHECKING:
    from worldforge.simenv.env import Observation, SearchEnv

log = logging.getLogger(__name__)

MAX_ROWS = 12
"""Rows at most in one Simulation Instruction (the model's context is finite)."""


@dataclass
class Rendering:
    """How one observation was rendered.

    Attributes:
        decision: ``accepted`` (the model's page passed), ``cached``, ``fallback`` (the grounded
            template was served after rejections) or ``grounded`` (nothing to render).
        attempts: model calls made.
        rejections: the reasons of the rejected attempts (parse failures, contradictions).
        checked: world claims the verifier checked in the served text.
    """

    decision: str
    attempts: int = 0
    rejections: list[str] = field(default_factory=list)
    checked: int = 0

    def as_dict(self) -> dict:
        """The rendering as a JSON-ready dict (``decision, attempts, rejections, checked``), as observations and the render cache store it."""
        return {"decision": self.decision, "attempts": self.attempts, "rejections": self.rejections, "checked": self.checked}


def normalise_call(call: dict) -> str:
    """The cache form of a tool call: sorted JSON, queries lower-cased with single spaces."""
    args = dict(call.get("arguments") or {})
    if isinstance(args.get("query"), str):
        args["query"] = " ".join(args["query"].lower().split())
    if isinstance(args.get("queries"), list):
        args["queries"] = [" ".join(q.lower().split()) if isinstance(q, str) else q for q in args["queries"]]
    if isinstance(args.get("url"), str):
        args["url"] = args["url"].strip()
    return json.dumps({"name": call.get("name"), "arguments": args}, sort_keys=True, ensure_ascii=False)


class LLMSearchRenderer:
    """Renders search observations through a world model, verified against the world.

    Args:
        backend: any world-model backend (loaded on first use).
        on_reject: ``"regenerate"`` (ask again, then fall back) or ``"grounded"`` (fall back at once).
        max_attempts: model calls per observation at most.
        params: sampling settings; ``json_schema`` defaults to the prediction schema where
            the backend supports structured output.
        cache: use the render cache under the warehouse (turn off for experiments).
        history_turns: earlier turns of the session shown to the model.
    """

    def __init__(
        self,
        backend: WorldModelBackend,
        on_reject: Literal["regenerate", "grounded"] = "regenerate",
        max_attempts: int = 3,
        params: GenerationParams | None = None,
        cache: bool = True,
        history_turns: int = 4,
    ):
        if on_reject not in ("regenerate", "grounded"):
            raise ValueError(f"on_reject must be 'regenerate' or 'grounded', got {on_reject!r}")
        self.backend, self.on_reject, self.max_attempts, self.use_cache, self.history_turns = backend, on_reject, max(1, max_attempts), cache, history_turns
        base = params or GenerationParams(temperature=0.7, max_tokens=768)
        if base.json_schema is None and backend.supports_json_schema:
            base = base.model_copy(update={"json_schema": PREDICTION_SCHEMA})
        self.params = base
        self._caches: dict[str, KVCache] = {}
        self.decisions: dict[str, int] = {}

    # -- grounding ----------------------------------------------------------------------
    def simulation_instruction(self, env: SearchEnv, call: dict, grounded: Observation) -> str:
        """The grounding text for one call: retrieved rows, result list, task and reference facts."""
        path = env.warehouse.world(env.world)
        verifier = verifier_for(path, env.scenario)
        page_rows = env.corpus.page_rows
        urls = [line.split(" ", 1)[1] for line in grounded.text.splitlines() if line.startswith("[") and "] " in line]
        if call["name"] == "web_extractor":
            urls = [str(call["arguments"].get("url", "")).strip()]
        rows: list[tuple[str, str]] = []
        for url in urls:
            for tk in page_rows.get(url, []):
                if tk not in rows:
                    rows.append(tk)
        lines = ["## Simulation Instruction",
                 f"The web you simulate belongs to the fictional world '{verifier.spec.title or env.world}'"
                 + (f" (scenario {env.scenario})" if env.scenario else "") + ". Its entities exist only in this world; "
                 "state no fact about them other than those below, and never contradict them."]
        if call["name"] == "web_search":
            lines += ["", "The search engine returns these results, in this order (keep the URLs and titles):"]
            lines += [ln for ln in grounded.text.splitlines() if ln.startswith(("[", "Title: "))]
        else:
            lines += ["", f"The page at {urls[0]} exists; write it as Markdown with a '# title' heading."]
        lines += ["", "World rows retrieved for this call:"]
        lines += [self._row_line(verifier, t, k) for t, k in rows[:MAX_ROWS]]
        if env.task is not None:
            prov = env.task.extra.get("provenance", {})
            lines += ["", f"The agent's target query: {env.task.question}", "Reference facts (the answer the agent is after):"]
            ref = [(prov.get("table"), k) for k in prov.get("row_keys", [])]
            lines += [self._row_line(verifier, t, k) for t, k in ref[:MAX_ROWS] if t and (t, k) in verifier.rows]
        return "\n".join(lines)

    @staticmethod
    def _row_line(verifier: FactVerifier, table: str, key: str) -> str:
        row = verifier.rows.get((table, key))
        if row is None:
            return f"- {table_info(verifier.spec, table).noun} {key}: (missing)"
        spec_t = verifier.spec.tables[table]
        info = table_info(verifier.spec, table)
        lc = info.label_column
        cells = [f"{info.columns[c].label}: {render_value(row[c])}" + (f" {info.columns[c].unit.text}" if info.columns[c].unit else "")
                 for c in spec_t.columns if c not in (lc, spec_t.primary_key) and c not in spec_t.references and row.get(c) is not None]
        return f"- {render_value(row[lc])} ({info.noun}): " + "; ".join(cells)

    def messages(self, env: SearchEnv, call: dict, grounded: Observation) -> list[dict]:
        """The world-model messages: system prompt + Simulation Instruction, recent turns, the call."""
        messages = [{"role": "system", "content": system_prompt("search") + "\n\n" + self.simulation_instruction(env, call, grounded)}]
        start = max(0, len(env.history) - self.history_turns)
        for i, (c, obs) in enumerate(env.history[start:], start + 1):
            messages.append({"role": "user", "content": action_prompt(i, json.dumps(c, ensure_ascii=False))})
            messages.append({"role": "assistant", "content": observation_text(obs.text)})
        messages.append({"role": "user", "content": action_prompt(len(env.history) + 1, json.dumps(call, ensure_ascii=False))})
        return messages

    # -- rendering ----------------------------------------------------------------------
    def _cache(self, env: SearchEnv) -> KVCache:
        if env.world not in self._caches:
            self._caches[env.world] = KVCache(env.warehouse.cache / f"render-{env.world}.sqlite", "renderings")
        return self._caches[env.world]

    def render(self, env: SearchEnv, call: dict, grounded: Observation) -> Rendering:
        """Replace ``grounded.text`` with a verified model rendering (or keep it); return the decision."""
        path = env.warehouse.world(env.world)
        # keyed by the grounded text too: a result list carries the session's numbering and any perturbation, and a
        # page is served whole on read (its chrome rendered by code), so a changed page never reuses an old rendering
        extra = grounded.text
        key = hashlib.sha256(json.dumps([env.world, env.scenario, stored_hash(path, env.scenario), normalise_call(call), env.seed, self.backend.identity, extra]).encode()).hexdigest()
        if self.use_cache and (hit := self._cache(env).get(key)) is not None:
            grounded.text = hit["text"]  # type: ignore[index]
            return self._decided(Rendering("cached", checked=hit.get("checked", 0)))  # type: ignore[union-attr]
        verifier = verifier_for(path, env.scenario)
        messages = tuple(self.messages(env, call, grounded))
        rendering = Rendering("fallback")
        text = grounded.text
        attempts = 1 if self.on_reject == "grounded" else self.max_attempts
        for attempt in range(attempts):
            seed = (self.params.seed or 0) + env.seed + attempt
            req = WorldModelRequest(id=f"{env.session_id}:{env.turn}:{attempt}", messages=messages)
            result = self.backend.generate([req], 1, self.params.model_copy(update={"seed": seed}))
            rendering.attempts += 1
            if req.id in result.failures:
                rendering.rejections.append(f"generation failed: {result.failures[req.id].reason}")
                continue
            parsed = parse_prediction(result.completions[req.id][0].text)
            if isinstance(parsed, ParseFailure):
                rendering.rejections.append(f"unparsable: {parsed.reason}")
                continue
            if not parsed.observation:  # valid for a silent command, never for a search tool
                rendering.rejections.append("empty observation")
                continue
            verdict = verifier.verify(parsed.observation)
            if not verdict.ok:
                rendering.rejections.append(f"contradicted: {verdict.summary()}")
                continue
            rendering.decision, rendering.checked, text = "accepted", verdict.checked, parsed.observation
            break
        if rendering.decision == "fallback":
            rendering.checked = verifier.verify(text).checked
        for reason in rendering.rejections:
            log.info("rejected rendering of %s in %s: %s", call["name"], env.world, reason)
        log.info("rendering of %s in %s: %s after %d attempt(s)", call["name"], env.world, rendering.decision, rendering.attempts)
        grounded.text = text
        if self.use_cache:
            self._cache(env).put(key, {"text": text, **rendering.as_dict()})
        return self._decided(rendering)

    def _decided(self, rendering: Rendering) -> Rendering:
        self.decisions[rendering.decision] = self.decisions.get(rendering.decision, 0) + 1
        return rendering

    def close(self) -> None:
        """Close the render caches opened so far (the backend stays loaded)."""
        for c in self._caches.values():
            c.close()
        self._caches.clear()
