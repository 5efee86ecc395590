"""One registry of open sessions for every server of worldforge.

The search server (HTTP and MCP sessions), Search-R1's ``/retrieve``, and the OpenAI-compatible
and MCP recording proxies all keep sessions by a string key. Each session has a last-use time
and an in-flight count. The registry applies the same three rules to all of them:

* **idle expiry**: a session is idle when nothing is in flight and its last use ended
  ``idle_timeout`` seconds ago or more. A session in use is never idle, however long its call
  takes. So a slow step never has its session stored, and split in two, under it.
* **a bound**: at most ``max_sessions`` are open. A full registry either refuses a new session
  (:class:`SessionLimit`) or takes out its least recently used idle one, as an LRU cache would.
* **ownership**: the registry only holds sessions. What a session leaves behind when it is taken
  out (an episode logged, a recording stored, an upstream connection closed) is the owner's
  work. Every method that takes sessions out returns them to the owner, and runs no callback
  under the registry's lock.

A session in use is one whose :attr:`Session.busy` count is above zero (:meth:`SessionRegistry.using`),
or whose :attr:`Session.lock` is held. The lock is there for owners that step a session in a
worker thread, one step at a time.

The registry's own lock is a :class:`threading.Lock`, held only for dictionary work, so
asyncio servers use it too: they never hold it across an ``await``. The OpenEnv server is the
exception. Its WebSocket sessions live in the ``openenv`` library's own server, which worldforge
configures with the same limit and idle timeout (``WORLDFORGE_SESSION_IDLE_S``) but does not hold.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from worldforge.errors import WorldforgeError

DEFAULT_IDLE_S = 600.0
"""Seconds an idle session lives when a caller names no timeout (the servers' entry points pass
``WORLDFORGE_SESSION_IDLE_S``, whose default this is too)."""

T = TypeVar("T")
S = TypeVar("S", bound="Session | None")


class SessionLimit(WorldforgeError):
    """A new session was refused: ``max_sessions`` are open (a registry that does not evict)."""


@dataclass(eq=False)
class Session(Generic[T]):
    """One open session of a :class:`SessionRegistry`.

    Attributes:
        key: the registry key (a session id, a header value, a downstream session id).
        value: what the owner keeps per session (an environment, a recording, an upstream client).
        last: ``time.monotonic()`` when its last use ended, or when it was opened.
        busy: uses in flight (:meth:`SessionRegistry.using`).
        lock: held while the owner steps the session, so its steps run one at a time. A held
            lock also counts as in use.
        closed: set when the registry takes the session out (:meth:`SessionRegistry.pop` and the
            other ways out). A use that got the session before then and waited for :attr:`lock`
            finds it closed once it holds the lock, and refuses the call: what the owner stored
            of a closed session is all it did.
    """

    key: str
    value: T
    last: float = field(default_factory=time.monotonic)
    busy: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    closed: bool = False

    def in_use(self) -> bool:
        """Whether a use is in flight (counted, or holding :attr:`lock`)."""
        return self.busy > 0 or self.lock.locked()


def _closing(session: S) -> S:
    """``session`` (or ``None``) marked :attr:`Session.closed`, as the registry takes it out."""
    if session is not None:
        session.closed = True
    return session


class SessionRegistry(Generic[T]):
    """Open sessions by key, with idle expiry and a bound (see the module docstring).

    Args:
        max_sessions: sessions open at most (``>= 1``).
        idle_timeout: seconds a session may stay idle before :meth:`pop_idle` takes it out;
            ``None``: sessions never expire (only eviction or :meth:`pop` take them out).
        evict: what a full registry does with a new session. ``False``: :meth:`open` raises
            :class:`SessionLimit`. ``True``: it takes out the least recently used session that is
            not in use, and returns it.
        clock: the time source (``time.monotonic``); tests pass their own.

    Raises:
        ValueError: ``max_sessions < 1`` or a negative ``idle_timeout``.
    """

    def __init__(self, max_sessions: int, idle_timeout: float | None = None, *, evict: bool = False,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if max_sessions < 1:
            raise ValueError(f"max_sessions must be at least 1, not {max_sessions}")
        if idle_timeout is not None and idle_timeout < 0:
            raise ValueError(f"idle_timeout must be zero or more seconds, not {idle_timeout}")
        self.max_sessions, self.idle_timeout, self.evict, self.clock = max_sessions, idle_timeout, evict, clock
        self._items: OrderedDict[str, Session[T]] = OrderedDict()  # least recently used first
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def keys(self) -> list[str]:
        """The open sessions' keys, least recently used first (a copy)."""
        with self._lock:
            return list(self._items)

    def sessions(self) -> list[Session[T]]:
        """The open sessions, least recently used first (a copy of the list, not of the sessions)."""
        with self._lock:
            return list(self._items.values())

    def get(self, key: str) -> Session[T] | None:
        """The session ``key`` without touching its clock; ``None`` when there is none."""
        return self._items.get(key)

    def touch(self, key: str) -> Session[T] | None:
        """The session ``key``, marked just used (its idle clock restarts); ``None`` when there is none."""
        with self._lock:
            session = self._items.get(key)
            if session is not None:
                session.last = self.clock()
                self._items.move_to_end(key)
            return session

    def open(self, key: str, value: T) -> tuple[Session[T], list[Session[T]]]:
        """Register ``value`` under ``key``, or keep the session already there.

        Returns:
            ``(session, taken_out)``: the session under ``key`` (the existing one when another
            caller opened it first, so two racing callers share one), and the session evicted
            to make room (an evicting registry only; the owner closes it).

        Raises:
            SessionLimit: the registry is full and does not evict, or every open session is in use.
        """
        with self._lock:
            return self._open_locked(key, value)

    @staticmethod
    def _idle(session: Session[T], at: float, limit: float) -> bool:
        """The idleness rule: nothing in flight, and the last use ended ``limit`` seconds before ``at`` or more."""
        return not session.in_use() and at - session.last >= limit

    def _open_locked(self, key: str, value: T) -> tuple[Session[T], list[Session[T]]]:
        """:meth:`open` with the registry's lock held."""
        existing = self._items.get(key)
        if existing is not None:
            existing.last = self.clock()
            self._items.move_to_end(key)
            return existing, []
        taken: list[Session[T]] = []
        if len(self._items) >= self.max_sessions:
            victim = next((s for s in self._items.values() if not s.in_use()), None) if self.evict else None
            if victim is None:
                raise SessionLimit(f"too many open sessions ({self.max_sessions}); close some first")
            taken.append(_closing(self._items.pop(victim.key)))
        session = Session(key, value, last=self.clock())
        self._items[key] = session
        return session, taken

    def acquire(self, key: str, factory: Callable[[], T] | None = None) -> tuple[Session[T], list[Session[T]]]:
        """Mark the session ``key`` in use until :meth:`release`, its idle clock restarted; open it
        with ``factory()`` when there is none. For a use that does not fit one block (a streamed
        reply released when its stream ends); otherwise :meth:`using`.

        Args:
            key: the session.
            factory: makes the session's value when there is no session ``key`` (it runs outside
                the registry's lock, so it may be slow); ``None``: a missing session raises ``KeyError``.

        Returns:
            ``(session, taken_out)`` as :meth:`open`.

        Raises:
            KeyError: no session ``key`` and no ``factory``.
            SessionLimit: as :meth:`open`; whatever ``factory`` raises.
        """
        with self._lock:
            session, taken = self._items.get(key), []
            if session is not None:
                session.last = self.clock()
                self._items.move_to_end(key)
                session.busy += 1  # counted before the lock is let go: no expiry can take it in between
        if session is None:
            if factory is None:
                raise KeyError(key)
            value = factory()
            with self._lock:
                session, taken = self._open_locked(key, value)
                session.busy += 1
        return session, taken

    def release(self, session: Session[T]) -> None:
        """End one use of ``session`` (:meth:`acquire`): its idle clock counts from now."""
        with self._lock:
            session.busy = max(0, session.busy - 1)
            session.last = self.clock()

    @contextlib.contextmanager
    def using(self, key: str, factory: Callable[[], T] | None = None) -> Iterator[tuple[Session[T], list[Session[T]]]]:
        """:meth:`acquire` for the block, :meth:`release` on exit: the idle clock counts from the
        end of the call, however long it took.

        Yields:
            ``(session, taken_out)`` as :meth:`open`.

        Raises:
            KeyError: no session ``key`` and no ``factory``.
            SessionLimit: as :meth:`open`.
        """
        session, taken = self.acquire(key, factory)
        try:
            yield session, taken
        finally:
            self.release(session)

    def idle(self, now: float | None = None, idle_timeout: float | None = None) -> list[str]:
        """Keys of the sessions idle for ``idle_timeout`` seconds or more (default: the registry's;
        none when both are ``None``), left open: for owners whose close must ``await`` and who
        take each one out with :meth:`pop_if_idle` as they close it."""
        with self._lock:
            return self._idle_keys(now, self.idle_timeout if idle_timeout is None else idle_timeout)

    def _idle_keys(self, now: float | None, limit: float | None) -> list[str]:
        """:meth:`idle` with the registry's lock held."""
        if limit is None:
            return []
        at = self.clock() if now is None else now
        return [k for k, s in self._items.items() if self._idle(s, at, limit)]

    def pop(self, key: str) -> Session[T] | None:
        """Take the session ``key`` out (closed by its owner); ``None`` when there is none."""
        with self._lock:
            return _closing(self._items.pop(key, None))

    def pop_if_idle(self, key: str, idle_timeout: float | None = None, now: float | None = None) -> Session[T] | None:
        """Take the session ``key`` out only if it is still idle (checked under the lock), for owners
        that list :meth:`idle` keys first and close them one by one with ``await`` in between: a
        request that came for the session meanwhile keeps it open.

        Args:
            key: the session.
            idle_timeout: seconds idle at least (default: the registry's; ``None`` for both: never).
            now: the time to judge by (default: the registry's clock).

        Returns:
            The session taken out; ``None`` when there is none, or it is in use or no longer idle.
        """
        limit = self.idle_timeout if idle_timeout is None else idle_timeout
        if limit is None:
            return None
        with self._lock:
            session = self._items.get(key)
            at = self.clock() if now is None else now
            if session is None or not self._idle(session, at, limit):
                return None
            return _closing(self._items.pop(key))

    def pop_all(self) -> list[Session[T]]:
        """Take every session out (a server stopping), least recently used first."""
        with self._lock:
            taken, self._items = [_closing(s) for s in self._items.values()], OrderedDict()
            return taken

    def pop_idle(self, now: float | None = None) -> list[Session[T]]:
        """Take out the sessions idle for ``idle_timeout`` seconds or more (none when it is ``None``).

        A session in use is never taken, however old its last use.
        """
        with self._lock:
            return [_closing(self._items.pop(k)) for k in self._idle_keys(now, self.idle_timeout)]
