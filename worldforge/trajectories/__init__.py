"""Agent trajectories as data: readers of real ones to the canonical turn shape, loss-mask statistics,
the trajectory store, and the episode store of simulated ones (:mod:`worldforge.trajectories.episodes`)."""

from worldforge.trajectories.mask import MaskConfig, compute_statistics, mask_turns
from worldforge.trajectories.model import DOMAINS, Quarantined, Trajectory, Turn
from worldforge.trajectories.readers import FORMATS, discover, read_file, read_path
from worldforge.trajectories.store import IngestReport, apply_masks, balance, ingest, load_store, write_store

__all__ = [
    "DOMAINS", "FORMATS", "IngestReport", "MaskConfig", "Quarantined", "Trajectory", "Turn",
    "apply_masks", "balance", "compute_statistics", "discover", "ingest", "load_store", "mask_turns",
    "read_file", "read_path", "write_store",
]
