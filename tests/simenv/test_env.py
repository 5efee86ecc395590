import json
import re

import pytest

from tests.conftest_worlds import built_world
from worldforge.errors import WorldforgeError
from worldforge.simenv import DEFAULT_MIX, Perturbation, PerturbationConfig, SearchEnv, from_instruction
from worldforge.tasks.store import build_tasks
from worldforge.warehouse import Warehouse

BLOCK = re.compile(r"^\[(\d+)\] (https://\S+)\nTitle: .+\nSnippet: .*\nDate: (N/A|[A-Z][a-z]{2} \d{2}, \d{4})$", re.M)


@pytest.fixture(scope="module")
def world(specs, tmp_path_factory):
    wh = Warehouse(tmp_path_factory.mktemp("wh"))
    path = built_world(specs["esports_2031"], wh)
    return wh, build_tasks(path).tasks


def env(wh, **kw):
    return SearchEnv("esports_2031", warehouse=wh, **kw)


def test_web_search_format_and_stable_numbering(world):
    wh, _ = world
    e = env(wh)
    first = e.step({"name": "web_search", "arguments": {"query": "Titans"}})
    blocks = BLOCK.findall(first.text)
    assert len(blocks) == 10 and [int(n) for n, _, _ in blocks] == list(range(1, 11))
    again = e.step({"name": "web_search", "arguments": {"queries": ["Ravens", "Titans"]}})
    numbers = {url: int(n) for n, url, _ in BLOCK.findall(again.text)}
    assert all(numbers[url] == int(n) for n, url, _ in blocks)  # a URL keeps its number
    assert again.text.count('Results for "') == 2 and max(numbers.values()) > 10


def test_extractor_is_stable_and_404s(world):
    wh, _ = world
    e = env(wh)
    url = BLOCK.findall(e.step({"name": "web_search", "arguments": {"query": "Titans"}}).text)[0][1]
    a = e.step({"name": "web_extractor", "arguments": {"url": url}})
    b = env(wh).step({"name": "web_extractor", "arguments": {"url": url}})
    assert a.text == b.text and a.text.startswith("# ") and not a.error
    miss = e.step({"name": "web_extractor", "arguments": {"url": "https://nowhere.example/page"}})
    assert miss.error and "404 Not Found" in miss.text


def test_dict_memory_replies(world):
    wh, _ = world
    e = env(wh)

    def mem(**args):
        return e.step({"name": "dict_memory", "arguments": args}).text

    assert mem(operation="add", dict={"a": 1, "b": [2]}) == "Successfully added items of ['a', 'b'] to memory."
    assert mem(operation="update", dict={"a": 5}) == "Successfully updated items of ['a'] in memory."
    assert json.loads(mem(operation="retrieve", key_list=["a", "zz"])) == {"a": 5}
    assert mem(operation="retrieve", key_list=["zz"]) == "Key not found"
    assert json.loads(mem(operation="retrieve_all")) == {"a": 5, "b": [2]}
    assert mem(operation="remove", key_list=["a"]) == "Successfully removed items of ['a'] from memory."
    assert mem(operation="remove_all") == "Successfully cleared all memory."
    assert mem(operation="retrieve_all") == "Memory is empty."


@pytest.mark.parametrize("call, fragment", [
    ('{"name": "web_search", "arguments": {bad', "not valid JSON"),
    ({"name": "browse", "arguments": {}}, "unknown tool 'browse'"),
    ({"name": "web_search", "arguments": {}}, "needs 'query'"),
    ({"name": "web_search", "arguments": {"query": 3}}, "needs 'query'"),
    ({"name": "web_search", "arguments": {"queries": "x"}}, "'queries' must be"),
    ({"name": "web_search", "arguments": {"query": "x", "page": 0}}, "'page' must be"),
    ({"name": "web_search", "arguments": {"queries": ["x"] * 5000}}, "at most 20 queries"),
    ({"name": "web_search", "arguments": {"query": "x" * 100_000}}, "at most 1000 characters"),
    ({"name": "web_extractor", "arguments": {}}, "needs 'url'"),
    ({"name": "web_extractor", "arguments": "not json"}, "not valid JSON"),
    ({"name": "dict_memory", "arguments": {"operation": "explode"}}, "'operation' must be"),
    ({"name": "dict_memory", "arguments": {"operation": "add"}}, "needs 'dict'"),
    (["not", "an", "object"], "is a JSON object"),
])
def test_malformed_calls_are_error_observations(world, call, fragment):
    wh, _ = world
    obs = env(wh).step(call)
    assert obs.error and obs.text.startswith("Error") and fragment in obs.text


def test_openai_tool_call_shape(world):
    wh, _ = world
    obs = env(wh).step({"id": "call_1", "type": "function", "function": {"name": "web_search", "arguments": '{"query": "Titans"}'}})
    assert not obs.error and obs.text.startswith("[1] https://")


def test_perturbations_replay_from_the_seed(world):
    wh, _ = world
    mix = PerturbationConfig(perturbations=[*DEFAULT_MIX.perturbations, Perturbation(kind="pagination", rate=0.5, page_size=3)])
    calls = [{"name": "web_search", "arguments": {"queries": ["Titans", "Ravens", "league points"]}}] * 15 + [
        {"name": "web_extractor", "arguments": {"url": "https://x.example"}}] * 5

    def run(seed):
        e = env(wh, perturbations=mix, seed=seed, session_id="s")
        return [(o.text, o.fired) for o in map(e.step, calls)]

    a, b, c = run(7), run(7), run(8)
    assert a == b and a != c
    kinds = {f["kind"] for _, fired in a for f in fired}
    assert {"transient_error", "partial_batch", "stale_ranking", "pagination"} <= kinds


def test_schedules_and_instructions():
    p = Perturbation(kind="empty_results", schedule=[{"until_episode": 10, "rate": 0.0}, {"until_episode": 20, "rate": 0.2}, {"rate": 0.5}])
    assert (p.rate_at(0), p.rate_at(15), p.rate_at(99)) == (0.0, 0.2, 0.5)
    with pytest.raises(ValueError):
        Perturbation(kind="empty_results", rate=0.1, schedule=[{"rate": 0.2}])
    cfg = from_instruction("Inject intermittent API errors and shuffle the ranking 30% of the time")
    assert {(x.kind, x.rate) for x in cfg.perturbations} == {("transient_error", 0.3), ("stale_ranking", 0.3)}
    with pytest.raises(WorldforgeError, match="no perturbation recognised"):
        from_instruction("make it nice")


def test_no_leakage_on_unrelated_queries(world):
    wh, tasks = world
    unrelated = ["league", "season points wins", "players rating", "sponsorship energy drink", "founded", "Continental Circuit"]
    leaked_without_control = 0
    for task in tasks:
        gold = {tuple(x.split("|")[:3]) for cells in task.extra["provenance"]["rows"] for x in cells}
        controlled, free = env(wh, task=task), env(wh)
        for q in unrelated:
            if any(t in q.lower() for t in controlled.targets):
                continue
            obs = controlled.step({"name": "web_search", "arguments": {"query": q}})
            assert not {(r["table"], r["row_key"], r["column"]) for r in obs.revealed} & gold, (task.instance_id, q)
            free_obs = free.step({"name": "web_search", "arguments": {"query": q}})
            leaked_without_control += len({(r["table"], r["row_key"], r["column"]) for r in free_obs.revealed} & gold)
    assert leaked_without_control > 0  # the control has something to block


def test_leakage_probe(world):
    from worldforge.simenv.env import leakage_probe

    wh, tasks = world
    for task in tasks:
        leaked, sent = leakage_probe(env(wh, task=task))
        assert sent > 0 and leaked == 0
    with pytest.raises(ValueError):
        leakage_probe(env(wh))
