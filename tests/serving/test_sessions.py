"""The one session registry every server shares (worldforge.serving.sessions): idle expiry that
never takes a session in use, the bound (refuse or evict the least recently used idle one), and
one session for callers racing to open the same key."""

from __future__ import annotations

import threading

import pytest

from worldforge.serving.sessions import SessionLimit, SessionRegistry


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_an_idle_session_expires_after_its_timeout_and_not_before():
    clock = Clock()
    reg: SessionRegistry[str] = SessionRegistry(10, idle_timeout=5, clock=clock)
    reg.open("a", "A")
    clock.t = 2
    reg.open("b", "B")
    clock.t = 4.9
    assert reg.idle() == [] and reg.pop_idle() == []
    clock.t = 5
    assert reg.idle() == ["a"]  # looked at, left open
    assert [s.value for s in reg.pop_idle()] == ["A"] and reg.keys() == ["b"]
    clock.t = 6
    assert reg.touch("b") is not None  # used again: its clock restarts
    clock.t = 10.9
    assert reg.pop_idle() == []
    clock.t = 11
    assert [s.key for s in reg.pop_idle()] == ["b"] and len(reg) == 0
    assert SessionRegistry(1, idle_timeout=None, clock=clock).pop_idle() == []  # no timeout: never expires


def test_a_session_in_use_never_expires_and_its_idle_time_counts_from_the_end_of_the_use():
    clock = Clock()
    reg: SessionRegistry[str] = SessionRegistry(10, idle_timeout=5, clock=clock)
    with reg.using("slow", lambda: "S") as (session, taken):
        assert taken == [] and session.busy == 1
        clock.t = 100  # a call far longer than the timeout
        assert reg.pop_idle() == [] and reg.idle() == []
    assert session.busy == 0 and session.last == 100
    clock.t = 104
    assert reg.pop_idle() == []
    clock.t = 105
    assert [s.key for s in reg.pop_idle()] == ["slow"]

    held, _ = reg.open("stepping", "T")
    with held.lock:  # an owner stepping the session in a worker thread holds its lock
        clock.t = 500
        assert reg.pop_idle() == []
    assert [s.key for s in reg.pop_idle()] == ["stepping"]

    streamed, _ = reg.acquire("stream", lambda: "U")  # a use that outlives one block: released later
    clock.t = 900
    assert reg.idle() == []
    reg.release(streamed)
    clock.t = 905
    assert reg.idle() == ["stream"]


def test_a_full_registry_refuses_or_evicts_the_least_recently_used_idle_session():
    clock = Clock()
    strict: SessionRegistry[int] = SessionRegistry(2, clock=clock)
    strict.open("a", 1)
    strict.open("b", 2)
    with pytest.raises(SessionLimit, match=r"too many open sessions \(2\)"):
        strict.open("c", 3)
    assert strict.keys() == ["a", "b"]
    assert strict.open("a", 99)[0].value == 1  # an open key is reused, never counted twice

    lru: SessionRegistry[int] = SessionRegistry(2, evict=True, clock=clock)
    lru.open("a", 1)
    lru.open("b", 2)
    lru.touch("a")  # b is now the least recently used
    session, taken = lru.open("c", 3)
    assert session.value == 3 and [s.key for s in taken] == ["b"] and lru.keys() == ["a", "c"]
    with lru.using("a"):  # in use: never evicted, however old
        _, taken = lru.open("d", 4)
        assert [s.key for s in taken] == ["c"]
        with lru.using("d"), pytest.raises(SessionLimit):
            lru.open("e", 5)  # every session is answering
    assert lru.keys() == ["a", "d"]


def test_a_missing_session_without_a_factory_is_a_key_error_and_bad_bounds_are_refused():
    reg: SessionRegistry[str] = SessionRegistry(1)
    with pytest.raises(KeyError), reg.using("nobody"):
        pass
    assert reg.touch("nobody") is None and reg.pop("nobody") is None
    with pytest.raises(ValueError, match="max_sessions"):
        SessionRegistry(0)
    with pytest.raises(ValueError, match="idle_timeout"):
        SessionRegistry(1, idle_timeout=-1)


def test_callers_racing_to_open_one_key_share_one_session_and_a_reaper_never_takes_it_in_use():
    reg: SessionRegistry[object] = SessionRegistry(100, idle_timeout=0)
    start, stop = threading.Barrier(9), threading.Event()
    seen: list[object] = []
    wrong: list[str] = []
    reaped: list = []

    def worker() -> None:
        start.wait()
        for _ in range(300):
            with reg.using("k", object) as (session, _):
                if reg.get("k") is not session:  # taken out (and maybe replaced) while in use
                    wrong.append("taken while in use")
                seen.append(session)

    def reaper() -> None:  # idle_timeout 0: takes the session the moment no use holds it
        start.wait()
        while not stop.is_set():
            for s in reg.pop_idle():
                if s.busy:
                    wrong.append("reaped busy")
                reaped.append(s)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    reaping = threading.Thread(target=reaper)
    for t in [*threads, reaping]:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    reaping.join()
    assert wrong == [] and len(seen) == 2400
    assert all(s.busy == 0 for s in seen)  # every use was handed back
    # every session a use held was either reaped once it was idle, or is still open
    assert {id(s) for s in seen} == {id(s) for s in reaped} | {id(s) for s in reg.sessions()}


def test_pop_if_idle_keeps_a_session_a_request_came_for_after_the_idle_list_was_taken():
    clock = Clock()
    reg: SessionRegistry[str] = SessionRegistry(10, idle_timeout=5, clock=clock)
    reg.open("a", "A")
    reg.open("b", "B")
    clock.t = 6
    listed = reg.idle()
    assert listed == ["a", "b"]
    reg.touch("b")  # a request for b while the owner was closing a (an await)
    with reg.using("a"):
        assert reg.pop_if_idle("a") is None  # in use now
    assert reg.pop_if_idle("b") is None and reg.pop_if_idle("nobody") is None
    clock.t = 11
    assert reg.pop_if_idle("b") is not None and reg.pop_if_idle("a", idle_timeout=5) is not None and len(reg) == 0
