"""The scale-out path is configuration only: the same definitions under Dagster's multiprocess,
celery and Kubernetes executors, chosen by WORLDFORGE_EXECUTOR."""

import pytest

from assets.definitions import build_definitions, defs
from assets.executors import EXECUTORS, executor_for

pytestmark = pytest.mark.dagster


def _graph(d):
    repo = d.get_repository_def()
    return ({k.to_user_string() for k in repo.asset_graph.get_all_asset_keys()},
            {j.name for j in repo.get_all_jobs() if not j.name.startswith("__")})


@pytest.mark.parametrize("name", EXECUTORS)
def test_the_same_definitions_run_on_each_executor(name, monkeypatch):
    monkeypatch.setenv("WORLDFORGE_CELERY_BROKER", "redis://broker.internal:6379/0")
    monkeypatch.setenv("WORLDFORGE_K8S_NAMESPACE", "worlds-prod")
    monkeypatch.setenv("WORLDFORGE_EXECUTOR", name)
    monkeypatch.setenv("WORLDFORGE_WAREHOUSE", "/shared/warehouse")
    monkeypatch.delenv("WORLDFORGE_TOKENIZER", raising=False)
    d = build_definitions()
    assert _graph(d) == _graph(defs)  # nothing but the executor changes
    for job in ("world_build", "nightly_datasets"):
        ex = d.resolve_job_def(job).executor_def
        assert ex.name == name
        resolved = ex.config_schema.resolve_config({})
        assert resolved.success, resolved.errors
        config = resolved.value["config"]
        if name == "celery":
            assert config["broker"] == "redis://broker.internal:6379/0" and config["include"] == ["assets.definitions"]
        if name == "k8s":
            assert config["job_namespace"] == "worlds-prod" and "WORLDFORGE_WAREHOUSE" in config["env_vars"]
            assert "WORLDFORGE_TOKENIZER" not in config["env_vars"]  # not set here: Dagster would refuse to read it


def test_default_is_multiprocess_and_unknown_names_are_refused(monkeypatch):
    monkeypatch.delenv("WORLDFORGE_EXECUTOR", raising=False)
    assert executor_for().name == "multiprocess"
    assert defs.resolve_job_def("world_build").executor_def.name in EXECUTORS
    with pytest.raises(ValueError, match="choose one of: multiprocess, celery, k8s"):
        executor_for("slurm")
