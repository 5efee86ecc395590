"""Persistent caches for world-model calls (SQLite files, safe across threads and processes).

* :class:`CachedBackend` wraps any backend: a request whose key (backend identity, messages,
  grounding, ``n``, params) is cached is answered from the file; the others are generated
  and written *as each finishes* (``on_result``), so a batch killed halfway keeps its
  finished work and a re-run generates only what is missing. Failures are never cached.
* :class:`KVCache` is the store underneath, also used by grounded LLM search to keep one
  rendering per (world, corpus, normalised tool call, seed).

SQLite (standard library) rather than DuckDB: a cache is many small point writes from
several threads, which SQLite's WAL mode handles without a writer lock of our own.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

from pydantic import PrivateAttr

from worldforge.llm.base import Completion, Failure, GenerationParams, GenerationResult, OnResult, WorldModelBackend, WorldModelRequest, record


class KVCache:
    """A JSON-valued key/value table in a SQLite file.

    Args:
        path: the file (created with its folder).
        table: the table name (one file can hold several caches).
    """

    def __init__(self, path: str | Path, table: str = "cache"):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not table.isidentifier():
            raise ValueError(f"bad cache table name {table!r}")
        self.table = table
        self._lock = threading.Lock()
        self._con = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        with self._lock:
            self._con.execute("PRAGMA journal_mode=WAL")
            self._con.execute(f"CREATE TABLE IF NOT EXISTS {table} (key TEXT PRIMARY KEY, value TEXT NOT NULL, created TEXT DEFAULT CURRENT_TIMESTAMP)")
            self._con.commit()

    def get(self, key: str) -> object | None:
        """The value stored under ``key``, decoded from JSON, or ``None`` when there is none."""
        with self._lock:
            row = self._con.execute(f"SELECT value FROM {self.table} WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, value: object) -> None:
        """Store a JSON-serialisable ``value`` under ``key``, replacing any earlier one; committed at once."""
        blob = json.dumps(value, ensure_ascii=False)
        with self._lock:
            self._con.execute(f"INSERT OR REPLACE INTO {self.table} (key, value) VALUES (?, ?)", (key, blob))
            self._con.commit()

    def __len__(self) -> int:
        with self._lock:
            return self._con.execute(f"SELECT count(*) FROM {self.table}").fetchone()[0]

    def close(self) -> None:
        """Close the SQLite connection."""
        with self._lock:
            self._con.close()


class CachedBackend(WorldModelBackend):
    """Any backend, answered from a cache file first.

    Attributes:
        backend: the backend that generates cache misses.
        cache_path: the SQLite file.
    """

    kind = "cached"

    backend: WorldModelBackend
    cache_path: str
    _cache: KVCache | None = PrivateAttr(None)

    @property
    def identity(self) -> str:
        """The inner backend's identity, so cached replies do not depend on the wrapper."""
        return self.backend.identity

    @property
    def cache(self) -> KVCache:
        """The ``completions`` table of the cache file, opened on first use."""
        if self._cache is None:
            self._cache = KVCache(self.cache_path, "completions")
        return self._cache

    def load(self) -> None:
        """Load the inner backend."""
        self.backend.load()

    def unload(self) -> None:
        """Unload the inner backend and close the cache file (it reopens on next use)."""
        self.backend.unload()
        if self._cache is not None:
            self._cache.close()
            self._cache = None

    def check_params(self, params: GenerationParams) -> None:
        """Check ``params`` against the inner backend (:meth:`WorldModelBackend.check_params`)."""
        self.backend.check_params(params)

    def _generate(self, requests: list[WorldModelRequest], n: int, params: GenerationParams, on_result: OnResult | None) -> GenerationResult:
        result = GenerationResult()
        keys = {r.id: r.key(self.backend.identity, n, params) for r in requests}
        misses = []
        for req in requests:
            hit = self.cache.get(keys[req.id])
            if hit is None:
                misses.append(req)
            else:
                record(result, req, [Completion.model_validate(c | {"request_id": req.id, "cached": True}) for c in hit], on_result)  # type: ignore[operator]
        if misses:
            def through(req: WorldModelRequest, outcome: list[Completion] | Failure) -> None:
                if not isinstance(outcome, Failure):
                    self.cache.put(keys[req.id], [c.model_dump(exclude={"cached"}) for c in outcome])
                record(result, req, outcome, on_result)

            self.backend._generate(misses, n, params, through)  # the batch was checked and the backend loaded
        return result


def generate_cached(
    backend: WorldModelBackend,
    requests: list[WorldModelRequest],
    params: GenerationParams,
    cache_path: str | Path,
    progress: Callable[[int, int], None] | None = None,
    n: int = 1,
) -> tuple[GenerationResult, CachedBackend]:
    """``n`` completions per request through a write-through cache at ``cache_path`` (unless
    ``backend`` already is a cache), calling ``progress(done, total)`` as requests finish.

    Returns:
        The result and the cache wrapper (its ``identity`` is the inner backend's).
    """
    cached = backend if isinstance(backend, CachedBackend) else CachedBackend(backend=backend, cache_path=str(cache_path))
    done = 0

    def tick(req, outcome) -> None:
        nonlocal done
        done += 1
        if progress:
            progress(done, len(requests))

    with cached:
        return cached.generate(requests, n, params, on_result=tick), cached
