"""The world model: next-state prediction grounded on a world's tables, over the :mod:`worldforge.llm` backends.

* :mod:`~worldforge.worldmodel.prompts` — the per-domain system prompts (what the world model is asked,
  and the reply layout it must follow);
* :mod:`~worldforge.worldmodel.formats` — the observation formats: an action turn and an observation as
  the world model reads them;
* :mod:`~worldforge.worldmodel.parsing` — ``<think>`` / ``<predicted_observation>`` replies, read back;
* :mod:`~worldforge.worldmodel.render` — the search renderer: a search environment's observation rendered
  by a world model and checked by :mod:`~worldforge.worldmodel.verify` (the fact verifier);
* :mod:`~worldforge.worldmodel.grounded` — the ``grounded`` backend, which replays the environment itself;
* :mod:`~worldforge.worldmodel.backends` — which backend a name means, and the configured world model.

The names below are the contract alone (light to import); the renderer, the verifier and the
backends are imported from their modules.
"""

from worldforge.worldmodel.formats import OBSERVATION_HEADER, action_prompt, observation_text, strip_observation_header
from worldforge.worldmodel.parsing import PREDICTION_SCHEMA, ParseFailure, Prediction, format_prediction, parse_prediction
from worldforge.worldmodel.prompts import BENCHMARK_DOMAINS, CONTRACT, DIMENSIONS, SYSTEM_PROMPTS, benchmark_domain, system_prompt

__all__ = [
    "BENCHMARK_DOMAINS", "CONTRACT", "DIMENSIONS", "OBSERVATION_HEADER", "PREDICTION_SCHEMA", "SYSTEM_PROMPTS", "ParseFailure",
    "Prediction", "action_prompt", "benchmark_domain", "format_prediction", "observation_text", "parse_prediction",
    "strip_observation_header", "system_prompt",
]
