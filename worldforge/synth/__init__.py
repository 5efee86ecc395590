"""Seeded generation of world tables and their invariants."""

from worldforge.synth.generate import build_world, column_rng
from worldforge.synth.invariants import Violation, check_world

__all__ = ["Violation", "build_world", "check_world", "column_rng"]
