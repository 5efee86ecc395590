"""Process tuning shared by the world steps and the servers: CPython's cyclic garbage collector, and the
settings that hold for a whole process (:func:`apply_settings`, called by worldforge's edges).

A world's steps and a server's requests allocate millions of small, short-lived, mostly acyclic
objects (pages, facts, rows, observations, messages). Reference counting frees those at once; the
cyclic collector, which CPython runs every 700 net allocations by default, only walks them, and a
generation-2 collection walks every live object of the process (a server's open worlds included).
Measured on this machine:

* a catalog world's build: the collector took about 11% of it (2.18 s against 1.93 s a world, one
  process, 8 catalog worlds);
* a corpus build (:func:`worldforge.corpus.generate_pages`, :func:`worldforge.corpus.write_corpus`), which keeps
  every page until it is written: even at a relaxed threshold the collector took 0.1-0.5 s of a Mars colony
  corpus's 2.5 s walking those live pages (:func:`paused_gc`; the build makes no reference cycles since
  ``CorpusBuilder.close``);
* ``worldforge serve openenv`` under ``bench/rl.py``'s 64 WebSocket sessions: 7% of the server's
  CPU (0.71 against 0.66 ms a tool step, four alternating runs of 640 episodes on two servers).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

from worldforge.settings import Settings, get_settings

GC_GEN0 = 50_000
"""CPython's generation-0 collection threshold inside :func:`relaxed_gc` (its default is 700)."""


@contextlib.contextmanager
def relaxed_gc(gen0: int = GC_GEN0) -> Iterator[None]:
    """Collect cyclic garbage less often inside the block (``gc.set_threshold(gen0, ...)``), then restore the thresholds.

    Cycles are still collected, every ``gen0`` allocations instead of every 700; a threshold already
    higher than ``gen0`` is kept. Used around each world step (:meth:`worldforge.pipeline.Step.execute`)
    and around a server's whole life (``worldforge serve openenv | search | retrieve``); a corpus build pauses the
    collector instead (:func:`paused_gc`).
    """
    old = gc.get_threshold()
    gc.set_threshold(max(gen0, old[0]), *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic collection inside the block (``gc.disable()``), then the collector as it was.

    For work that keeps what it allocates until the block ends and makes no reference cycles (a corpus's pages and
    facts): reference counting still frees everything else at once, and any cycle made inside is collected by the
    next collection after the block. Nested blocks are fine (only the outermost one turns the collector back on).
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


M_MMAP_THRESHOLD = -3
"""glibc's ``mallopt`` parameter for the size from which ``malloc`` maps a block of its own (``malloc.h``)."""
SERVER_MMAP_THRESHOLD = 512 << 10
"""Bytes from which a server's blocks get their own memory map (:func:`return_large_blocks`)."""


def return_large_blocks(threshold: int = SERVER_MMAP_THRESHOLD) -> bool:
    """Have glibc's ``malloc`` give every block of at least ``threshold`` bytes its own memory map, handed back to
    the OS the moment it is freed (``mallopt(M_MMAP_THRESHOLD, threshold)``); a no-op returning ``False`` where
    the C library is not glibc. Called once as a server starts (``serve search | retrieve | openenv``, the
    recording proxies).

    Why: glibc starts at 128 KiB but raises the threshold to the size of each mapped block freed (up to
    32 MiB). After the first closed session's 2 MiB episode was freed, every later 2 MiB text (a session's
    ``dict_memory`` values, an episode's log line and its JSON, a drain's batch) came from the heaps of the
    per-thread arenas of the server's worker threads, where freed blocks between live ones stay resident:
    300 closed sessions of 2 MiB left ``serve search`` 300 MiB larger (``bench/memory.py``), whatever
    ``malloc_trim`` was called, and how much depended on which thread freed what, and when. A fixed
    threshold turns the adjustment off; blocks under it are small enough for the arenas to reuse.
    """
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, int(threshold)))


def apply_settings(**overrides: object) -> Settings:
    """:func:`~worldforge.settings.get_settings`, then apply the settings that hold for the whole process:
    the bound of the world caches (``open_worlds``: :func:`worldforge.warehouse.cache.set_open_worlds`).

    For worldforge's edges only (the CLI, a server's entry point, the environment a trainer constructs,
    the Dagster code location): the library below them takes every value as an argument and never reads
    the settings.

    Raises:
        SettingsError: a ``WORLDFORGE_*`` variable or an override holds a bad value (as ``get_settings``).
    """
    from worldforge.warehouse.cache import set_open_worlds

    settings = get_settings(**overrides)
    set_open_worlds(settings.open_worlds)
    return settings
