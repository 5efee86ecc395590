"""Training and evaluation data from trajectories and worlds (Qwen-AgentWorld stages 1 and 2).

* :mod:`~worldforge.datasets.cpt` — CPT samples with turn-level loss masks (``build_cpt``);
* :mod:`~worldforge.datasets.sft` — next-state prediction SFT samples, rejection-sampled (``build_sft``);
* :mod:`~worldforge.datasets.agentworldbench` — the held-out split as AgentWorldBench files;
* :mod:`~worldforge.datasets.config` — how each dataset is built (every default of a build);
* :mod:`~worldforge.datasets.sources`, :mod:`~worldforge.datasets.output`, :mod:`~worldforge.datasets.card` —
  streamed inputs and the split, atomic dataset folders, dataset cards.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "CPTConfig": "worldforge.datasets.config",
    "ExportConfig": "worldforge.datasets.config",
    "SFTConfig": "worldforge.datasets.config",
    "SplitConfig": "worldforge.datasets.config",
    "build_agentworldbench": "worldforge.datasets.agentworldbench",
    "build_cpt": "worldforge.datasets.cpt",
    "build_sft": "worldforge.datasets.sft",
}
"""Each public name and the module that defines it: imported on first use (PEP 562), so importing
one submodule of this package does not import all of them."""

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
