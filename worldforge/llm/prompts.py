"""World-model prompts in the AgentWorldBench contract, and parsing of the replies.

An AgentWorldBench record (Qwen-AgentWorld; one JSONL file per domain,
``<domain>_test.jsonl``) holds a whole trajectory and points at one turn of it:

* ``prompt`` — per-turn action prompts, ``### Turn N`` / ``**Action:**`` and a json block
  ``{"name", "arguments"}``;
* ``response`` — the ground-truth observations, each starting ``**Environment Observation:**``;
* ``current_prompt`` — ``prompt[turn_idx - 1]``; ``turn_idx`` is 1-based; ``total_turns``;
* ``system_str`` — the domain's system prompt; ``task``, ``id``.

:func:`build_messages` turns a record into chat messages: the system prompt, then each earlier
turn as a user message (its action) answered by an assistant message (its observation), then
the current action. The world model answers with ``<think>…</think>`` reasoning and
``<predicted_observation>…</predicted_observation>``; :func:`parse_prediction` extracts them
and reports a missing or unclosed tag as a :class:`ParseFailure` with a reason, not an error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError


OBSERVATION_HEADER = "**Environment Observation:**"
ACTION_HEADER = "**Action:**"

_CONTRACT = (
    "You are a world model: you simulate the environment an AI agent acts in. Given the agent's "
    "actions so far and what the environment returned, predict exactly what the environment returns "
    "for the current action. First reason briefly inside <think>...</think>, then write the "
    "observation inside <predicted_observation>...</predicted_observation>, formatted as the real "
    "environment would format it. Stay consistent with every earlier observation."
)

SYSTEM_PROMPTS: dict[str, str] = {
    "search": _CONTRACT + " The environment is a web search engine with the tools web_search (10 results "
    "per query: [n] <url>, Title, Snippet, Date), web_extractor (a page as Markdown) and dict_memory.",
    "terminal": _CONTRACT + " The environment is a Linux shell: return the command's stdout and stderr.",
    "os": _CONTRACT + " The environment is an operating system shell: return the command's output.",
    "swe": _CONTRACT + " The environment is a software repository with an editor and a shell: return "
    "file views, edit confirmations, command output and test results.",
    "tool": _CONTRACT + " The environment is a set of APIs called as tools: return each tool's JSON or text reply.",
    "mcp": _CONTRACT + " The environment is a set of MCP servers: return each tool result as the server would.",
    "web": _CONTRACT + " The environment is a web browser: return the page state after the action.",
    "android": _CONTRACT + " The environment is an Android phone: return the screen state after the action.",
}
"""One system prompt per domain of :data:`worldforge.trajectories.model.DOMAINS`."""

PREDICTION_SCHEMA: dict = {
    "type": "object",
    "properties": {"think": {"type": "string"}, "predicted_observation": {"type": "string"}},
    "required": ["think", "predicted_observation"],
    "additionalProperties": False,
}
"""The JSON-schema form of a reply, for backends with structured output."""


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
    return f"{OBSERVATION_HEADER}\n{observation}"


def strip_observation_header(text: str) -> str:
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
    system = SYSTEM_PROMPTS.get(domain, _CONTRACT)
    return [
        AgentWorldBenchRecord(task=task, id=f"{trajectory_id}:{i}", prompt=prompts, response=responses, current_prompt=prompts[i - 1],
                              system_str=system, turn_idx=i, total_turns=len(turns), domain=domain, **extra)
        for i in range(1, len(turns) + 1)
    ]


def build_messages(record: AgentWorldBenchRecord, instruction: str | None = None, context_from: int = 0) -> list[dict]:
    """Chat messages for one record: system, earlier turns as user/assistant pairs, the current action.

    Args:
        record: the record.
        instruction: extra text for the system prompt (a Simulation Instruction with grounding).
        context_from: the first earlier turn kept (0-based); older turns are left out to fit
            a context budget (the kept turns keep their ``### Turn N`` numbers).
    """
    system = record.system_str + (f"\n\n{instruction}" if instruction else "")
    messages = [{"role": "system", "content": system}]
    if record.task:
        messages.append({"role": "user", "content": f"The agent's task: {record.task}"})
        messages.append({"role": "assistant", "content": "Understood. Send the agent's actions."})
    for j in range(context_from, record.turn_idx - 1):
        messages.append({"role": "user", "content": record.prompt[j]})
        messages.append({"role": "assistant", "content": record.response[j]})
    messages.append({"role": "user", "content": record.current_prompt})
    return messages


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
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for r in records:
            fh.write(r.model_dump_json() + "\n")
    return path


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
    reasoning). A leading ``**Environment Observation:**`` inside the block is dropped.

    Returns:
        A :class:`Prediction`, or a :class:`ParseFailure` whose reason is one of: ``empty
        reply``, ``missing <predicted_observation> tag``, ``unclosed <predicted_observation> tag
        (truncated reply?)``, ``unclosed <think> tag``, ``empty <predicted_observation>``.
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
            if not obs:
                return ParseFailure("empty <predicted_observation>", text)
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
    if not obs:
        return ParseFailure("empty <predicted_observation>", text)
    return Prediction(think_blocks[-1].strip() if think_blocks else None, obs)


def format_prediction(observation: str, think: str | None = None) -> str:
    """The reply text for a prediction (the SFT target layout)."""
    head = f"<think>\n{think.strip()}\n</think>\n" if think is not None else ""
    return f"{head}<predicted_observation>\n{observation}\n</predicted_observation>"
