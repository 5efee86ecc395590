"""Training and evaluation data from trajectories and worlds (Qwen-AgentWorld stages 1 and 2).

* :mod:`~worldforge.datasets.cpt` — CPT samples with turn-level loss masks (``build_cpt``);
* :mod:`~worldforge.datasets.sft` — next-state prediction SFT samples, rejection-sampled (``build_sft``);
* :mod:`~worldforge.datasets.agentworldbench` — the held-out split as AgentWorldBench files;
* :mod:`~worldforge.datasets.config` — how each dataset is built (every default of a build);
* :mod:`~worldforge.datasets.sources`, :mod:`~worldforge.datasets.output`, :mod:`~worldforge.datasets.card` —
  streamed inputs and the split, atomic dataset folders, dataset cards.
"""

from worldforge.datasets.agentworldbench import build_agentworldbench
from worldforge.datasets.config import CPTConfig, ExportConfig, SFTConfig, SplitConfig
from worldforge.datasets.cpt import build_cpt
from worldforge.datasets.sft import build_sft

__all__ = ["CPTConfig", "ExportConfig", "SFTConfig", "SplitConfig", "build_agentworldbench", "build_cpt", "build_sft"]
