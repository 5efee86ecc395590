"""The ``grounded`` world-model backend: no model; observations replayed from the world's corpus.

The default backend locally (``WORLDFORGE_ENV=local``), so every pipeline runs without a GPU.
It implements the :class:`~worldforge.llm.WorldModelBackend` protocol and is registered under
``grounded`` in :data:`worldforge.worldmodel.backends.BACKENDS`; it sits in the world model's package, above
the environment it replays (a :class:`~worldforge.simenv.env.SearchEnv`). A request must carry a
``grounding`` with the world and the tool call (``{"world", "scenario"?, "warehouse"?,
"history"?: [tool calls], "tool_call", "session_id"?}``): the calls in ``history`` are
replayed in a fresh :class:`~worldforge.simenv.env.SearchEnv` (so result numbering and
extracted pages match the session), then the tool call is answered from the corpus. The
reply has the world-model layout (``<think>`` + ``<predicted_observation>``); all ``n``
completions are the same text, since the rendering is deterministic.

A request without such a grounding (an AgentWorldBench record of another domain) is
recorded as a failure with that reason, never guessed.
"""

from __future__ import annotations

from worldforge.errors import WorldforgeError
from worldforge.llm.base import Completion, Failure, GenerationParams, GenerationResult, OnResult, WorldModelBackend, WorldModelRequest, record
from worldforge.simenv.env import SearchEnv
from worldforge.warehouse.layout import Warehouse
from worldforge.worldmodel.parsing import format_prediction


class GroundedBackend(WorldModelBackend):
    """Renders search observations from the world's corpus (no model).

    Attributes:
        warehouse: the warehouse folder, unless a request's grounding names one (required: the
            library does not read it from settings; :func:`worldforge.worldmodel.backends.world_model` callers pass it).
    """

    kind = "grounded"
    supports_json_schema = False

    model: str = "world-tables"
    warehouse: str

    def _generate(self, requests: list[WorldModelRequest], n: int, params: GenerationParams, on_result: OnResult | None) -> GenerationResult:
        result = GenerationResult()
        for req in requests:
            g = req.grounding or {}
            if not g.get("world") or "tool_call" not in g:
                record(result, req, Failure(request_id=req.id, reason="not grounded: the grounded backend renders only requests with grounding.world and grounding.tool_call"), on_result)
                continue
            try:
                env = SearchEnv(g["world"], scenario=g.get("scenario"), warehouse=Warehouse(g.get("warehouse") or self.warehouse),
                                session_id=g.get("session_id", "grounded"), seed=params.seed or 0)
                for call in g.get("history") or []:
                    env.step(call)
                obs = env.step(g["tool_call"])
            except WorldforgeError as exc:
                record(result, req, Failure(request_id=req.id, reason=f"grounding failed: {exc}"), on_result)
                continue
            where = g["world"] + (f" / {g['scenario']}" if g.get("scenario") else "")
            think = f"Rendered from the tables of {where}: {obs.tool}, {len(obs.revealed)} fact(s) in snippets" + (", an error observation." if obs.error else ".")
            text = format_prediction(obs.text, think)
            record(result, req, [Completion(request_id=req.id, index=i, text=text, finish_reason="stop") for i in range(n)], on_result)
        return result
