"""Every spec of a folder built end to end into the warehouse, one row per spec in ``WAREHOUSE/catalog.duckdb``.

Per world, the steps of :data:`worldforge.pipeline.WORLD_STEPS` run by :func:`worldforge.pipeline.run_world`
(the Dagster world assets are generated from the same list): tables and invariants, scenarios, pages and the
fact check, indexes, tasks, the oracle (F1 = 1.0 on every task, no leakage). The oracle's
episodes go to the episode store every world shares, ``WAREHOUSE/episodes/`` (one Parquet part per
world and run, :mod:`worldforge.trajectories.episodes`), which the SFT and CPT datasets read.

A world that fails (invalid spec, invariant violation, contradicted fact, no solvable task, oracle
F1 below 1, leakage, any exception) gets a ``failed`` row with its error; the others go on. A spec
whose content hash equals that of its last ``built`` row, whose world file still exists and records this
code's :data:`worldforge.GENERATOR_VERSION`, is skipped: its row is kept as it is (``status`` stays ``built``; the
run counts it as skipped). A world file built by another generator version (or one from before the version was
recorded) is *stale*: its spec is built again though its bytes are unchanged, and the run lists it
(:attr:`CatalogBuild.stale`), so a catalog never mixes worlds of two generator versions unsaid.

Workers are processes (a ``forkserver`` pool, each worker builds whole worlds and is replaced after
``recycle`` worlds, so memory does not grow with the catalog); the calling process alone writes
``catalog.duckdb``, one row as each world finishes (under a file lock beside it, so concurrent
writers such as Dagster runs take turns), so an interrupted build keeps every finished row. With
``engine="ray"`` the same worlds run as Ray tasks on a cluster instead (:mod:`worldforge.catalog.ray_engine`);
the rows, the skipping and the failure rules are the same.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from worldforge.errors import WarehouseError, WorldforgeError
from worldforge.warehouse.atomic import file_lock
from worldforge.warehouse.layout import Warehouse
from worldforge.warehouse.worlds import generator_version, is_stale

if TYPE_CHECKING:
    from worldforge.corpus.rewriter import RewriterConfig

ENGINES = ("process", "ray")
"""Where ``build_catalog`` runs worlds: a process pool on this machine, or Ray tasks on a cluster."""

DIED = "worker process died while building this world (killed, or out of memory)"
"""The error of a world whose worker died twice, on either engine."""

_DDL = """
CREATE TABLE IF NOT EXISTS catalog (
  world VARCHAR, spec_path VARCHAR PRIMARY KEY, spec_hash VARCHAR, archetype VARCHAR, schema_signature VARCHAR,
  target_year INTEGER, tables INTEGER, rows INTEGER, scenarios INTEGER, pages INTEGER, facts INTEGER,
  contradictions INTEGER, tasks INTEGER, oracle_f1_min DOUBLE, build_s DOUBLE, status VARCHAR, error VARCHAR,
  built_at TIMESTAMP
)
"""
_MAX_ERROR = 4000


@dataclass(frozen=True)
class CatalogRow:
    """One spec's row of the ``catalog`` table.

    Attributes:
        world: the spec's world name (the file stem when the spec cannot be read).
        spec_path: the spec file (absolute); the table's key.
        spec_hash: SHA-256 of the spec file's bytes (the content hash that decides skipping).
        archetype: the spec's ``archetype`` (``None`` for a hand-written spec).
        schema_signature: :func:`~worldforge.catalog.signature.schema_signature` of the spec.
        target_year, tables, rows, scenarios, pages, facts, contradictions, tasks: what was built
            (``None`` where the build did not get that far).
        oracle_f1_min: the lowest item-F1 of the oracle's clean episodes (1.0 when every task is solved).
        build_s: seconds the world took, end to end.
        status: ``built`` or ``failed``.
        error: why it failed (``None`` when built).
        built_at: when the row was made (UTC).
    """

    world: str
    spec_path: str
    spec_hash: str
    archetype: str | None = None
    schema_signature: str | None = None
    target_year: int | None = None
    tables: int | None = None
    rows: int | None = None
    scenarios: int | None = None
    pages: int | None = None
    facts: int | None = None
    contradictions: int | None = None
    tasks: int | None = None
    oracle_f1_min: float | None = None
    build_s: float = 0.0
    status: str = "failed"
    error: str | None = None
    built_at: datetime | None = None


COLUMNS = tuple(f.name for f in fields(CatalogRow))
"""The ``catalog`` table's columns, in order."""


@dataclass(frozen=True)
class CatalogBuild:
    """What one :func:`build_catalog` run did.

    Attributes:
        path: ``WAREHOUSE/catalog.duckdb``.
        rows: the row of every spec the run built or tried (finishing order).
        skipped: the kept rows of the specs the run skipped (unchanged, built, and by this generator version).
        wall_s: seconds the run took.
        workers: processes that built worlds.
        stale: the previous rows of the specs built again because their world file was stale (built by another
            :data:`~worldforge.GENERATOR_VERSION`, or before the version was recorded) though their bytes were unchanged;
            their new rows are in ``rows``.
    """

    path: Path
    rows: list[CatalogRow]
    skipped: list[CatalogRow]
    wall_s: float
    workers: int
    stale: list[CatalogRow] = field(default_factory=list)

    @property
    def built(self) -> int:
        """Worlds built in this run."""
        return sum(r.status == "built" for r in self.rows)

    @property
    def failed(self) -> list[CatalogRow]:
        """The rows of the worlds that failed in this run."""
        return [r for r in self.rows if r.status != "built"]

    @property
    def worlds_per_min(self) -> float:
        """Worlds built or tried per minute of wall time (skipped ones not counted)."""
        return 60.0 * len(self.rows) / self.wall_s if self.wall_s > 0 else 0.0


def catalog_specs(spec_dir: str | Path) -> list[Path]:
    """The spec files of a folder (``*.yaml`` and ``*.yml``), absolute and sorted.

    Raises:
        FileNotFoundError: no such folder.
    """
    d = Path(spec_dir)
    if not d.is_dir():
        raise FileNotFoundError(f"{d}: no such spec folder")
    return sorted(p.resolve() for p in [*d.glob("*.yaml"), *d.glob("*.yml")] if p.is_file())


def content_hash(spec_path: str | Path) -> str:
    """SHA-256 of a spec file's bytes."""
    return hashlib.sha256(Path(spec_path).read_bytes()).hexdigest()


def default_workers(configured: int = 0) -> int:
    """``configured`` (the edges pass ``WORLDFORGE_CATALOG_WORKERS``), or one worker per CPU plus one when it is 0:
    a world waits on its file writes part of the time (measured by bench/catalog.py on 2 cores: 28 worlds/min on
    2 workers, 35.5 on 3)."""
    return configured or (os.cpu_count() or 1) + 1


# -- one world ----------------------------------------------------------------------------------


def build_world_entry(spec_path: str | Path, warehouse: Warehouse, rewriter: RewriterConfig | None = None) -> CatalogRow:
    """Build one spec end to end (:func:`worldforge.pipeline.run_world`: the world's steps, as the Dagster
    world assets run them) and return its catalog row.

    ``rewriter``: rewrite the corpus's prose pages with a model (:mod:`worldforge.corpus.rewriter`); ``None``: template pages.

    The tasks stay in the world file (``search_tasks``): a catalog world writes no ``tasks/<world>/`` copy, which
    would add about 0.9 MiB a world; ``worldforge tasks export --world W`` writes it when wanted.

    Never raises for a world's failure: an invalid spec, an invariant violation, a contradicted fact,
    no solvable task, an oracle F1 below 1, leakage or any exception gives a ``failed`` row with the
    error (what was counted until then is kept in the row): the first failed check of the first step
    that failed one.
    """
    from worldforge.catalog.signature import schema_signature
    from worldforge.pipeline import StepFailed, run_world
    from worldforge.spec import load_spec

    spec_path = Path(spec_path).resolve()
    t0 = time.perf_counter()
    got: dict = {"world": spec_path.stem, "spec_path": str(spec_path), "spec_hash": ""}

    def row(status: str, error: str | None = None) -> CatalogRow:
        if error is not None and len(error) > _MAX_ERROR:
            error = error[:_MAX_ERROR] + " ..."
        return CatalogRow(**got, build_s=round(time.perf_counter() - t0, 3), status=status, error=error, built_at=_now())

    try:
        got["spec_hash"] = content_hash(spec_path)
        spec = load_spec(spec_path)
        got.update(world=spec.world, archetype=spec.archetype, schema_signature=schema_signature(spec),
                   target_year=spec.target_year, tables=len(spec.tables), scenarios=len(spec.scenarios))
        def keep(figures: dict) -> None:  # counted so far: kept in the row whatever happens next
            got.update({k: v for k, v in figures.items() if k in COLUMNS})

        try:
            results = run_world(spec_path, warehouse, rewriter=rewriter, spec=spec, export_tasks=False,  # tasks stay in the world file
                                on_result=lambda result: keep(result.figures))
        except StepFailed as exc:
            keep(exc.figures)
            raise
        failed = results[-1].failed_checks if results else []
        if failed:
            return row("failed", failed[0].summary or f"{results[-1].step}: check {failed[0].name} failed")
        return row("built")
    except Exception as exc:  # noqa: BLE001 - one world's failure, whatever it is, is that world's row
        return row("failed", str(exc) if isinstance(exc, (WorldforgeError, FileNotFoundError)) else f"{type(exc).__name__}: {exc}")


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None, microsecond=0)


# -- the catalog table ----------------------------------------------------------------------------


def write_row(warehouse: Warehouse, row: CatalogRow) -> Path:
    """Insert or replace a spec's row in ``WAREHOUSE/catalog.duckdb`` (created when missing), under a file lock.

    Returns:
        The catalog file.
    """
    path = warehouse.catalog
    values = asdict(row)
    with file_lock(path):
        con = duckdb.connect(str(path))
        try:
            con.execute(_DDL)
            con.execute("BEGIN TRANSACTION")
            con.execute("DELETE FROM catalog WHERE spec_path = ?", [row.spec_path])
            con.execute(f"INSERT INTO catalog ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
                        [values[c] for c in COLUMNS])
            con.execute("COMMIT")
        finally:
            con.close()
    return path


def read_catalog(warehouse: Warehouse) -> list[CatalogRow]:
    """Every row of ``WAREHOUSE/catalog.duckdb``, by world then spec path (empty when there is no catalog yet)."""
    path = warehouse.catalog
    if not path.is_file():
        return []
    with file_lock(path):
        con = duckdb.connect(str(path), read_only=True)
        try:
            has = con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'catalog'").fetchone()[0]
            data = con.execute(f"SELECT {', '.join(COLUMNS)} FROM catalog ORDER BY world, spec_path").fetchall() if has else []
        finally:
            con.close()
    return [CatalogRow(*r) for r in data]


# -- the whole folder -----------------------------------------------------------------------------


def _built_from(spec: Path, previous: CatalogRow | None, warehouse: Warehouse) -> bool:
    """The spec's last row is ``built`` from these very bytes and its world file exists."""
    return (previous is not None and previous.status == "built" and previous.spec_hash == content_hash(spec)
            and warehouse.world(previous.world).is_file())


def stale_world(warehouse: Warehouse, world: str) -> bool:
    """The world's file records another generator version than :data:`worldforge.GENERATOR_VERSION` (or none: written
    before the version was recorded). A file that cannot be read is not called stale here (``worldforge doctor`` says what
    it is; the catalog keeps its row as it is)."""
    try:
        return is_stale(generator_version(warehouse.world(world)))
    except WarehouseError:
        return False


def _unchanged(spec: Path, previous: CatalogRow | None, warehouse: Warehouse) -> bool:
    """Skip the spec: built from these bytes, its world file present and built by this generator version."""
    return _built_from(spec, previous, warehouse) and not stale_world(warehouse, previous.world)


def _worker_init(threads: int) -> None:
    """A fresh worker: its share of the CPUs for polars' thread pool (n workers on n cores would
    otherwise each start one thread per core), unless the environment already says; its standard
    output goes nowhere (DuckDB draws progress bars there for long queries, over the caller's own);
    errors still reach standard error and every result comes back as a row."""
    os.environ.setdefault("POLARS_MAX_THREADS", str(threads))
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)


def _run_pool(specs: list[Path], wh: Warehouse, n: int, recycle: int, record: Callable[[CatalogRow], None],
              rewriter: RewriterConfig | None = None) -> list[Path]:
    """Build ``specs`` on ``n`` worker processes, recording each row as it comes; returns the specs whose worker died.

    At most ``n`` worlds are in flight, so every worker stays busy until the queue is empty. Workers are
    recycled by sending the next worlds to a fresh pool once a pool has been given ``n * recycle`` of them
    (the old one exits as its last worlds finish), not with ``max_tasks_per_child``: on Python 3.11 an
    executor whose workers exit at that limit may never start their replacements, and the build hangs with
    worlds still queued. While a pool finishes its last worlds its idle workers stay (at most ``2n - 1``
    processes). Workers fork from a forkserver that has loaded :mod:`worldforge.catalog.preload`.
    """
    broken: list[Path] = []
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["worldforge.catalog.preload"])  # the language libraries load once, not per worker
    threads = max(1, (os.cpu_count() or 1) // n)
    per_pool = n * max(1, recycle)

    def fresh() -> ProcessPoolExecutor:
        return ProcessPoolExecutor(max_workers=n, mp_context=ctx, initializer=_worker_init, initargs=(threads,))

    queue = list(reversed(specs))
    pools: list[ProcessPoolExecutor] = []
    pending: dict = {}  # future -> (spec, its pool)
    dead: set[ProcessPoolExecutor] = set()  # pools a worker of which died
    given = 0
    try:
        while queue or pending:
            while queue and len(pending) < n:
                if not pools or given >= per_pool or pools[-1] in dead:
                    pools.append(fresh())
                    given = 0
                spec = queue.pop()
                try:
                    fut = pools[-1].submit(build_world_entry, str(spec), wh, rewriter)
                except BrokenProcessPool:
                    # A worker died before its futures said so: the world goes to a fresh pool, unless this pool
                    # was fresh (it cannot start workers; no loop of new pools): then it is a lost world.
                    dead.add(pools[-1])
                    (broken if given == 0 else queue).append(spec)
                    continue
                pending[fut] = (spec, pools[-1])
                given += 1
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                spec, _pool = pending.pop(fut)
                try:
                    row = fut.result()
                except BrokenProcessPool:  # a worker died: every world in flight on its pool is retried
                    broken.append(spec)
                    dead.add(_pool)
                    continue
                record(row)
            busy = {pool for _, pool in pending.values()}
            for pool in pools[:-1]:  # pools given all their worlds and done with them
                if pool not in busy:
                    pool.shutdown(wait=True)
                    dead.discard(pool)
            pools = [pool for pool in pools[:-1] if pool in busy] + pools[-1:]
    finally:
        for pool in pools:
            pool.shutdown(wait=True, cancel_futures=True)
    return broken


def _world_clashes(specs: list[Path], kept: list[Path]) -> tuple[list[Path], list[tuple[Path, Path]]]:
    """Specs that name the same world as an earlier one (or a kept one) are left out with that one."""
    import yaml

    def world_of(p: Path) -> str:
        try:
            doc = yaml.safe_load(p.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            return f"\0{p}"  # unreadable: the build reports it
        return str(doc["world"]) if isinstance(doc, dict) and "world" in doc else f"\0{p}"

    owner = {world_of(p): p for p in kept}
    ok, clashes = [], []
    for p in specs:
        w = world_of(p)
        if w in owner:
            clashes.append((p, owner[w]))
        else:
            owner[w] = p
            ok.append(p)
    return ok, clashes


def build_entry(spec_path: str | Path, warehouse: Warehouse, force: bool = False,
                rewriter: RewriterConfig | None = None) -> tuple[CatalogRow, str]:
    """One spec as a catalog entry, in this process: skipped when unchanged and built (by this generator version: a stale
    world is built again), else built end to end
    (:func:`build_world_entry`, with ``rewriter``) and its row written to ``catalog.duckdb`` (what the Dagster asset ``catalog_world`` runs).

    Returns:
        The spec's row (the kept one when skipped) and the outcome: ``built``, ``failed`` or ``skipped``.
    """
    spec = Path(spec_path).resolve()
    previous = {r.spec_path: r for r in read_catalog(warehouse)}.get(str(spec))
    if not force and _unchanged(spec, previous, warehouse):
        return previous, "skipped"
    row = build_world_entry(spec, warehouse, rewriter)
    write_row(warehouse, row)
    return row, row.status


def build_catalog(
    spec_dir: str | Path,
    warehouse: Warehouse,
    *,
    workers: int | None = None,
    progress: Callable[[CatalogRow, str], None] | None = None,
    recycle: int = 10,
    force: bool = False,
    rewriter: RewriterConfig | None = None,
    engine: str = "process",
    address: str | None = None,
) -> CatalogBuild:
    """Build every spec of ``spec_dir`` end to end into ``warehouse`` and record one row per spec in ``catalog.duckdb``.

    Args:
        spec_dir: the folder of world specs (``*.yaml``, ``*.yml``).
        warehouse: the warehouse (its folder created when missing).
        workers: processes building worlds (default :func:`default_workers` ``()``: one per CPU plus one); at most one per spec.
        progress: called in this process with each row and its outcome (``built``, ``failed`` or
            ``skipped``) as it comes; first with every skipped spec.
        recycle: worlds a worker builds before it is replaced by a fresh process.
        force: rebuild unchanged specs too (a stale world, built by another generator version, is rebuilt without it).
        rewriter: rewrite each corpus's prose pages with a model (:mod:`worldforge.corpus.rewriter`); ``None``: template pages.
            Its server is checked once before any world is built.
        engine: where worlds run: ``process`` (a process pool on this machine) or ``ray`` (Ray tasks,
            :mod:`worldforge.catalog.ray_engine`); the same step runner and the same rows either way.
        address: with ``ray``, the cluster to join (``HOST:PORT`` of ``ray start --head``); ``None``: a local cluster.

    Returns:
        The run's rows (and which of them were stale); failures are rows, never exceptions.

    Raises:
        FileNotFoundError: no such spec folder.
        BackendError: ``rewriter``'s server is unreachable or does not serve its model (nothing is built).
        WorldforgeError: an unknown engine; RayEngineError: the Ray cluster cannot be reached (nothing is built).
    """
    if engine not in ENGINES:
        raise WorldforgeError(f"unknown engine {engine!r}; one of: {', '.join(ENGINES)}")
    t0 = time.perf_counter()
    warehouse.root.mkdir(parents=True, exist_ok=True)
    specs = catalog_specs(spec_dir)
    previous = {r.spec_path: r for r in read_catalog(warehouse)}
    tell = progress or (lambda _row, _outcome: None)
    same = [previous[str(s)] for s in specs if not force and _built_from(s, previous.get(str(s)), warehouse)]
    stale = [r for r in same if stale_world(warehouse, r.world)]
    skipped = [r for r in same if r not in stale]
    for r in skipped:
        tell(r, "skipped")
    kept = {r.spec_path for r in skipped}
    todo = [s for s in specs if str(s) not in kept]
    n = max(1, min(workers or default_workers(), len(todo) or 1))
    rows: list[CatalogRow] = []

    def record(row: CatalogRow) -> None:
        write_row(warehouse, row)
        rows.append(row)
        tell(row, row.status)

    if rewriter is not None and todo:  # one server check for the whole run: an unreachable server is one error, nothing built
        from worldforge.corpus.rewriter import resolve_rewriter

        rewriter = resolve_rewriter(rewriter)
    todo, clashes = _world_clashes(todo, [Path(r.spec_path) for r in skipped])
    for spec, other in clashes:
        record(CatalogRow(world=spec.stem, spec_path=str(spec), spec_hash=content_hash(spec), status="failed", built_at=_now(),
                          error=f"its world name is also the world of {other}: one world file per name"))
    lost: list[tuple[Path, str | None]] = []
    if engine == "ray" and todo:
        from worldforge.catalog.ray_engine import run_on_ray

        lost = run_on_ray(build_world_entry, todo, warehouse, n, record, rewriter, address)
    else:
        for spec in _run_pool(todo, warehouse, n, recycle, record, rewriter):  # each alone in a fresh process: a world that kills its worker again fails
            lost += [(again, DIED) for again in _run_pool([spec], warehouse, 1, 1, record, rewriter)]
    for spec, error in lost:
        record(CatalogRow(world=spec.stem, spec_path=str(spec), spec_hash=content_hash(spec), status="failed", built_at=_now(), error=error or DIED))
    return CatalogBuild(warehouse.catalog, rows, skipped, time.perf_counter() - t0, n if todo else 0, stale)
