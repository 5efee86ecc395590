"""Seeded generation of world tables and their invariants."""

from worldforge.synth.generate import BASE_KINDS, build_world, column_rng, rederive
from worldforge.synth.invariants import Violation, check_world

__all__ = ["BASE_KINDS", "Violation", "build_world", "check_world", "column_rng", "rederive"]
