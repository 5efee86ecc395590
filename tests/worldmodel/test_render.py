"""Grounded LLM search: renderings are verified against the world, rejected when they contradict it."""

import re

import pytest

from worldforge.llm import GenerationParams, OpenAIBackend
from worldforge.llm.base import Completion, GenerationResult, WorldModelBackend, record
from worldforge.simenv import SearchEnv
from worldforge.worldmodel.grounded import GroundedBackend
from worldforge.worldmodel.parsing import format_prediction
from worldforge.worldmodel.render import LLMSearchRenderer


class PlantingBackend(WorldModelBackend):
    """A stand-in world model that renders the page it is asked for correctly, except that its
    first ``plant`` replies state a wrong launch price (a planted contradiction)."""

    kind = "planting"
    model: str = "planted"
    page: str = ""
    plant: int = 1
    calls: int = 0

    def _generate(self, requests, n, params, on_result):
        result = GenerationResult()
        for req in requests:
            self.calls += 1
            text = self.page
            if self.calls <= self.plant:
                text = re.sub(r"\| Launch price \| \$([\d,]+)", lambda m: f"| Launch price | ${int(m.group(1).replace(',', '')) + 500:,}", text)
            record(result, req, [Completion(request_id=req.id, index=i, text=format_prediction(text, "render it")) for i in range(n)], on_result)
        return result


@pytest.fixture
def wh(search_wh):
    # renderings are cached under the warehouse: give each test a fresh cache folder
    search_wh.cache.mkdir(exist_ok=True)
    for f in search_wh.cache.glob("*"):
        f.unlink()
    return search_wh


def model_url(wh):
    env = SearchEnv("smartphones_2029", warehouse=wh)
    obs = env.step({"name": "web_search", "arguments": {"query": "Nokia Lumen wiki model"}})
    url = next(u for u in re.findall(r"\] (\S+)", obs.text) if "/wiki/models/" in u)
    page = env.step({"name": "web_extractor", "arguments": {"url": url}}).text
    assert "| Launch price | $" in page
    return url, page


def test_a_planted_contradiction_is_rejected_and_regenerated(wh):
    url, page = model_url(wh)
    backend = PlantingBackend(page=page, plant=2)
    renderer = LLMSearchRenderer(backend, on_reject="regenerate", max_attempts=3)
    env = SearchEnv("smartphones_2029", warehouse=wh, renderer=renderer)
    obs = env.step({"name": "web_extractor", "arguments": {"url": url}})
    r = obs.rendering
    assert r["decision"] == "accepted" and r["attempts"] == 3 and backend.calls == 3
    assert len(r["rejections"]) == 2 and all(x.startswith("contradicted: ") and "launch price usd" in x for x in r["rejections"])
    assert obs.text == page and r["checked"] > 5


def test_with_on_reject_grounded_the_template_page_is_served(wh):
    url, page = model_url(wh)
    backend = PlantingBackend(page=page, plant=10)
    env = SearchEnv("smartphones_2029", warehouse=wh, renderer=LLMSearchRenderer(backend, on_reject="grounded"))
    obs = env.step({"name": "web_extractor", "arguments": {"url": url}})
    assert obs.rendering["decision"] == "fallback" and backend.calls == 1 and obs.text == page
    # running out of attempts also falls back, never serves the contradicted page
    env = SearchEnv("smartphones_2029", warehouse=wh, renderer=LLMSearchRenderer(PlantingBackend(page=page, plant=10), max_attempts=2, cache=False))
    obs = env.step({"name": "web_extractor", "arguments": {"url": url}})
    assert obs.rendering["decision"] == "fallback" and obs.rendering["attempts"] == 2 and obs.text == page


def test_a_url_renders_once_for_the_life_of_the_world(wh):
    url, page = model_url(wh)
    backend = PlantingBackend(page=page + "\n\nA phone model with a loyal following.", plant=0)
    renderer = LLMSearchRenderer(backend)
    first = SearchEnv("smartphones_2029", warehouse=wh, renderer=renderer).step({"name": "web_extractor", "arguments": {"url": url}})
    again = SearchEnv("smartphones_2029", warehouse=wh, renderer=LLMSearchRenderer(backend), session_id="other").step({"name": "web_extractor", "arguments": {"url": " " + url + " "}})
    assert first.rendering["decision"] == "accepted" and "phone model" in first.text
    assert again.rendering["decision"] == "cached" and again.text == first.text and backend.calls == 1


def test_the_simulation_instruction_is_grounded_on_retrieved_rows_and_the_task(wh):
    from worldforge.tasks.store import build_tasks
    from worldforge.warehouse import Warehouse

    task = build_tasks(Warehouse(wh).world("smartphones_2029")).tasks[0]
    renderer = LLMSearchRenderer(GroundedBackend(warehouse=str(wh)))
    env = SearchEnv("smartphones_2029", warehouse=wh, task=task)
    call = {"name": "web_search", "arguments": {"query": "Nokia Lumen"}}
    obs = env.step(call)
    text = renderer.simulation_instruction(env, call, obs)
    first_url = re.search(r"\] (\S+)", obs.text).group(1)
    assert first_url in text and "World rows retrieved for this call:" in text
    assert re.search(r"^- Nokia .+ \(model\): .*launch price: \d+ USD", text, re.M)
    assert task.question in text and "Reference facts" in text


@pytest.mark.vllm
def test_rendering_through_a_real_vllm_server(wh, vllm_server):
    url, page = model_url(wh)
    backend = OpenAIBackend(base_url=vllm_server.base_url)
    renderer = LLMSearchRenderer(backend, max_attempts=2, params=GenerationParams(max_tokens=64, seed=5))
    assert renderer.params.json_schema is not None  # structured output where the backend has it
    env = SearchEnv("smartphones_2029", warehouse=wh, renderer=renderer)
    obs = env.step({"name": "web_extractor", "arguments": {"url": url}})
    r = obs.rendering
    # a random model writes noise: whatever it wrote was parsed and verified, and a page was served
    assert r["attempts"] >= 1 and r["decision"] in ("accepted", "fallback") and obs.text
    if r["decision"] == "fallback":
        assert obs.text == page and len(r["rejections"]) == 2
    assert renderer.decisions == {r["decision"]: 1}
