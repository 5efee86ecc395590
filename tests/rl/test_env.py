"""The RL core: SearchWorldEnv episodes, rewards, recording, lazy worlds; the HTTP submit on the same core."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from tests.rl.conftest import WORLD
from worldforge.errors import WarehouseError, WorldforgeError
from worldforge.rl import EpisodeOver, RewardConfig, SearchWorldEnv, parse_perturbations, world_tasks
from worldforge.rl.env import scripted_answer
from worldforge.serving.search import create_app
from worldforge.trajectories.episodes import read_episodes
from worldforge.warehouse import Warehouse


def _solve(env: SearchWorldEnv, task) -> str:
    return scripted_answer(task, lambda name, args: env.step(name, args).text)


def test_constructible_without_arguments(rl_wh, monkeypatch):
    monkeypatch.setenv("WORLDFORGE_WAREHOUSE", str(rl_wh))
    env = SearchWorldEnv()
    assert env.warehouse.root == rl_wh.root.resolve()  # an edge: the configured warehouse
    task = next(iter(world_tasks(WORLD, rl_wh)))
    assert "submit" in env.reset(world=WORLD, task=task)


def test_oracle_reaches_reward_one_and_the_episode_is_recorded(rl_wh, rl_tasks):
    env = SearchWorldEnv(rl_wh, agent="rl-test")
    ids = sorted(rl_tasks)[::10]
    for tid in ids:
        first = env.reset(world=WORLD, task=tid, seed=3, perturbations="default")
        assert rl_tasks[tid].question in first and "web_search" in first
        assert env.submit(_solve(env, rl_tasks[tid])) == 1.0
        assert env.reward == 1.0 and env.done and env.info["f1_by_row"] == 1.0
        assert set(env.info["by_column"]) == set(rl_tasks[tid].required) and min(env.info["by_column"].values()) == 1.0
        assert env.info["tool_calls"] == env.tool_calls > 0
    eps = read_episodes(rl_wh).filter(agent="rl-test")
    assert sorted(eps["task_id"].to_list()) == ids
    assert eps["f1_by_item"].to_list() == [1.0] * len(ids) and all(eps["finished"])


def test_wrong_and_malformed_answers_score_below_one(rl_wh, rl_tasks):
    env = SearchWorldEnv(rl_wh, record=False)
    tid = sorted(rl_tasks)[0]
    env.reset(world=WORLD, task=tid)
    right = _solve(env, rl_tasks[tid])
    lines = right.splitlines()
    wrong = "\n".join(lines[:2] + lines[3:])  # one gold row left out
    assert 0.0 < env.submit(wrong) < 1.0
    env.reset(world=WORLD, task=tid)
    assert env.submit("I do not know.") == 0.0 and env.info["format_ok"] is False


def test_per_column_scores_single_out_the_wrong_column(rl_wh, rl_tasks):
    from worldforge.tasks.scorer import render_markdown_table

    task = next(rl_tasks[t] for t in sorted(rl_tasks) if len(rl_tasks[t].gold) >= 2 and set(rl_tasks[t].required) - set(rl_tasks[t].unique_columns))
    wrong_col = next(c for c in task.required if c not in task.unique_columns)
    rows = [dict(r) for r in task.gold]
    rows[0][wrong_col] = "not the value"
    env = SearchWorldEnv(rl_wh, record=False)
    env.reset(world=WORLD, task=task.instance_id)
    reward = env.submit(render_markdown_table(task.required, rows))
    by_col = env.info["by_column"]
    assert by_col[wrong_col] == pytest.approx(1 - 1 / len(rows)) and 0 < reward < 1
    assert all(v == 1.0 for c, v in by_col.items() if c != wrong_col)


def test_shaped_reward(rl_wh, rl_tasks):
    env = SearchWorldEnv(rl_wh, record=False, reward=RewardConfig(format_reward=0.5, tool_call_penalty=0.01))
    tid = sorted(rl_tasks)[1]
    env.reset(world=WORLD, task=tid)
    answer = _solve(env, rl_tasks[tid])
    calls = env.tool_calls
    assert env.submit(answer) == pytest.approx(1.0 + 0.5 - 0.01 * calls)
    with pytest.raises(ValueError):
        RewardConfig(metric="accuracy")


def test_tools_after_the_end_and_before_a_reset_raise(rl_wh, rl_tasks):
    env = SearchWorldEnv(rl_wh, record=False)
    with pytest.raises(EpisodeOver):
        env.web_search(query="phone")
    env.reset(world=WORLD, task=sorted(rl_tasks)[0])
    env.submit("| x |\n|---|\n| 1 |")
    with pytest.raises(EpisodeOver):
        env.web_extractor(url="https://example.com")
    with pytest.raises(EpisodeOver):
        env.submit("again")


def test_tool_call_budget(rl_wh, rl_tasks):
    env = SearchWorldEnv(rl_wh, record=False, max_tool_calls=2)
    env.reset(world=WORLD, task=sorted(rl_tasks)[0])
    env.web_search(query="phone")
    env.dict_memory(operation="retrieve_all")
    obs = env.step("web_search", {"query": "phone"})
    assert obs.error and "budget" in obs.text and env.tool_calls == 3


def test_unfinished_episode_is_logged_on_reset(rl_wh, rl_tasks):
    env = SearchWorldEnv(rl_wh, agent="rl-unfinished")
    tid = sorted(rl_tasks)[2]
    env.reset(world=WORLD, task=tid)
    env.web_search(query="Samsung")
    env.reset(world=WORLD, task=tid)  # the first episode ends unfinished
    env.close()  # no step taken: nothing to log
    eps = read_episodes(rl_wh).filter(agent="rl-unfinished")
    assert eps.height == 1 and eps["finished"].to_list() == [False] and eps["f1_by_item"].to_list() == [None]


def test_clear_errors(rl_wh, rl_tasks):
    env = SearchWorldEnv(rl_wh, record=False)
    with pytest.raises(WarehouseError, match="no such world"):
        env.reset(world="atlantis_2099", task="x")
    with pytest.raises(WorldforgeError, match="has no task 'nope'"):
        env.reset(world=WORLD, task="nope")
    with pytest.raises(WorldforgeError, match="no scenario"):
        env.reset(world=WORLD, task=sorted(rl_tasks)[0], scenario="no_such_scenario")
    with pytest.raises(WorldforgeError, match="no perturbation recognised"):
        env.reset(world=WORLD, task=sorted(rl_tasks)[0], perturbations="make it rain")


def test_parse_perturbations():
    assert parse_perturbations(None).perturbations == [] and parse_perturbations("none").perturbations == []
    assert len(parse_perturbations("default").perturbations) >= 3
    assert [p.kind for p in parse_perturbations('[{"kind": "empty_results", "rate": 1.0}]').perturbations] == ["empty_results"]
    assert [p.kind for p in parse_perturbations("inject intermittent API errors").perturbations] == ["transient_error"]
    with pytest.raises(WorldforgeError, match="invalid perturbations"):
        parse_perturbations({"perturbations": [{"kind": "meteor", "rate": 1}]})
    with pytest.raises(WorldforgeError, match="not valid JSON"):
        parse_perturbations("{oops")


def test_perturbed_episodes_are_seeded(rl_wh, rl_tasks):
    tid = sorted(rl_tasks)[3]

    def run(seed: int) -> list[str]:
        env = SearchWorldEnv(rl_wh, record=False)
        env.reset(world=WORLD, task=tid, seed=seed, perturbations='[{"kind": "transient_error", "rate": 0.5}]')
        env.session.session_id = "fixed"  # decisions depend on the session id too
        return [env.web_search(query=q)[:40] for q in ("Samsung", "Apple", "Google", "phone", "launch", "price")]

    assert run(1) == run(1)
    assert any(t.startswith("Error") for t in run(1) + run(2))


def test_world_cache_is_bounded(rl_wh, rl_tasks, monkeypatch):
    import worldforge.corpus.index as corpus_index
    import worldforge.simenv.env as sim_env
    from worldforge.warehouse.cache import FileCache

    plain = next(t for t in sorted(rl_tasks) if not rl_tasks[t].extra.get("scenario"))
    shifted = next(t for t in sorted(rl_tasks) if rl_tasks[t].extra.get("scenario"))
    env = SearchWorldEnv(rl_wh, record=False)
    for size, expected in ((1, 1), (4, 2)):
        monkeypatch.setattr(sim_env, "_CORPORA", FileCache(maxsize=size))
        monkeypatch.setattr(corpus_index, "_OPEN", FileCache(maxsize=size))
        for tid in (plain, shifted, plain):
            env.reset(world=WORLD, task=tid)
            assert env.session.scenario == rl_tasks[tid].extra.get("scenario")
            assert not env.web_search(query="phone").startswith("Error")
        # the world's corpus and its scenario's: two open corpora and two open indexes, or one with a bound of 1
        assert len(sim_env._CORPORA) == expected and len(corpus_index._OPEN) == expected


def test_http_submit_uses_the_same_reward(rl_wh, rl_tasks):
    tid = sorted(rl_tasks)[4]
    with TestClient(create_app(WORLD, rl_wh, mcp=False, record=True)) as c:
        sid = c.post("/sessions", json={"task_id": tid, "seed": 2}).json()["session_id"]

        def call(name: str, args: dict) -> str:
            return c.post(f"/sessions/{sid}/step", json={"name": name, "arguments": args}).json()["observation"]

        answer = scripted_answer(rl_tasks[tid], call)
        r = c.post(f"/sessions/{sid}/submit", json={"answer": answer, "reward": {"format_reward": 0.25}})
        assert r.status_code == 200 and r.json()["reward"] == 1.25 and r.json()["info"]["f1_by_item"] == 1.0
        assert c.post(f"/sessions/{sid}/submit", json={"answer": answer}).status_code == 409
        after = c.post(f"/sessions/{sid}/step", json={"name": "web_search", "arguments": {"query": "x"}}).json()
        assert after["error"] and "episode is over" in after["observation"]
        assert c.post(f"/sessions/{sid}/submit", json={"answer": 3}).status_code == 422
        assert c.post(f"/sessions/{sid}/submit", json={"answer": "x", "reward": {"metric": "bleu"}}).status_code == 422
        bare = c.post("/sessions", json={}).json()["session_id"]
        no_task = c.post(f"/sessions/{bare}/submit", json={"answer": answer})
        assert no_task.status_code == 409 and "no task" in no_task.json()["error"]
        assert c.delete(f"/sessions/{sid}").status_code == 204
        # a submit without a step is an episode too; a reset logs the scored episode and starts another under a new id
        quick = c.post("/sessions", json={"task_id": tid}).json()["session_id"]
        assert c.post(f"/sessions/{quick}/submit", json={"answer": "| x |\n|---|\n| 1 |"}).json()["reward"] == 0.0
        assert c.post(f"/sessions/{quick}/reset").status_code == 200
        c.post(f"/sessions/{quick}/step", json={"name": "web_search", "arguments": {"query": "phone"}})
        assert c.delete(f"/sessions/{quick}").status_code == 204
    eps = read_episodes(rl_wh)
    first, second = eps.filter(episode_id=quick), eps.filter(eps["episode_id"].str.starts_with(quick + "-"))
    assert first["finished"].to_list() == [True] and first["f1_by_item"].to_list() == [0.0]
    assert second.height == 1 and second["finished"].to_list() == [False] and second["f1_by_item"].to_list() == [None]
    eps = read_episodes(rl_wh).filter(episode_id=sid)
    assert eps["f1_by_item"].to_list() == [1.0] and eps["answer"].to_list() == [answer]
    assert json.loads(eps["perturbations_json"][0]) == {"perturbations": []}


# -- deep questions (BrowseComp-style, one answer) --------------------------------------------------
def test_deep_questions_are_episodes_rewarded_by_correctness(rl_wh, rl_tasks):
    deep = world_tasks(WORLD, rl_wh, "deep")
    assert len(deep) >= 20 and all(t.extra["kind"] == "deep" for t in deep.values())
    assert set(deep).isdisjoint(rl_tasks) and len(world_tasks(WORLD, rl_wh, "both")) == len(deep) + len(rl_tasks)
    assert {t.extra["scenario"] for t in deep.values()} - {None}  # time-shifted scenarios have their own
    env = SearchWorldEnv(rl_wh, agent="rl-deep")
    ids = sorted(deep)[::7]
    for qid in ids:
        first = env.reset(world=WORLD, task=qid, seed=2, perturbations="default")
        assert deep[qid].question in first and "Exact Answer:" in first and "Submit your response" in first
        response = _solve(env, deep[qid])
        assert f"Exact Answer: {deep[qid].extra['answer']}" in response
        assert env.submit(response) == 1.0 and env.info["format_ok"] and env.info["tool_calls"] > 0
    eps = read_episodes(rl_wh).filter(agent="rl-deep")
    assert sorted(eps["task_id"].to_list()) == ids and eps["f1_by_item"].to_list() == [1.0] * len(ids)
    qid = ids[0]
    env.reset(world=WORLD, task=qid)
    assert env.submit("Explanation: a guess\nExact Answer: Nobody At All\nConfidence: 20%") == 0.0 and env.info["format_ok"]
    env.reset(world=WORLD, task=qid)
    assert env.submit(deep[qid].extra["answer"]) == 0.0 and not env.info["format_ok"]  # no 'Exact Answer:' line


def test_task_families_are_checked(rl_wh):
    with pytest.raises(WorldforgeError, match="unknown task family 'tall'"):
        world_tasks(WORLD, rl_wh, "tall")
    assert world_tasks(WORLD, rl_wh, " Deep ") == world_tasks(WORLD, rl_wh, "deep")


def test_a_world_built_before_deep_questions_has_its_wide_tasks_only(rl_wh, rl_tasks, tmp_path):
    import shutil

    import duckdb

    wh = tmp_path / "wh"
    wh.mkdir()
    shutil.copy(rl_wh.world(WORLD), wh / f"{WORLD}.duckdb")
    con = duckdb.connect(str(wh / f"{WORLD}.duckdb"))
    con.execute("DROP TABLE deep_questions")
    con.close()
    assert set(world_tasks(WORLD, Warehouse(wh), "both")) == set(rl_tasks)  # the wide ones still reset
    with pytest.raises(WarehouseError, match="no deep questions .*rebuild its tasks"):
        world_tasks(WORLD, Warehouse(wh), "deep")
