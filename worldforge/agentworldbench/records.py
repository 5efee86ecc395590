"""AgentWorldBench records: the benchmark's JSONL format and how turns become records.

An AgentWorldBench record (Qwen-AgentWorld, arXiv 2606.24597; one JSONL file per domain,
``<domain>_test.jsonl``) holds a whole trajectory and points at one turn of it:

* ``prompt`` — per-turn action prompts, ``### Turn N`` / ``**Action:**`` and a json block
  ``{"name", "arguments"}``;
* ``response`` — the ground-truth observations, each starting ``**Environment Observation:**``;
* ``current_prompt`` — ``prompt[turn_idx - 1]``; ``turn_idx`` is 1-based; ``total_turns``;
* ``system_str`` — the domain's system prompt; ``id`` (a string or an integer);
* ``task`` — the benchmark **domain** (``terminal``, ``swe``, ``search``, ``mcp``, ``android``,
  ``web``, ``os``; a ``prefix/domain`` path is read as its last part), as the reference
  evaluation (QwenLM/Qwen-AgentWorld ``eval/eval.py``) uses it: it picks the domain's judge rubric
  and groups the scores. worldforge's exports add ``instruction`` (the agent's task), ``domain``
  (the same benchmark domain) and ``source``.

The reference's own records are read as they are: only ``prompt`` and ``turn_idx`` are required
(``task`` defaults to ``mcp`` as in the reference, ``current_prompt`` to ``prompt[turn_idx - 1]``,
``total_turns`` to the number of prompts); a ``prompt`` or ``response`` given as one string is one
turn. The action and observation layouts are the world model's (:mod:`worldforge.worldmodel.formats`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError, field_validator, model_validator

from worldforge.warehouse.atomic import write_jsonl_atomic
from worldforge.worldmodel.formats import action_prompt, observation_text, strip_observation_header
from worldforge.worldmodel.prompts import BENCHMARK_DOMAINS, benchmark_domain, system_prompt


class AgentWorldBenchRecord(BaseModel):
    """One line of an AgentWorldBench ``<domain>_test.jsonl`` file (fields as published; extra fields kept).

    Raises:
        pydantic.ValidationError: ``turn_idx`` is below 1 or past the last prompt, a list holds a non-string.
    """

    model_config = ConfigDict(extra="allow")

    task: str = "mcp"
    id: str | StrictInt
    prompt: list[str]
    response: list[str] = Field(default_factory=list)
    current_prompt: str = ""
    system_str: str = ""
    turn_idx: int = Field(ge=1)
    total_turns: int | None = None

    @field_validator("prompt", "response", mode="before")
    @classmethod
    def _one_turn(cls, v: object) -> object:
        return [v] if isinstance(v, str) else v

    @model_validator(mode="after")
    def _defaults(self) -> AgentWorldBenchRecord:
        if self.turn_idx > len(self.prompt):
            raise ValueError(f"turn_idx {self.turn_idx} is past the last of {len(self.prompt)} prompts")
        if not self.current_prompt:
            self.current_prompt = self.prompt[self.turn_idx - 1]
        if self.total_turns is None:
            self.total_turns = len(self.prompt)
        return self

    def reference(self) -> str:
        """The ground-truth observation of the current turn, without its header (``""`` when the record has none)."""
        return strip_observation_header(self.response[self.turn_idx - 1]) if self.turn_idx <= len(self.response) else ""

    def bench_domain(self) -> str:
        """The benchmark domain: :func:`domain_of` of ``task`` and the ``domain`` field."""
        return domain_of(self.task, (self.model_extra or {}).get("domain"))

    def instruction(self) -> str:
        """The agent's instruction: the ``instruction`` field, else a ``task`` that names no domain (older exports), else ``""``."""
        extra = (self.model_extra or {}).get("instruction")
        if isinstance(extra, str):
            return extra
        return "" if self.task.split("/")[-1] in BENCHMARK_DOMAINS else self.task


def domain_of(task: str, domain: object = None) -> str:
    """The benchmark domain of a record or judged line: ``task``'s last ``/`` part (the reference's
    ``get_subtask``) when it names one of :data:`~worldforge.worldmodel.prompts.BENCHMARK_DOMAINS`,
    else ``domain`` mapped by :func:`~worldforge.worldmodel.prompts.benchmark_domain` (exports
    written before ``task`` held the domain), else that last part as it is."""
    sub = task.split("/")[-1]
    if sub in BENCHMARK_DOMAINS:
        return sub
    return benchmark_domain(domain) if isinstance(domain, str) and domain else sub


def records_from_turns(
    trajectory_id: str,
    domain: str,
    instruction: str,
    turns: Sequence[tuple[str, str]],
    **extra: object,
) -> list[AgentWorldBenchRecord]:
    """One AgentWorldBench record per turn of a trajectory.

    Args:
        trajectory_id: used for the record ids (``<trajectory_id>:<turn_idx>``).
        domain: a trajectory domain; mapped to the benchmark's
            (:func:`~worldforge.worldmodel.prompts.benchmark_domain`: ``tool`` → ``mcp``), which
            becomes ``task`` and ``domain`` and selects the system prompt.
        instruction: the agent's instruction (the ``instruction`` field).
        turns: ``(action, observation)`` pairs in order.
        extra: more fields on every record (``world`` and ``scenario`` for simulated search
            episodes, which lets the grounded backend re-render them).
    """
    prompts = [action_prompt(i + 1, a) for i, (a, _) in enumerate(turns)]
    responses = [observation_text(o) for _, o in turns]
    bench = benchmark_domain(domain)
    system = system_prompt(bench)
    return [
        AgentWorldBenchRecord(task=bench, id=f"{trajectory_id}:{i}", prompt=prompts, response=responses, current_prompt=prompts[i - 1],
                              system_str=system, turn_idx=i, total_turns=len(turns), domain=bench, instruction=instruction, **extra)
        for i in range(1, len(turns) + 1)
    ]


def read_records(path: str | Path) -> Iterator[tuple[int, AgentWorldBenchRecord | str]]:
    """``(line number, record)`` per non-blank line; a malformed line (bad JSON, a missing field, bytes that are
    not UTF-8) gives its reason instead, and the lines after it are read as usual."""
    with open(path, "rb") as fh:
        for n, raw in enumerate(fh, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield n, f"not UTF-8 text (byte {exc.start + 1} of the line: {exc.reason})"
                continue
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
