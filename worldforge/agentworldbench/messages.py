"""Chat messages of an AgentWorldBench record: what a world model is asked.

The system prompt (the record's ``system_str``), then each earlier turn as a user message (its
action prompt) answered by an assistant message (its observation), then the current action.
"""

from __future__ import annotations

from worldforge.agentworldbench.records import AgentWorldBenchRecord


def build_messages(record: AgentWorldBenchRecord, instruction: str | None = None, context_from: int = 0) -> list[dict]:
    """Chat messages for one record: system, earlier turns as user/assistant pairs, the current action.

    Args:
        record: the record.
        instruction: extra text for the system prompt (a Simulation Instruction with grounding).
        context_from: the first earlier turn kept (0-based); older turns are left out to fit
            a context budget (the kept turns keep their ``### Turn N`` numbers).

    Returns:
        OpenAI chat messages ``[{"role", "content"}, ...]``: one system message, then
        ``2 × (turn_idx − 1 − context_from)`` context messages (plus the task pair when the
        record has a task), then the current action as a user message.
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
