"""Where runs execute: one switch, ``WORLDFORGE_EXECUTOR``, over Dagster's own executors.

* ``multiprocess`` (default): each step in its own process on this machine (``dagster dev``);
* ``celery``: steps as Celery tasks (``dagster-celery``) on workers that import this code
  location; broker and result backend from ``WORLDFORGE_CELERY_BROKER`` /
  ``WORLDFORGE_CELERY_BACKEND``;
* ``k8s``: each step as a Kubernetes Job (``dagster-k8s``) in ``WORLDFORGE_K8S_NAMESPACE``,
  with the image of the code location's deployment and the warehouse on a shared volume
  (every ``WORLDFORGE_*`` variable set where the run is launched, ``WORLDFORGE_WAREHOUSE``
  first of all, is passed through to every step).

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
    try:
        from dagster_k8s import k8s_job_executor
    except ImportError:
        raise ValueError("WORLDFORGE_EXECUTOR=k8s needs dagster-k8s: pip install dagster-k8s") from None
    return k8s_job_executor.configured({
        "job_namespace": s.k8s_namespace,
        # every WORLDFORGE_* setting set here reaches every step (Dagster refuses names that are not set)
        "env_vars": [name for name in map(Settings.env_var, Settings.model_fields) if name in os.environ],
        **({"max_concurrent": s.max_concurrent} if s.max_concurrent else {}),
    }, name="k8s")
