"""The AgentWorldBench benchmark: records, messages, judge rubrics, rule verifiers, inference,
judging and scoring of world models (Qwen-AgentWorld, arXiv 2606.24597).

* :mod:`~worldforge.agentworldbench.records` — the ``<domain>_test.jsonl`` record and how turns become records;
* :mod:`~worldforge.agentworldbench.messages` — the chat messages a world model is sent for a record;
* :mod:`~worldforge.agentworldbench.rubrics` — the per-domain judge rubrics, and a loader for the
  reference's prompt files (system prompts and rubrics);
* :mod:`~worldforge.agentworldbench.verifiers` — rule verifiers (rejection sampling and judge-free metrics);
* :mod:`~worldforge.agentworldbench.infer`, :mod:`~worldforge.agentworldbench.judge`,
  :mod:`~worldforge.agentworldbench.score`, :mod:`~worldforge.agentworldbench.evaluate` —
  ``worldforge eval infer | judge | score`` and the whole evaluation of an export.

The world model's side of the contract — the system prompts, the observation formats and reply
parsing — is :mod:`worldforge.worldmodel`; this package depends on it and on the world-model
backends (:mod:`worldforge.llm`).
"""

from worldforge.agentworldbench.messages import build_messages
from worldforge.agentworldbench.records import AgentWorldBenchRecord, read_records, records_from_turns, write_records
from worldforge.agentworldbench.rubrics import JUDGE_RUBRICS, PromptSet, judge_rubric, load_prompts

__all__ = [
    "JUDGE_RUBRICS", "AgentWorldBenchRecord", "PromptSet", "build_messages", "judge_rubric", "load_prompts",
    "read_records", "records_from_turns", "write_records",
]
