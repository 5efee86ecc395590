"""Where runs execute: one switch, ``WORLDFORGE_EXECUTOR``, over Dagster's own executors.

* ``multiprocess`` (default): each step in its own process on this machine (``dagster dev``);
* ``celery``: steps as Celery tasks (``dagster-celery``) on workers that import this code
  location; broker and result backend from ``WORLDFORGE_CELERY_BROKER`` /
  ``WORLDFORGE_CELERY_BACKEND``;
* ``k8s``: each step as a Kubernetes Job (``dagster-k8s``) in ``WORLDFORGE_K8S_NAMESPACE``,
  with the image of the code location's deployment and the warehouse on a shared volume
  (``WORLDFORGE_WAREHOUSE`` is passed through to every step).

The definitions do not change: only the executor does (configuration, no scheduler of ours).
Every world partition writes its own DuckDB file, so steps on different machines never write
the same file; the shared stores keep their concurrency pools.
"""

import os

from dagster import ExecutorDefinition, multiprocess_executor

EXECUTORS = ("multiprocess", "celery", "k8s")


def executor_for(name: str | None = None) -> ExecutorDefinition:
    """The configured executor for ``name`` (default ``WORLDFORGE_EXECUTOR``, else ``multiprocess``).

    Raises:
        ValueError: an unknown name, or the executor's package is not installed (named in the message).
    """
    name = name or os.environ.get("WORLDFORGE_EXECUTOR", "multiprocess")
    if name == "multiprocess":
        return multiprocess_executor.configured({"max_concurrent": int(os.environ.get("WORLDFORGE_MAX_CONCURRENT", "0"))}, name="multiprocess")
    if name == "celery":
        try:
            from dagster_celery import celery_executor
        except ImportError:
            raise ValueError("WORLDFORGE_EXECUTOR=celery needs dagster-celery: pip install dagster-celery") from None
        return celery_executor.configured({
            "broker": os.environ.get("WORLDFORGE_CELERY_BROKER", "pyamqp://guest@localhost//"),
            "backend": os.environ.get("WORLDFORGE_CELERY_BACKEND", "rpc://"),
            "include": ["assets.definitions"],
        }, name="celery")
    if name == "k8s":
        try:
            from dagster_k8s import k8s_job_executor
        except ImportError:
            raise ValueError("WORLDFORGE_EXECUTOR=k8s needs dagster-k8s: pip install dagster-k8s") from None
        return k8s_job_executor.configured({
            "job_namespace": os.environ.get("WORLDFORGE_K8S_NAMESPACE", "worldforge"),
            "env_vars": ["WORLDFORGE_WAREHOUSE", "WORLDFORGE_ENV", "WORLDFORGE_VLLM_URL", "WORLDFORGE_VLLM_MODEL", "WORLDFORGE_TOKENIZER"],
            **({"max_concurrent": int(os.environ["WORLDFORGE_MAX_CONCURRENT"])} if os.environ.get("WORLDFORGE_MAX_CONCURRENT") else {}),
        }, name="k8s")
    raise ValueError(f"WORLDFORGE_EXECUTOR={name!r} is not an executor; choose one of: {', '.join(EXECUTORS)}")
