"""The OpenEnv adapter: the Environment in process, then the real server (the CLI, setsid, loopback) with OpenEnv's client."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import polars as pl
import pytest

from tests.conftest import ROOT
from tests.rl.conftest import WORLD
from tests.servers import CliServer
from worldforge.errors import WorldforgeError
from worldforge.net import free_port
from worldforge.rl.env import EpisodeOver, scripted_answer
from worldforge.rl.openenv import TOOLS, RemoteSearchWorld, SearchAction, SearchObservation, SearchState, SearchWorldClient, SearchWorldEnvironment
from worldforge.trajectories.episodes import read_episodes


def _tasks(rl_tasks, n: int) -> list:
    """``n`` tasks of different kinds, in a fixed order (the ids sort by kind)."""
    by_kind: dict[str, list] = {}
    for tid in sorted(rl_tasks):
        by_kind.setdefault(rl_tasks[tid].extra["kind"], []).append(rl_tasks[tid])
    picked = [ts[0] for ts in by_kind.values()]
    picked += [t for ts in by_kind.values() for t in ts[1:]]
    return picked[:n]


# -- in process ----------------------------------------------------------------------------

def test_environment_runs_an_episode_through_the_core(rl_wh, rl_tasks):
    task = _tasks(rl_tasks, 1)[0]
    env = SearchWorldEnvironment(world=WORLD, warehouse=rl_wh, record=False)
    obs = env.reset(task=task.instance_id, episode_id="ep-1")
    assert isinstance(obs, SearchObservation) and not obs.done and obs.reward is None
    assert task.question in obs.text and [t["function"]["name"] for t in obs.tools] == [t["function"]["name"] for t in TOOLS]
    assert env.state.episode_id == "ep-1" and env.state.task == task.instance_id and not env.state.done

    seen: list[SearchObservation] = []

    def call(name: str, args: dict) -> str:
        o = env.step(SearchAction(tool=name, arguments=args))
        assert not o.done and o.reward is None and o.tool == name
        seen.append(o)
        return o.text

    answer = scripted_answer(task, call)
    assert seen, "the oracle made no tool call"
    assert env.state.step_count == len(seen) == env.state.tool_calls == env.core.tool_calls
    final = env.step(SearchAction(tool="submit", arguments={"answer": answer}))
    assert final.done and final.reward == pytest.approx(1.0) and final.info["f1_by_item"] == pytest.approx(1.0)
    assert env.state.done and env.state.reward == final.reward and env.state.step_count == len(seen) + 1
    with pytest.raises(EpisodeOver):
        env.step(SearchAction(tool="web_search", arguments={"query": "anything"}))


def test_step_async_answers_tools_on_the_event_loop_and_submits_on_a_worker_thread(rl_wh, rl_tasks, monkeypatch):
    """OpenEnv's server awaits step_async instead of running step on a thread: a tool call runs inline, submit (it writes
    the episode) on a worker thread, and both give what step gives."""
    import asyncio
    import threading

    task = _tasks(rl_tasks, 1)[0]
    sync, inline = (SearchWorldEnvironment(world=WORLD, warehouse=rl_wh, record=False) for _ in range(2))
    sync.reset(task=task.instance_id, seed=2)
    inline.reset(task=task.instance_id, seed=2)
    where: list[tuple[str, bool]] = []
    step = SearchWorldEnvironment.step

    def spy(self, action, *args, **kwargs):
        if self is inline:
            where.append((action.tool, threading.current_thread() is threading.main_thread()))
        return step(self, action, *args, **kwargs)

    monkeypatch.setattr(SearchWorldEnvironment, "step", spy)
    loop = asyncio.new_event_loop()
    try:
        def call(name: str, args: dict) -> str:
            want = sync.step(SearchAction(tool=name, arguments=args))
            got = loop.run_until_complete(inline.step_async(SearchAction(tool=name, arguments=args)))
            assert got.text == want.text and got.error == want.error and got.fired == want.fired
            return want.text

        answer = scripted_answer(task, call)
        want = sync.step(SearchAction(tool="submit", arguments={"answer": answer}))
        final = loop.run_until_complete(inline.step_async(SearchAction(tool="submit", arguments={"answer": answer})))
        with pytest.raises(EpisodeOver):
            loop.run_until_complete(inline.step_async(SearchAction(tool="web_search", arguments={"query": "anything"})))
    finally:
        loop.close()
    assert final.done and final.reward == want.reward == pytest.approx(1.0)
    tools = [t for t, _ in where]
    assert tools[-2:] == ["submit", "web_search"] and len(tools) > 2
    assert all(on_loop for _, on_loop in where[:-2]) and not any(on_loop for _, on_loop in where[-2:])


def test_a_wrong_answer_earns_less_and_submit_needs_an_answer(rl_wh, rl_tasks):
    task = _tasks(rl_tasks, 1)[0]
    env = SearchWorldEnvironment(world=WORLD, warehouse=rl_wh, record=False)
    env.reset(task=task.instance_id)
    bad = env.step(SearchAction(tool="submit", arguments={"text": "no answer key"}))
    assert bad.error and not bad.done and not env.state.done  # the episode goes on
    final = env.step(SearchAction(tool="submit", arguments={"answer": "I do not know."}))
    assert final.done and final.reward == pytest.approx(0.0) and final.reward == env.core.reward


def test_reset_without_a_task_picks_one_by_seed_and_bad_arguments_are_clear(rl_wh, rl_tasks):
    env = SearchWorldEnvironment(world=WORLD, warehouse=rl_wh, record=False)
    ids = sorted(rl_tasks)
    assert env.reset(seed=1) and env.state.task == ids[1] and env.state.seed == 1
    env.reset(seed=len(ids) + 2)
    assert env.state.task == ids[2]
    with pytest.raises(WorldforgeError, match="has no task 'no-such-task'"):
        env.reset(task="no-such-task")
    with pytest.raises(WorldforgeError, match="no such world"):
        env.reset(world="no_such_world", task=ids[0])
    with pytest.raises(WorldforgeError, match=r"unknown argument\(s\) \['tsak'\]"):
        env.reset(tsak=ids[0])
    with pytest.raises(WorldforgeError, match="needs world"):
        SearchWorldEnvironment(warehouse=rl_wh, record=False).reset(task=ids[0])


def test_deep_questions_reset_by_id_or_by_family_and_earn_their_correctness(rl_wh):
    from worldforge.rl import world_tasks

    deep = world_tasks(WORLD, rl_wh, "deep")
    ids = sorted(deep)
    env = SearchWorldEnvironment(world=WORLD, warehouse=rl_wh, record=False)
    obs = env.reset(seed=3, family="deep")  # no task: the seed-th deep question
    assert env.state.task == ids[3] and "Exact Answer:" in obs.task_text
    answer = scripted_answer(deep[ids[3]], lambda name, args: env.step(SearchAction(tool=name, arguments=args)).text)
    final = env.step(SearchAction(tool="submit", arguments={"answer": answer}))
    assert final.done and final.reward == 1.0
    env.reset(task=ids[0])  # by id
    final = env.step(SearchAction(tool="submit", arguments={"answer": "Explanation: -\nExact Answer: Nobody At All\nConfidence: 1%"}))
    assert final.done and final.reward == 0.0
    env.reset(seed=0, family="both")
    assert env.state.task == sorted(world_tasks(WORLD, rl_wh, "both"))[0]
    with pytest.raises(WorldforgeError, match="unknown task family"):
        env.reset(family="narrow")
    with pytest.raises(WorldforgeError, match="unknown task family"):  # checked with a task named too
        env.reset(task=ids[0], family="narrow")


def test_the_episode_id_reaches_the_episode_store(rl_wh, rl_tasks):
    env = SearchWorldEnvironment(WORLD, rl_wh)
    task = _tasks(rl_tasks, 1)[0]
    obs = env.reset(task=task.instance_id, episode_id="openenv-ep-42")
    assert env.state.episode_id == "openenv-ep-42" and obs.task_text.startswith(task.question) and "Tools:" not in obs.task_text
    env.step(SearchAction(tool="web_search", arguments={"query": "phone"}))
    env.step(SearchAction(tool="submit", arguments={"answer": "| x |\n|---|\n| 1 |"}))
    eps = read_episodes(rl_wh).filter(episode_id="openenv-ep-42")
    assert eps["agent"].to_list() == ["openenv"] and eps["task_id"].to_list() == [task.instance_id] and eps["finished"].to_list() == [True]


def test_the_client_parses_openenv_wire_format():
    client = SearchWorldClient(base_url="http://127.0.0.1:1")
    assert client._step_payload({"tool": "web_search", "arguments": {"query": "q"}})["tool"] == "web_search"
    with pytest.raises(ValueError):
        client._step_payload({"tool": "rm -rf", "arguments": {}})
    result = client._parse_result({"observation": {"text": "t", "tool": "submit", "info": {"f1_by_item": 0.5}}, "reward": 0.5, "done": True})
    assert result.done and result.reward == 0.5 and result.observation.reward == 0.5 and result.observation.info == {"f1_by_item": 0.5}
    assert client._parse_state({"episode_id": "e", "step_count": 2, "task": "x"}) == SearchState(episode_id="e", step_count=2, task="x")


# -- the real server -----------------------------------------------------------------------

class Server(CliServer):
    """``worldforge serve openenv`` in its own session on a free loopback port, stopped by PID."""

    def __init__(self, warehouse, log_path, *extra: str):
        # importing openenv-core (gradio, mcp) takes seconds
        super().__init__("openenv", "--world", WORLD, "--warehouse", str(warehouse), *extra, log=log_path, startup_s=120)
        self.log_path = log_path


@pytest.fixture(scope="module")
def server(rl_wh, tmp_path_factory):
    s = Server(rl_wh, tmp_path_factory.mktemp("openenv-server") / "stderr.log")
    try:
        yield s
    finally:
        s.stop()
    assert s.proc.poll() is not None


def _episode(url: str, task) -> tuple[float, bool, SearchState, int]:
    """One scripted episode through the OpenEnv client: (reward, done, final state, tool calls)."""
    calls = 0
    with SearchWorldClient(base_url=url).sync() as env:
        first = env.reset(task=task.instance_id)
        assert not first.done and task.question in first.observation.text

        def call(name: str, args: dict) -> str:
            nonlocal calls
            calls += 1
            return env.step(SearchAction(tool=name, arguments=args)).observation.text

        answer = scripted_answer(task, call)
        result = env.step(SearchAction(tool="submit", arguments={"answer": answer}))
        return result.reward, result.done, env.state(), calls


def test_a_scripted_episode_over_the_server_earns_full_reward(server, rl_wh, rl_tasks):
    task = _tasks(rl_tasks, 1)[0]
    reward, done, state, calls = _episode(server.url, task)
    assert reward == pytest.approx(1.0) and done
    assert state.task == task.instance_id and state.world == WORLD and state.done and state.reward == reward
    assert f"{server.url} (WebSocket ws://127.0.0.1:{server.port}/ws)" in server.log_path.read_text()  # the CLI printed its URL
    assert calls > 0 and state.step_count == calls + 1 and state.tool_calls == calls
    logged = read_episodes(rl_wh).filter(pl.col("episode_id") == state.episode_id)  # the rollout is a recorded episode
    assert logged.height == 1 and logged["agent"][0] == "openenv" and logged["task_id"][0] == task.instance_id
    assert logged["finished"][0] and logged["f1_by_item"][0] == pytest.approx(reward)


def test_a_deep_question_over_the_server_earns_its_correctness(server, rl_wh):
    from worldforge.rl import world_tasks

    deep = world_tasks(WORLD, rl_wh, "deep")
    task = deep[sorted(deep)[-1]]
    reward, done, state, calls = _episode(server.url, task)
    assert reward == 1.0 and done and state.task == task.instance_id and calls > 0
    remote = RemoteSearchWorld(server.url)  # TRL's shape over the server, reset by a prompt row of the deep family
    try:
        text = remote.reset(world=WORLD, seed=1, family="deep")
        assert "Exact Answer:" in text
        remote.submit(answer="Explanation: -\nExact Answer: Nobody At All\nConfidence: 1%")
        assert remote.get_reward() == 0.0
    finally:
        del remote


def test_concurrent_clients_get_independent_episodes(server, rl_tasks):
    a_task, b_task = _tasks(rl_tasks, 2)
    a, b = SearchWorldClient(base_url=server.url).sync(), SearchWorldClient(base_url=server.url).sync()
    with a, b:
        a.reset(task=a_task.instance_id)
        b.reset(task=b_task.instance_id)
        a.call("web_search", query=a_task.question[:60])
        a.call("dict_memory", operation="add", dict={"owner": "a"})
        b.call("dict_memory", operation="retrieve_all")
        sa, sb = a.state(), b.state()
        assert (sa.task, sb.task) == (a_task.instance_id, b_task.instance_id) and sa.episode_id != sb.episode_id
        assert (sa.step_count, sb.step_count) == (2, 1)
        assert "owner" not in b.call("dict_memory", operation="retrieve_all").observation.text  # b has its own memory
        assert "owner" in a.call("dict_memory", operation="retrieve_all").observation.text
        ended = a.step(SearchAction(tool="submit", arguments={"answer": "nothing"}))
        assert ended.done and not b.state().done  # ending a's episode leaves b's running

    with ThreadPoolExecutor(2) as pool:  # two whole episodes at once, each scored on its own
        results = list(pool.map(lambda t: _episode(server.url, t), _tasks(rl_tasks, 2)))
    assert [r[0] for r in results] == pytest.approx([1.0, 1.0]) and all(r[1] for r in results)
    assert {r[2].task for r in results} == {a_task.instance_id, b_task.instance_id}
    assert results[0][2].episode_id != results[1][2].episode_id


def test_sessions_the_clients_end_leave_no_traceback_on_the_server_log(server, rl_tasks):
    """OpenEnv closes the socket after the client's close; uvicorn logged that as an exception, a traceback a session."""
    task = _tasks(rl_tasks, 1)[0]
    for _ in range(4):
        with SearchWorldClient(base_url=server.url).sync() as env:
            env.reset(task=task.instance_id)
            env.call("dict_memory", operation="retrieve_all")
    with SearchWorldClient(base_url=server.url).sync() as env:  # answered after the server saw those sessions end
        assert env.reset(task=task.instance_id).observation.text.startswith(task.question)
    time.sleep(0.5)
    log = server.log_path.read_text()
    assert "Traceback" not in log and "Exception in ASGI application" not in log


def test_bad_resets_are_clear_errors_and_the_server_keeps_serving(server, rl_tasks):
    with SearchWorldClient(base_url=server.url).sync() as env:
        with pytest.raises(RuntimeError, match=r"has no task 'no-such-task'.*EXECUTION_ERROR"):
            env.reset(task="no-such-task")
        with pytest.raises(RuntimeError, match="no such world"):
            env.reset(world="no_such_world", task="x")
        with pytest.raises(RuntimeError, match="the episode is over"):
            env.call("web_search", query="before any reset")
        task = _tasks(rl_tasks, 1)[0]
        assert env.reset(task=task.instance_id).observation.text.startswith(task.question)  # same session still works
    r = httpx.post(server.url + "/reset", json={"task": "no-such-task"}, timeout=10)
    assert r.status_code == 400 and "has no task 'no-such-task'" in r.json()["error"]
    r = httpx.post(server.url + "/reset", json={"task": task.instance_id}, timeout=10)
    assert r.status_code == 200 and r.json()["observation"]["text"].startswith(task.question) and r.json()["done"] is False
    schema = httpx.get(server.url + "/schema", timeout=10).json()
    assert json.dumps(schema["action"]).count("web_extractor") >= 1
    assert httpx.get(server.url + "/health", timeout=5).status_code == 200


def test_the_trl_environment_shape_trains_through_the_server(server, rl_tasks):
    """What GRPOTrainer(environment_factory=...) does: probe public methods, reset(**row), call tools, get_reward()."""
    public = {n for n, _ in inspect.getmembers(RemoteSearchWorld, predicate=inspect.isfunction) if not n.startswith("_")}
    assert public == {"reset", "get_reward"} | {t["function"]["name"] for t in TOOLS}  # TRL exposes all but reset/get_reward as tools
    task = _tasks(rl_tasks, 2)[1]
    env = RemoteSearchWorld(server.url)
    try:
        text = env.reset(prompt=[{"role": "user", "content": "ignored"}], world=WORLD, task=task.instance_id)
        assert text.startswith("\n\n" + task.question) and "Tools:" not in text and env.get_reward() == 0.0  # TRL renders the tools
        answer = scripted_answer(task, lambda name, args: getattr(env, name)(**args))
        ack = env.submit(answer)
        assert ack.startswith("Answer submitted") and "1.0" not in ack and env.get_reward() == pytest.approx(1.0)  # the policy never sees the reward
        assert env.web_search("after the end").startswith("Error:") and "the episode is over" in env.web_search("again")
        env.reset(world=WORLD, task=task.instance_id)
        assert env.get_reward() == 0.0  # a new rollout starts unscored
        env.submit("| nothing |\n|---|\n| x |")
        assert env.get_reward() < 1.0
    finally:
        env._client.close()


def test_the_cli_refuses_a_missing_world_before_listening(rl_wh):
    port = free_port()
    proc = subprocess.run([sys.executable, "-m", "worldforge.cli", "serve", "openenv", "--world", "no_such_world", "--port", str(port),
                           "--warehouse", str(rl_wh)], cwd=ROOT, capture_output=True, text=True, timeout=60, start_new_session=True)
    assert proc.returncode == 2 and "no such world" in proc.stderr
