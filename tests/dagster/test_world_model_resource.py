import pytest

from assets.resources import WorldModelResource

pytestmark = pytest.mark.dagster


def test_the_environment_switch_picks_the_world_model(monkeypatch, tmp_path):
    local = WorldModelResource.for_environment("local").backend(tmp_path)
    assert local.kind == "grounded" and local.warehouse == str(tmp_path)
    gpu = WorldModelResource(**{"kind": "openai", "base_url": "http://gpu-host:8000/v1", "model": "qwen"}).backend(tmp_path)
    assert gpu.kind == "openai" and gpu.base_url == "http://gpu-host:8000/v1" and gpu.model == "qwen"
    monkeypatch.setenv("WORLDFORGE_ENV", "gpu")
    assert WorldModelResource.for_environment().kind == "openai"
    with pytest.raises(ValueError, match="Input should be .local. or .gpu."):
        WorldModelResource.for_environment("staging")


def test_definitions_carry_the_world_model_resource(tmp_path):
    from assets.definitions import defs

    res = defs.resources["world_model"]
    assert isinstance(res, WorldModelResource) and res.backend(tmp_path).kind == "grounded"  # local by default
