"""The catalog build on a Ray cluster: each world one Ray task running the same step runner.

``worldforge catalog build DIR --engine ray [--address HOST:PORT]`` and
:func:`worldforge.catalog.build.build_catalog` with ``engine="ray"`` submit one task per spec,
:func:`worldforge.catalog.build.build_world_entry` (:func:`worldforge.pipeline.run_world`: the world's
six steps, as the process pool and the Dagster world assets run them), and record each row in this
process as its task finishes. What differs from the process pool is only where a world runs:

* **Placement.** Each task asks for one CPU (``num_cpus=1``), so Ray runs as many worlds at once as the
  cluster has CPUs, on whichever node has one free; ``workers`` caps the tasks in flight.
* **Storage.** The warehouse path travels with the task: every node must see the same warehouse
  folder (one machine, or a shared volume — NFS, a mounted bucket) and the same Python environment.
* **Failures stay per world.** A world's failure is its row (``build_world_entry`` never raises); a
  worker process that dies (killed, out of memory) is retried once on a fresh worker by Ray
  (``max_retries=1``, the pool's retry-alone rule), then the world gets a ``failed`` row.

Ray is started for real: with an ``address`` (``WORLDFORGE_RAY_ADDRESS``), the driver joins that
cluster (``ray start --head`` elsewhere); without one, ``ray.init`` starts a local cluster for the
build and shuts it down afterwards. A driver that finds Ray already initialised uses it and leaves it up.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from worldforge.errors import WorldforgeError
from worldforge.warehouse.layout import Warehouse

if TYPE_CHECKING:
    from worldforge.corpus.rewriter import RewriterConfig

LOCAL_OBJECT_STORE_BYTES = 256 << 20
"""Object store of a local cluster started for one build: tasks pass paths and rows, never large objects."""


class RayEngineError(WorldforgeError):
    """Ray cannot be reached or started (a wrong ``--address``, a cluster that is down)."""


def _reachable(address: str, timeout: float = 5.0) -> None:
    """Fail in seconds when nothing listens at ``HOST:PORT`` (``ray.init`` would wait minutes for the GCS)."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        return  # "auto", "ray://..." and the like: Ray resolves them itself
    try:
        socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout).close()
    except OSError as exc:
        raise RayEngineError(f"cannot reach the Ray cluster at {address}: {exc.strerror or exc} (start it with `ray start --head`)") from None


def _connect(address: str | None) -> bool:
    """Join the cluster at ``address`` (or start a local one); ``True`` when this call initialised Ray."""
    import ray

    if ray.is_initialized():
        return False
    if address:
        _reachable(address)
    env = {"env_vars": {"POLARS_MAX_THREADS": os.environ.get("POLARS_MAX_THREADS", "1")}}
    try:
        if address:
            ray.init(address=address, runtime_env=env, log_to_driver=False, logging_level="ERROR")
        else:
            ray.init(runtime_env=env, log_to_driver=False, logging_level="ERROR", include_dashboard=False,
                     object_store_memory=LOCAL_OBJECT_STORE_BYTES)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = f"the Ray cluster at {address}" if address else "a local Ray cluster"
        raise RayEngineError(f"cannot reach {where}: {str(exc).splitlines()[0]}") from None
    return True


def run_on_ray(build: Callable[[str, Warehouse, RewriterConfig | None], Any], specs: list[Path], warehouse: Warehouse, n: int,
               record: Callable[[Any], None], rewriter: RewriterConfig | None = None, address: str | None = None) -> list[tuple[Path, str | None]]:
    """Build ``specs`` as Ray tasks, at most ``n`` in flight, recording each row as it comes.

    Args:
        build: ``(spec path, warehouse, rewriter) -> row``, one world end to end
            (:func:`worldforge.catalog.build.build_world_entry`); it runs on the cluster's workers.
        specs: the spec files (absolute).
        warehouse: the warehouse every node writes to.
        n: tasks in flight at most (a cluster with fewer free CPUs runs fewer at once).
        record: called in this process with each world's row.
        rewriter: the corpus rewriter passed to every world.
        address: the cluster (``HOST:PORT`` of ``ray start --head``, or ``auto``); ``None``: a local cluster.

    Returns:
        ``(spec, error)`` of every world that has no row: the task raised (its error), or its worker
        died twice (``None``); the caller gives each a ``failed`` row.

    Raises:
        RayEngineError: Ray cannot be reached or started (nothing is built).
    """
    import ray
    from ray.exceptions import RayError, RayTaskError

    started = _connect(address)
    try:
        task = ray.remote(num_cpus=1, max_retries=1)(build)
        queue = list(specs)
        pending: dict[Any, Path] = {}
        lost: list[tuple[Path, str | None]] = []
        while queue or pending:
            while queue and len(pending) < max(1, n):
                spec = queue.pop(0)
                pending[task.remote(str(spec), warehouse, rewriter)] = spec
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                spec = pending.pop(ref)
                try:
                    row = ray.get(ref)
                except RayTaskError as exc:  # build_world_entry raised (it should not): the world still gets its row
                    lost.append((spec, f"the Ray task raised {str(exc).strip().splitlines()[-1]}"))
                    continue
                except RayError:  # the worker died again after its retry (killed, out of memory)
                    lost.append((spec, None))
                    continue
                record(row)
        return lost
    finally:
        if started:
            ray.shutdown()
