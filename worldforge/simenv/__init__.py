"""The simulated search environment: sessions, tools, perturbations, leakage control."""

from worldforge.simenv.env import NO_PERTURBATIONS, TOOL_SCHEMAS, TOOLS, Observation, SearchEnv
from worldforge.simenv.perturbations import DEFAULT_MIX, Perturbation, PerturbationConfig, from_instruction

__all__ = [
    "DEFAULT_MIX", "NO_PERTURBATIONS", "Observation", "Perturbation", "PerturbationConfig", "SearchEnv",
    "TOOLS", "TOOL_SCHEMAS", "from_instruction",
]
