"""Chat messages of an AgentWorldBench record: what a world model is asked.

Two styles:

* ``reference`` (the default) — exactly the reference evaluation's construction
  (QwenLM/Qwen-AgentWorld ``eval/eval.py``, ``run_inference``): the record's ``system_str`` as
  the system message (left out when empty), then each earlier turn as a user message (its
  action prompt) answered by an assistant message (its observation, pairs taken while both
  lists have one), then ``prompt[turn_idx - 1]`` as the last user message. The agent's
  instruction is never sent, so the same record gives the same prompt in both tools.
* ``worldforge`` — the same, with the agent's instruction as a first user/assistant exchange
  (``The agent's task: …`` / ``Understood. …``) after the system message.
"""

from __future__ import annotations

from typing import Literal

from worldforge.agentworldbench.records import AgentWorldBenchRecord

MessageStyle = Literal["reference", "worldforge"]
MESSAGE_STYLES: tuple[str, ...] = ("reference", "worldforge")
"""The message constructions :func:`build_messages` knows (see the module doc)."""


def build_messages(record: AgentWorldBenchRecord, instruction: str | None = None, context_from: int = 0,
                   style: MessageStyle = "reference", system: str | None = None) -> list[dict]:
    """Chat messages for one record: system, earlier turns as user/assistant pairs, the current action.

    Args:
        record: the record.
        instruction: extra text for the system prompt (a Simulation Instruction with grounding).
        context_from: the first earlier turn kept (0-based); older turns are left out to fit
            a context budget (the kept turns keep their ``### Turn N`` numbers).
        style: ``reference`` or ``worldforge`` (see the module doc).
        system: a system prompt used instead of the record's ``system_str`` (``--prompts DIR``).

    Returns:
        OpenAI chat messages ``[{"role", "content"}, ...]``: the system message (when not empty),
        ``2 × (turn_idx − 1 − context_from)`` context messages (fewer when ``response`` is shorter;
        plus the task pair in the ``worldforge`` style when the record has an instruction), then
        the current action as a user message.

    Raises:
        ValueError: an unknown style.
    """
    if style not in MESSAGE_STYLES:
        raise ValueError(f"unknown message style {style!r}; choose one of: {', '.join(MESSAGE_STYLES)}")
    t = record.turn_idx - 1
    text = (record.system_str if system is None else system) + (f"\n\n{instruction}" if instruction else "")
    messages = [{"role": "system", "content": text}] if text else []
    task = record.instruction()
    if style == "worldforge" and task:
        messages.append({"role": "user", "content": f"The agent's task: {task}"})
        messages.append({"role": "assistant", "content": "Understood. Send the agent's actions."})
    for prompt, response in list(zip(record.prompt[:t], record.response[:t]))[context_from:]:
        messages.append({"role": "user", "content": prompt})
        messages.append({"role": "assistant", "content": response})
    messages.append({"role": "user", "content": record.prompt[t]})
    return messages
