"""The reward of an episode: its answer scored against the task's gold table, optionally shaped.

One implementation for every entry point that ends an episode (the RL core
:class:`worldforge.rl.env.SearchWorldEnv`, its adapters, and ``POST /sessions/{id}/submit`` of
the search server): the answer's first Markdown table is scored with WideSearch's item-F1
(:func:`worldforge.tasks.scorer.score_table`) and :class:`RewardConfig` shapes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from worldforge.tasks.io import Task
from worldforge.tasks.scorer import Score, score_table

__all__ = ["Reward", "RewardConfig", "reward_of"]

_FORMAT_FAILURES = ("no Markdown table", "answer lacks required columns")


class RewardConfig(BaseModel):
    """How an answer's score becomes the reward.

    ``reward = score[metric] + format_reward * (the answer is a table with every required column)
    - tool_call_penalty * tool calls``, not clipped. The default is the plain item-F1.

    Attributes:
        metric: ``f1_by_item`` (WideSearch's item-F1, the default) or ``f1_by_row``.
        format_reward: added when the answer parses as a Markdown table with every required column.
        tool_call_penalty: subtracted per tool call of the episode (calls that failed included).
        rules: the scoring rules of a wide task's table, ``worldforge`` (the default) or ``widesearch``
            (:func:`~worldforge.tasks.scorer.score_table`); a deep question is graded the same either way.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    metric: str = Field("f1_by_item", pattern="^(f1_by_item|f1_by_row)$")
    format_reward: float = Field(0.0, ge=0.0)
    tool_call_penalty: float = Field(0.0, ge=0.0)
    rules: str = Field("worldforge", pattern="^(worldforge|widesearch)$")


@dataclass(frozen=True)
class Reward:
    """An episode's reward and what it was computed from.

    Attributes:
        value: the reward (see :class:`RewardConfig`).
        score: the answer's :class:`~worldforge.tasks.scorer.Score` (row/item precision, recall, F1, per column, notes).
        format_ok: the answer is a Markdown table with every required column.
        tool_calls: the episode's tool calls.
    """

    value: float
    score: Score
    format_ok: bool
    tool_calls: int

    @property
    def info(self) -> dict[str, Any]:
        """The reward as a JSON-ready dict: the score fields, ``by_column``, ``notes``,
        ``tool_calls``, ``format_ok`` and ``reward``."""
        return {**self.score.as_dict(), "tool_calls": self.tool_calls, "format_ok": self.format_ok, "reward": self.value}


def reward_of(answer: str, task: Task, tool_calls: int, config: RewardConfig | None = None) -> Reward:
    """Score ``answer`` against ``task`` and shape it into a reward.

    Args:
        answer: the agent's final answer (its first Markdown table is scored; for a deep question,
            :func:`~worldforge.tasks.deep.as_task`, its ``Exact Answer:`` line is graded and every score is 1 or 0).
        task: the task with its gold table.
        tool_calls: the episode's tool calls (for ``tool_call_penalty``).
        config: the shaping (default: the plain item-F1).

    Returns:
        A :class:`Reward`; its ``info`` is JSON-ready: the score fields, ``by_column``,
        ``notes``, ``tool_calls``, ``format_ok`` and ``reward``.
    """
    cfg = config or RewardConfig()
    text = answer if isinstance(answer, str) else str(answer)
    if task.extra.get("kind") == "deep":  # one short answer in BrowseComp's format: every score is its correctness
        from worldforge.tasks.deep import grade_response, question_of

        grade = grade_response(text, question_of(task))
        v = float(grade.correct)
        note = (f"deep: exact answer {grade.extracted!r} ({grade.method} match)" if grade.extracted is not None
                else "deep: no 'Exact Answer:' line in the answer")
        score = Score(v, v, v, v, v, v, [note], {task.required[0]: v})
        format_ok = grade.extracted is not None
    else:
        score = score_table(text, task, rules=cfg.rules)
        format_ok = not any(n.startswith(_FORMAT_FAILURES) for n in score.notes)
    value = float(getattr(score, cfg.metric) + cfg.format_reward * format_ok - cfg.tool_call_penalty * tool_calls)
    return Reward(value, score, format_ok, tool_calls)
