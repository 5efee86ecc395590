"""AgentWorldBench records: the benchmark's JSONL format and how turns become records.

An AgentWorldBench record (Qwen-AgentWorld, arXiv 2606.24597; one JSONL file per domain,
``<domain>_test.jsonl``) holds a whole trajectory and points at one turn of it:

* ``prompt`` — per-turn action prompts, ``### Turn N`` / ``**Action:**`` and a json block
  ``{"name", "arguments"}``;
* ``response`` — the ground-truth observations, each starting ``**Environment Observation:**``;
* ``current_prompt`` — ``prompt[turn_idx - 1]``; ``turn_idx`` is 1-based; ``total_turns``;
* ``system_str`` — the domain's system prompt; ``task``, ``id``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from worldforge.agentworldbench.prompts import system_prompt
from worldforge.warehouse.atomic import write_jsonl_atomic

OBSERVATION_HEADER = "**Environment Observation:**"
ACTION_HEADER = "**Action:**"

class AgentWorldBenchRecord(BaseModel):
    """One line of an AgentWorldBench ``<domain>_test.jsonl`` file (fields as published)."""

    model_config = ConfigDict(extra="allow")

    task: str
    id: str
    prompt: list[str]
    response: list[str]
    current_prompt: str
    system_str: str
    turn_idx: int = Field(ge=1)
    total_turns: int = Field(ge=1)

    def reference(self) -> str:
        """The ground-truth observation of the current turn, without its header."""
        return strip_observation_header(self.response[self.turn_idx - 1]) if self.turn_idx <= len(self.response) else ""


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


def records_from_turns(
    trajectory_id: str,
    domain: str,
    task: str,
    turns: Sequence[tuple[str, str]],
    **extra: object,
) -> list[AgentWorldBenchRecord]:
    """One AgentWorldBench record per turn of a trajectory.

    Args:
        trajectory_id: used for the record ids (``<trajectory_id>:<turn_idx>``).
        domain: selects the system prompt (unknown domains get the generic contract).
        task: the agent's instruction.
        turns: ``(action, observation)`` pairs in order.
        extra: more fields on every record (``world`` and ``scenario`` for simulated search
            episodes, which lets the grounded backend re-render them).
    """
    prompts = [action_prompt(i + 1, a) for i, (a, _) in enumerate(turns)]
    responses = [observation_text(o) for _, o in turns]
    system = system_prompt(domain)
    return [
        AgentWorldBenchRecord(task=task, id=f"{trajectory_id}:{i}", prompt=prompts, response=responses, current_prompt=prompts[i - 1],
                              system_str=system, turn_idx=i, total_turns=len(turns), domain=domain, **extra)
        for i in range(1, len(turns) + 1)
    ]


def read_records(path: str | Path) -> Iterator[tuple[int, AgentWorldBenchRecord | str]]:
    """``(line number, record)`` per non-blank line; a malformed line gives its reason instead."""
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield n, AgentWorldBenchRecord.model_validate_json(line)
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"]) or "line"
                yield n, f"not an AgentWorldBench record ({where}: {first['msg']})"


def write_records(path: str | Path, records: Sequence[AgentWorldBenchRecord]) -> Path:
    """Write records as AgentWorldBench JSONL, one per line, atomically (folder created); returns the path."""
    return write_jsonl_atomic(path, (r.model_dump(mode="json") for r in records))
