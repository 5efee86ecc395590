"""The episode records: what an environment returns for one tool call (:class:`Observation`) and
the agent episodes made of them (:class:`Episode`).

They import no environment and no storage: the search environment builds them
(:func:`worldforge.simenv.env.episode_of`), the episode log (:mod:`.log`) appends them as JSON
lines and the episode store (:mod:`.store`) records them as Parquet parts.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Observation:
    """What the environment returns for one tool call.

    Attributes:
        text: the observation as the agent sees it.
        tool: the tool called (or the name given, for an unknown tool).
        error: the call failed (malformed, or a perturbation).
        fired: perturbation decisions that fired this turn (``{"kind", "detail"}``).
        revealed: facts stated by the snippets shown (``{"url", "table", "row_key", "column", "value"}``).
        leaks_blocked: snippets replaced by leakage control.
        rendering: with a world-model renderer, how the text was rendered
            (:meth:`worldforge.worldmodel.render.Rendering.as_dict`).
    """

    text: str
    tool: str
    error: bool = False
    fired: list[dict] = field(default_factory=list)
    revealed: list[dict] = field(default_factory=list)
    leaks_blocked: int = 0
    rendering: dict | None = None


@dataclass
class Episode:
    """One agent episode in the simulated environment."""

    episode_id: str
    world: str
    scenario: str | None
    task_id: str | None
    question: str
    seed: int
    perturbations_json: str
    agent: str
    steps: list[tuple[dict, Observation]] = field(default_factory=list)
    answer: str = ""
    finished: bool = False
    f1_by_row: float | None = None
    f1_by_item: float | None = None
