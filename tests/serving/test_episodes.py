"""The episode service (worldforge.serving.episodes): one owner of an episode's life for every entry point."""

from __future__ import annotations

import errno

import pytest

from tests.conftest_worlds import built_world
from worldforge.errors import WorldforgeError
from worldforge.rl.env import SearchWorldEnv
from worldforge.serving.episodes import EpisodeNotLogged, EpisodeService, NoSuchSession, UnknownTarget, world_tasks
from worldforge.simenv.env import EpisodeOver
from worldforge.tasks.store import build_tasks
from worldforge.trajectories.episodes import read_episode_tables, settle_episode_log
from worldforge.warehouse.layout import Warehouse

WORLD = "esports_2031"
SEARCH = {"name": "web_search", "arguments": {"query": "tournament prize pool"}}


@pytest.fixture(scope="module")
def built(specs, tmp_path_factory):
    """esports_2031 with its corpus and tasks (one scenario), built once for the module."""
    wh = tmp_path_factory.mktemp("episodes-wh")
    build_tasks(built_world(specs[WORLD], wh))
    return wh


@pytest.fixture
def wh(built, tmp_path) -> Warehouse:
    """A fresh warehouse linking the built world: each test its own episode log and store."""
    for p in built.iterdir():
        if p.name.startswith(WORLD):
            (tmp_path / p.name).symlink_to(p)
    return Warehouse.of(tmp_path)


def _stored(wh: Warehouse) -> dict[str, int]:
    """``episode_id -> steps`` of the episode store (the log drained first)."""
    settle_episode_log(wh)
    tables = read_episode_tables(wh)
    steps = dict(tables["steps"].group_by("episode_id").len().iter_rows())
    return {eid: steps.get(eid, 0) for eid in tables["episodes"]["episode_id"].to_list()}


def _failing_log(monkeypatch):
    """Make the episode log refuse every write (ENOSPC); returns the function that mends it."""
    import worldforge.trajectories.episodes.log as episode_log

    real = episode_log._append_durably
    monkeypatch.setattr(episode_log, "_append_durably", lambda *a: (_ for _ in ()).throw(OSError(errno.ENOSPC, "No space left on device")))
    return lambda: monkeypatch.setattr(episode_log, "_append_durably", real)


def test_opening_checks_world_task_and_scenario(wh):
    service = EpisodeService(wh, agent="test")
    tasks = world_tasks(WORLD, wh, "both")
    scenario_task = next(t for t in tasks.values() if t.extra.get("scenario"))
    with pytest.raises(UnknownTarget, match="no such world"):
        service.environment("atlantis_1999")
    with pytest.raises(UnknownTarget, match="has no task 'nope'"):
        service.environment(WORLD, task="nope")
    with pytest.raises(UnknownTarget, match="no scenario 'nowhere'"):
        service.environment(WORLD, scenario="nowhere")
    with pytest.raises(WorldforgeError):
        service.environment(WORLD, perturbations="not a perturbation at all %%%")
    # a task's own scenario is searched by default; Search-R1's /retrieve keeps the server's corpus
    assert service.environment(WORLD, task=scenario_task.instance_id).scenario == scenario_task.extra["scenario"]
    assert service.environment(WORLD, task=scenario_task.instance_id, task_scenario=False).scenario is None


def test_a_key_opened_again_after_its_episode_closed_gets_a_new_episode_id(wh):
    """A protocol whose clients never say an episode ended (verifiers) reopens a rollout's key after an
    expiry: the two halves are two episodes in the store, neither replaces the other."""
    clock = [0.0]
    service = EpisodeService(wh, agent="verifiers", idle_timeout=10, max_sessions=4, evict=True, clock=lambda: clock[0])
    open_it = lambda: service.environment(WORLD, session_id="verifiers:r1")  # noqa: E731
    for _ in range(3):
        service.step("r1", SEARCH, open_it)
    clock[0] = 100.0
    assert service.reap() == 1
    service.step("r1", SEARCH, open_it)
    service.close_all()
    assert _stored(wh) == {"verifiers:r1": 3, "verifiers:r1-2": 1}


def test_an_evicted_episode_is_logged(wh):
    service = EpisodeService(wh, agent="verifiers", max_sessions=2, evict=True)
    for key in ("a", "b", "c"):  # the third evicts the least recently used: a
        service.step(key, SEARCH, lambda key=key: service.environment(WORLD, session_id=f"v:{key}"))
    assert service.registry.keys() == ["b", "c"]
    assert _stored(wh) == {"v:a": 1}


def test_a_second_episode_under_an_open_key_is_refused(wh):
    service = EpisodeService(wh, agent="test")
    first = service.open(WORLD, key="k")
    with pytest.raises(WorldforgeError, match="already open under 'k'"):
        service.add(service.environment(WORLD), "k")
    with service.stepping("k") as env:
        assert env is first


def test_a_call_after_a_close_is_refused_and_nothing_is_lost(wh):
    service = EpisodeService(wh, agent="test")
    env = service.open(WORLD, key="k", session_id="e1")
    service.step("k", SEARCH)
    assert service.close("k") and not service.close("k")
    with pytest.raises(NoSuchSession):
        service.step("k", SEARCH)
    assert _stored(wh) == {"e1": 1} and env.turn == 1


def test_an_episode_the_log_refused_is_logged_by_the_next_close_of_its_key(wh, monkeypatch):
    service = EpisodeService(wh, agent="test")
    service.open(WORLD, key="k", session_id="e1")
    service.step("k", SEARCH)
    mend = _failing_log(monkeypatch)
    with pytest.raises(EpisodeNotLogged):
        service.close("k")
    assert service.health()["episode_log"] == "full" and service.health()["episodes_waiting"] == 1
    with pytest.raises(EpisodeNotLogged):  # a retried close is no success while the log still fails
        service.close("k")
    mend()
    assert service.close("k")  # the kept episode, logged now
    assert _stored(wh) == {"e1": 1} and service.health() == {"episode_log": "ok", "episodes_waiting": 0}


def test_search_world_env_after_a_refused_log_ends_its_episode_and_logs_it_at_the_next_reset(wh, monkeypatch):
    task = sorted(world_tasks(WORLD, wh))[0]
    env = SearchWorldEnv(wh)
    env.reset(world=WORLD, task=task, episode_id="first")
    env.web_search(query="tournament")
    mend = _failing_log(monkeypatch)
    with pytest.raises(EpisodeNotLogged):
        env.close()
    with pytest.raises(EpisodeOver):  # the episode is over: a step is refused, as after any close
        env.web_search(query="again")
    mend()
    env.reset(world=WORLD, task=task, episode_id="second")  # logs the kept episode first
    env.web_search(query="tournament")
    env.close()
    assert _stored(wh) == {"first": 1, "second": 1}
