"""The observation formats of the next-state contract: how an action and an observation are written to a world model.

Qwen-AgentWorld's layout (arXiv 2606.24597), which AgentWorldBench records
(:mod:`worldforge.agentworldbench.records`), the SFT set (:mod:`worldforge.datasets.sft`) and the
search renderer (:mod:`worldforge.worldmodel.render`) all use:

* an action turn — ``### Turn N``, then :data:`ACTION_HEADER`, then the action as a json block
  ``{"name", "arguments"}`` when it is JSON, else as text (:func:`action_prompt`);
* an observation — :data:`OBSERVATION_HEADER`, a newline, then the text (:func:`observation_text`);
  a reply's observation is read back without it (:func:`strip_observation_header`).
"""

from __future__ import annotations

import json

OBSERVATION_HEADER = "**Environment Observation:**"
"""The header every real observation starts with (a ``response`` entry of a record)."""
ACTION_HEADER = "**Action:**"
"""The header of the action in an action turn, after ``### Turn N``."""


def action_prompt(turn: int, action: str) -> str:
    """``### Turn N`` / ``**Action:**`` and the action: a json block when it is JSON, else the text."""
    try:
        body = "```json\n" + json.dumps(json.loads(action), ensure_ascii=False) + "\n```"
    except (json.JSONDecodeError, TypeError):
        body = action
    return f"### Turn {turn}\n{ACTION_HEADER}\n{body}"


def observation_text(observation: str) -> str:
    """An observation as a ``response`` entry: the ``**Environment Observation:**`` header, a newline, then the text."""
    return f"{OBSERVATION_HEADER}\n{observation}"


def strip_observation_header(text: str) -> str:
    """The observation without its leading ``**Environment Observation:**`` header, surrounding whitespace stripped."""
    text = text.strip()
    return text[len(OBSERVATION_HEADER):].strip() if text.startswith(OBSERVATION_HEADER) else text
