"""The AgentWorldBench contract: records, prompts, messages, reply parsing, rule verifiers,
inference, judging and scoring of world models (Qwen-AgentWorld, arXiv 2606.24597).

* :mod:`~worldforge.agentworldbench.records` — the ``<domain>_test.jsonl`` record and how turns become records;
* :mod:`~worldforge.worldmodel.prompts` — the per-domain system prompts and judge rubrics, and a loader
  for the reference's prompt files;
* :mod:`~worldforge.agentworldbench.messages` — the chat messages a world model is sent;
* :mod:`~worldforge.agentworldbench.parsing` — ``<think>`` / ``<predicted_observation>`` replies;
* :mod:`~worldforge.agentworldbench.verifiers` — rule verifiers (rejection sampling and judge-free metrics);
* :mod:`~worldforge.agentworldbench.infer`, :mod:`~worldforge.agentworldbench.judge`,
  :mod:`~worldforge.agentworldbench.score`, :mod:`~worldforge.agentworldbench.evaluate` —
  ``worldforge eval infer | judge | score`` and the whole evaluation of an export.

It depends on the world-model backends (:mod:`worldforge.llm`) and on nothing above them.
"""

from worldforge.agentworldbench.messages import build_messages
from worldforge.agentworldbench.parsing import PREDICTION_SCHEMA, ParseFailure, Prediction, format_prediction, parse_prediction
from worldforge.agentworldbench.records import AgentWorldBenchRecord, read_records, records_from_turns, write_records
from worldforge.worldmodel.prompts import (
    BENCHMARK_DOMAINS,
    JUDGE_RUBRICS,
    SYSTEM_PROMPTS,
    PromptSet,
    benchmark_domain,
    judge_rubric,
    load_prompts,
    system_prompt,
)

__all__ = [
    "BENCHMARK_DOMAINS", "JUDGE_RUBRICS", "PREDICTION_SCHEMA", "SYSTEM_PROMPTS", "AgentWorldBenchRecord", "ParseFailure", "Prediction",
    "PromptSet", "benchmark_domain", "build_messages", "format_prediction", "judge_rubric", "load_prompts", "parse_prediction",
    "read_records", "records_from_turns", "system_prompt", "write_records",
]
