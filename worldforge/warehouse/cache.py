"""Values read from world files, kept while the file is unchanged, in a bounded LRU cache.

The search environment keeps a world's corpus, its open tantivy indexes and its tasks in
memory. An RL trainer samples tasks across a whole catalog, so each of these caches holds at
most :func:`open_worlds` entries and drops the least recently used one first
(``cachetools.LRUCache``); an entry is reloaded when its file's mtime changes. The bound is the
process's: :func:`~worldforge.settings.default_open_worlds` until an edge of worldforge (the CLI, a server's entry point,
an environment a trainer constructs) sets ``WORLDFORGE_OPEN_WORLDS`` with :func:`set_open_worlds`;
the library never reads the setting itself.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Generic, TypeVar

from cachetools import LRUCache

from worldforge.settings import default_open_worlds

__all__ = ["FileCache", "open_worlds", "open_worlds_set", "set_open_worlds"]

V = TypeVar("V")

_bound: int | None = None  # set_open_worlds's value; None: default_open_worlds()
_caches: weakref.WeakSet[FileCache] = weakref.WeakSet()


def open_worlds() -> int:
    """Entries each :class:`FileCache` of this process keeps at most (unless it was given its own ``maxsize``)."""
    return _bound if _bound is not None else default_open_worlds()


def open_worlds_set() -> bool:
    """Whether an edge has set this process's bound (:func:`set_open_worlds`); an entry point constructed many times
    (an environment per session) applies the settings only when none has."""
    return _bound is not None


def set_open_worlds(n: int) -> None:
    """Bound every :class:`FileCache` of this process (those without a ``maxsize`` of their own) to ``n``
    entries; a cache holding more drops its least recently used ones at once. For worldforge's edges,
    which pass ``WORLDFORGE_OPEN_WORLDS`` (:func:`worldforge.runtime.apply_settings`).

    Raises:
        ValueError: ``n`` is under 1.
    """
    global _bound
    if n < 1:
        raise ValueError(f"open worlds must be at least 1, got {n}")
    if n == _bound:
        return
    _bound = n
    for cache in list(_caches):
        cache._resize()


class FileCache(Generic[V]):
    """Values loaded from files, keyed by ``(file, part)``, valid while the file's mtime is unchanged.

    Thread-safe: a value is loaded under the cache's lock (re-entrant: a loader may :meth:`pop`),
    so two threads never load the same entry at once.

    Args:
        maxsize: entries kept at most (default: the process's bound, :func:`open_worlds`).
    """

    def __init__(self, maxsize: int | None = None):
        self._maxsize = maxsize
        self._items: LRUCache | None = None
        self._lock = threading.RLock()
        _caches.add(self)

    @property
    def maxsize(self) -> int:
        """Entries kept at most."""
        return self._maxsize or open_worlds()

    def _cache(self) -> LRUCache:
        if self._items is None:
            self._items = LRUCache(maxsize=self.maxsize)
        return self._items

    def _resize(self) -> None:
        """Take the process's new bound: the entries move to a cache of the new size, least recently used first."""
        with self._lock:
            if self._items is None or self._items.maxsize == self.maxsize:
                return
            old, entries = self._items, []
            while old:
                entries.append(old.popitem())  # LRUCache.popitem: the least recently used first
            self._items = LRUCache(maxsize=self.maxsize)
            for key, value in entries:
                self._items[key] = value

    def get(self, path: str | Path, part: Hashable, load: Callable[[], V]) -> V:
        """The value of ``(path, part)``, from ``load()`` when missing or older than the file.

        Raises:
            FileNotFoundError: ``path`` does not exist; what ``load`` raises (nothing is cached then).
        """
        key, stamp = (str(path), part), os.stat(path).st_mtime_ns
        with self._lock:
            cached = self._cache().get(key)
            if cached is not None and cached[0] == stamp:
                return cached[1]
            value = load()
            self._cache()[key] = (stamp, value)
            return value

    def pop(self, path: str | Path, part: Hashable) -> None:
        """Forget ``(path, part)`` (its file was rewritten by this process)."""
        with self._lock:
            self._cache().pop((str(path), part), None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._cache())
