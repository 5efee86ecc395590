"""Where runs execute: one switch, ``WORLDFORGE_EXECUTOR``, over Dagster's own executors.

* ``multiprocess`` (default): each step in its own process on this machine (``dagster dev``);
* ``celery``: steps as Celery tasks (``dagster-celery``) on workers that import this code
  location; broker and result backend from ``WORLDFORGE_CELERY_BROKER`` /
  ``WORLDFORGE_CELERY_BACKEND``;
* ``k8s``: each step as a Kubernetes Job (``dagster-k8s``) in ``WORLDFORGE_K8S_NAMESPACE``,
  with the image of the code location's deployment and the warehouse on a shared volume
  (every ``WORLDFORGE_*`` variable set where the run is launched, ``WORLDFORGE_WAREHOUSE``
  first of all, is passed through to every step);
* ``ray``: each step as a Ray job (``dagster-ray``'s executor) submitted to the cluster whose job
  server is ``WORLDFORGE_RAY_JOBS_URL`` (``ray start --head`` serves it on port 8265), one CPU a step;
  every node sees the same warehouse and Python environment, and every ``WORLDFORGE_*`` variable
  set here reaches every step. The executor, not dagster-ray's run launcher: the run itself stays
  where Dagster launched it (its sensors, logs and the UI are unchanged), only the steps — the
  world partitions' work — go to the cluster.

The definitions do not change: only the executor does (configuration, no scheduler of ours).
Every world partition writes its own DuckDB file, so steps on different machines never write
the same file; the shared stores keep their concurrency pools.
"""

import os

from dagster import ExecutorDefinition, multiprocess_executor

from worldforge.settings import EXECUTORS, Settings, get_settings

__all__ = ["EXECUTORS", "executor_for"]


def executor_for(name: str | None = None) -> ExecutorDefinition:
    """The configured executor for ``name`` (default ``WORLDFORGE_EXECUTOR``, else ``multiprocess``).

    Raises:
        ValueError: an unknown name, or the executor's package is not installed (named in the message).
    """
    if name is not None and name not in EXECUTORS:
        raise ValueError(f"WORLDFORGE_EXECUTOR={name!r} is not an executor; choose one of: {', '.join(EXECUTORS)}")
    s = get_settings(executor=name)
    if s.executor == "multiprocess":
        return multiprocess_executor.configured({"max_concurrent": s.max_concurrent}, name="multiprocess")
    if s.executor == "celery":
        try:
            from dagster_celery import celery_executor
        except ImportError:
            raise ValueError("WORLDFORGE_EXECUTOR=celery needs dagster-celery: pip install dagster-celery") from None
        return celery_executor.configured({"broker": s.celery_broker, "backend": s.celery_backend, "include": ["assets.definitions"]}, name="celery")
    passed = [name for name in map(Settings.env_var, Settings.model_fields) if name in os.environ]  # Dagster refuses names not set
    if s.executor == "ray":
        try:
            from dagster_ray import ray_executor
        except ImportError:
            raise ValueError("WORLDFORGE_EXECUTOR=ray needs dagster-ray: pip install dagster-ray") from None
        # the cluster's free CPUs bound the steps at once (one CPU a step); the schema has no max_concurrent
        return ray_executor.configured({"ray": {"address": s.ray_jobs_url, "num_cpus": 1, "env_vars": passed}}, name="ray")
    try:
        from dagster_k8s import k8s_job_executor
    except ImportError:
        raise ValueError("WORLDFORGE_EXECUTOR=k8s needs dagster-k8s: pip install dagster-k8s") from None
    return k8s_job_executor.configured({
        "job_namespace": s.k8s_namespace,
        "env_vars": passed,  # every WORLDFORGE_* setting set here reaches every step
        **({"max_concurrent": s.max_concurrent} if s.max_concurrent else {}),
    }, name="k8s")
