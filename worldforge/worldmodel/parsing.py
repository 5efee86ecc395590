"""Parsing world-model replies: ``<think>`` reasoning and the ``<predicted_observation>``.

A world model answers an AgentWorldBench prompt with its reasoning in ``<think>…</think>`` and
then the next state in ``<predicted_observation>…</predicted_observation>`` (Qwen-AgentWorld's
reply layout), or, with structured output, the JSON object of :data:`PREDICTION_SCHEMA`.
:func:`parse_prediction` reads either and reports a reply it cannot use as a
:class:`ParseFailure` with a reason, never an exception; :func:`format_prediction` writes the
layout (the SFT target).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from worldforge.worldmodel.formats import strip_observation_header

PREDICTION_SCHEMA: dict = {
    "type": "object",
    "properties": {"think": {"type": "string"}, "predicted_observation": {"type": "string"}},
    "required": ["think", "predicted_observation"],
    "additionalProperties": False,
}
"""The JSON-schema form of a reply, for backends with structured output."""


@dataclass(frozen=True)
class Prediction:
    """A parsed reply: the reasoning (``None`` without a ``<think>`` block) and the observation."""

    think: str | None
    observation: str


@dataclass(frozen=True)
class ParseFailure:
    """A reply that holds no usable prediction, and why."""

    reason: str
    text: str


_THINK = re.compile(r"<think>(.*?)</think>", re.S)
_PRED = re.compile(r"<predicted_observation>(.*?)</predicted_observation>", re.S)


def parse_prediction(text: str) -> Prediction | ParseFailure:
    """Extract ``<think>`` and ``<predicted_observation>`` from a world-model reply.

    Also accepts the structured-output form ``{"think": ..., "predicted_observation": ...}``.
    The last ``<predicted_observation>`` block wins (models sometimes draft one in their
    reasoning). A leading ``**Environment Observation:**`` inside the block is dropped. An empty
    block is a valid prediction: the empty observation (a command that prints nothing, a tool
    with no output).

    Returns:
        A :class:`Prediction`, or a :class:`ParseFailure` whose reason is one of: ``empty
        reply``, ``missing <predicted_observation> tag``, ``unclosed <predicted_observation> tag
        (truncated reply?)``, ``unclosed <think> tag``.
    """
    stripped = text.strip()
    if not stripped:
        return ParseFailure("empty reply", text)
    if stripped.startswith("{"):
        try:
            obj = json.loads(stripped)
        except json.JSONDecodeError:
            obj = None
        if isinstance(obj, dict) and isinstance(obj.get("predicted_observation"), str):
            obs = strip_observation_header(obj["predicted_observation"])
            think = obj.get("think")
            return Prediction(think if isinstance(think, str) else None, obs)
    blocks = _PRED.findall(text)
    if not blocks:
        if "<predicted_observation>" in text:
            return ParseFailure("unclosed <predicted_observation> tag (truncated reply?)", text)
        return ParseFailure("missing <predicted_observation> tag", text)
    head = text[: text.rfind("<predicted_observation>")]
    if head.count("<think>") > head.count("</think>"):
        return ParseFailure("unclosed <think> tag", text)
    think_blocks = _THINK.findall(head)
    obs = strip_observation_header(blocks[-1])
    return Prediction(think_blocks[-1].strip() if think_blocks else None, obs)


def format_prediction(observation: str, think: str | None = None) -> str:
    """The reply text for a prediction (the SFT target layout)."""
    head = f"<think>\n{think.strip()}\n</think>\n" if think is not None else ""
    return f"{head}<predicted_observation>\n{observation}\n</predicted_observation>"
