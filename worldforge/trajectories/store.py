"""The trajectory store, ``warehouse/trajectories.duckdb``, and ingestion into it.

Tables:

* ``trajectories(trajectory_id PK, source, source_path, format, domain, task, n_turns, locator, file_sha1, batch)``
* ``turns(trajectory_id FK, turn_idx, action, observation, obs_tokens, compression_ratio,
  novelty, line_surprisal, informative, mask_reason)``, primary key ``(trajectory_id, turn_idx)``
* ``quarantine(source_path, locator, reason, file_sha1, batch)`` — every record that could not be read
* ``mask_thresholds(domain, statistic, threshold, source)`` — the thresholds in force
* ``ingest_log(batch, ingested_at, paths, files, records_in, trajectories, quarantined, turns)``

Ingesting streams the files' records into the store in chunks (:func:`ingest`): files already
stored with the same path and bytes are skipped, a file read again replaces whatever the store
held for it (same bytes, by SHA-1, or same ``source_path``), the trajectory-local statistics are
computed per chunk and the corpus-wide ones in DuckDB SQL (:func:`masks_in_sql`; line surprisal
depends on the whole corpus), all in a copy of the file that replaces it atomically. Balance: for
each batch, records in = trajectories kept + records quarantined.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import polars as pl

from worldforge.errors import WarehouseError
from worldforge.tally import Tally
from worldforge.trajectories.mask import DECISION_ORDER, STATISTICS, MaskConfig, compute_local_statistics, mask_turns
from worldforge.trajectories.model import Quarantined, StoredTrajectory, StoredTurn, Trajectory, storable, storable_row
from worldforge.trajectories.readers import DEFAULT_MAX_RECORD_MB, discover, file_sha1, read_file
from worldforge.trajectories.readers.mapping import Mapping
from worldforge.warehouse.atomic import atomic_file, file_lock
from worldforge.warehouse.duck import atomic_duckdb, insert_frame, open_readonly, quote_str, read_table, reading_store, table_ddl
from worldforge.warehouse.layout import Warehouse

log = logging.getLogger(__name__)

TRAJECTORY_SCHEMA = {
    "trajectory_id": pl.String, "source": pl.String, "source_path": pl.String, "format": pl.String,
    "domain": pl.String, "task": pl.String, "n_turns": pl.Int64, "locator": pl.String, "file_sha1": pl.String,
    "batch": pl.Int64,
}
TURN_SCHEMA = {
    "trajectory_id": pl.String, "turn_idx": pl.Int64, "action": pl.String, "observation": pl.String,
    "obs_tokens": pl.Int64, "compression_ratio": pl.Float64, "novelty": pl.Float64,
    "line_surprisal": pl.Float64, "informative": pl.Boolean, "mask_reason": pl.String,
}
QUARANTINE_SCHEMA = {"source_path": pl.String, "locator": pl.String, "reason": pl.String, "file_sha1": pl.String, "batch": pl.Int64}
THRESHOLD_SCHEMA = {"domain": pl.String, "statistic": pl.String, "threshold": pl.Float64, "source": pl.String}
LOG_SCHEMA = {
    "batch": pl.Int64, "ingested_at": pl.Datetime("us"), "paths": pl.String, "files": pl.Int64,
    "records_in": pl.Int64, "trajectories": pl.Int64, "quarantined": pl.Int64, "turns": pl.Int64,
}

STORE_KIND = "trajectory store"

DEFAULT_STORE_MEMORY_MB = 512
"""DuckDB's memory limit (MiB) while the store ingests or recomputes masks, when the caller gives none; beyond it
DuckDB spills to disk. The CLI, the Dagster assets and the recording proxies pass ``WORLDFORGE_STORE_MEMORY_MB``."""

STORE_DDL = ";\n".join([
    table_ddl("trajectories", TRAJECTORY_SCHEMA, primary_key=("trajectory_id",),
              not_null=("source", "source_path", "format", "domain", "n_turns", "locator", "file_sha1", "batch")),
    table_ddl("turns", TURN_SCHEMA, primary_key=("trajectory_id", "turn_idx"), not_null=("action", "observation"),
              references={"trajectory_id": "trajectories (trajectory_id)"}),
    table_ddl("quarantine", QUARANTINE_SCHEMA, not_null=("source_path", "locator", "reason", "file_sha1", "batch")),
    table_ddl("mask_thresholds", THRESHOLD_SCHEMA, primary_key=("domain", "statistic")),
    table_ddl("ingest_log", LOG_SCHEMA, primary_key=("batch",)),
]) + """;
COMMENT ON TABLE turns IS 'One (action, observation) turn; statistics and the loss-mask decision as in DESIGN.md section 5.';
COMMENT ON COLUMN turns.obs_tokens IS 'observation length in tokens (whitespace tokens by default)';
COMMENT ON COLUMN turns.compression_ratio IS 'zlib bytes / UTF-8 bytes of the observation; low = repetitive';
COMMENT ON COLUMN turns.novelty IS 'share of observation word 3-grams unseen earlier in the trajectory; low = echo';
COMMENT ON COLUMN turns.line_surprisal IS 'mean -log2(document frequency) of the observation lines; low = boilerplate';
COMMENT ON COLUMN turns.informative IS 'true when the turn carries loss in CPT samples';
COMMENT ON COLUMN turns.mask_reason IS 'the statistic that decided: empty, novelty, line_surprisal, compression_ratio, obs_tokens or pass';
COMMENT ON TABLE quarantine IS 'Records that could not be read, with the reason (nothing is dropped silently).';
"""


@dataclass
class Store:
    """The store's tables in memory."""

    trajectories: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=TRAJECTORY_SCHEMA))
    turns: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=TURN_SCHEMA))
    quarantine: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=QUARANTINE_SCHEMA))
    thresholds: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=THRESHOLD_SCHEMA))
    log: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=LOG_SCHEMA))


@dataclass(frozen=True)
class IngestReport:
    """What one ingestion did.

    Attributes:
        tally: records in = trajectories kept + records quarantined, by quarantine reason.
        files: data files read; skipped: other entries under the given paths (non-data files,
            FIFOs and devices, symlink loops, unreadable folders...); skipped_reasons: their count by reason.
        turns: turns of the kept trajectories.
        informative_share: share of informative turns over the whole store (``None`` when the
            masks were not computed).
        by_source: ``{source: (trajectories, turns)}`` for this batch.
        sources: every source the store holds after the ingestion.
        path: the store file.
        unchanged: files not read again: the store holds them already, same path and same bytes.
    """

    tally: Tally
    files: int
    skipped: int
    turns: int
    informative_share: float | None
    by_source: dict[str, tuple[int, int]]
    sources: list[str]
    path: Path
    skipped_reasons: dict[str, int] = field(default_factory=dict)
    unchanged: int = 0


def load_store(path: str | Path) -> Store:
    """Read the store (an empty one when the file does not exist yet).

    Raises:
        WarehouseError: the file exists but is not a trajectory store.
    """
    if not Path(path).exists():
        return Store()
    with reading_store(path, STORE_KIND) as con:
        return Store(*(read_table(con, t) for t in ("trajectories", "turns", "quarantine", "mask_thresholds", "ingest_log")))


def write_store(path: str | Path, store: Store) -> Path:
    """Write the whole store atomically (the previous file stays if anything fails)."""
    with atomic_duckdb(path) as con:
        con.execute(STORE_DDL)
        insert_frame(con, "trajectories", store.trajectories.select(list(TRAJECTORY_SCHEMA)))
        insert_frame(con, "turns", store.turns.select(list(TURN_SCHEMA)))
        insert_frame(con, "quarantine", store.quarantine.select(list(QUARANTINE_SCHEMA)))
        insert_frame(con, "mask_thresholds", store.thresholds.select(list(THRESHOLD_SCHEMA)))
        insert_frame(con, "ingest_log", store.log.select(list(LOG_SCHEMA)))
    return Path(path)


@dataclass
class Batch:
    """Records read from files, before they join the store."""

    paths: list[str]
    files: list[str]
    skipped: int
    records_in: int
    trajectories: pl.DataFrame
    turns: pl.DataFrame
    quarantine: pl.DataFrame
    skipped_reasons: dict[str, int] = field(default_factory=dict)


def _sha1_or_none(path: Path) -> str | None:
    try:
        return file_sha1(path)
    except OSError:
        return None  # read_file will quarantine it with the reason


def read_batch(paths: Iterable[str | Path], progress: Callable[[int, int, str], None] | None = None, mapping: Mapping | None = None) -> Batch:
    """Read every data file under ``paths`` into frames in memory (turns without statistics), as
    :func:`ingest` reads them but without a store (for inspection and tests; memory grows with the input).

    Args:
        paths: files or folders.
        progress: called after each file with ``(files done, files in all, the file's source_path)``.
        mapping: read every file with this declarative mapping instead of detecting formats.

    Raises:
        FileNotFoundError: a path does not exist.
    """
    paths = [str(p) for p in paths]
    files, skipped = discover(paths)
    writer = _Writer(None, 0)
    for done, (f, rel) in enumerate(files, 1):
        for rec in read_file(f, rel, mapping):
            writer.add(rec)
        if progress:
            progress(done, len(files), rel)
    writer.flush()
    frames = writer.frames
    return Batch(
        paths=paths,
        files=[storable(rel) for _, rel in files],
        skipped=len(skipped),
        skipped_reasons=dict(Counter(why for _, why in skipped)),
        records_in=writer.records_in,
        trajectories=pl.concat(frames["trajectories"]).drop("batch") if frames["trajectories"] else pl.DataFrame(schema={k: v for k, v in TRAJECTORY_SCHEMA.items() if k != "batch"}),
        turns=pl.concat(frames["turns"]) if frames["turns"] else pl.DataFrame(schema={k: TURN_SCHEMA[k] for k in ("trajectory_id", "turn_idx", "action", "observation")}),
        quarantine=pl.concat(frames["quarantine"]).drop("batch") if frames["quarantine"] else pl.DataFrame(schema={k: v for k, v in QUARANTINE_SCHEMA.items() if k != "batch"}),
    )


def balance(path: str | Path) -> Tally:
    """The records balance of the latest ingest batch, re-counted from the store file.

    Returns:
        A tally: records in (from ``ingest_log``) = trajectories stored + records quarantined
        in that batch, by quarantine reason.

    Raises:
        WarehouseError: the file is not a store or has no batch yet.
    """
    with reading_store(path, STORE_KIND) as con:
        row = con.execute(
            """
            SELECT l.batch, l.records_in, (SELECT count(*) FROM trajectories t WHERE t.batch = l.batch)
            FROM ingest_log l ORDER BY l.batch DESC LIMIT 1
            """
        ).fetchone()
        reasons = con.execute("SELECT reason, count(*) FROM quarantine WHERE batch = ? GROUP BY 1", [row[0]]).fetchall() if row else []
    if row is None:
        raise WarehouseError(f"{path}: no ingest batch recorded")
    return Tally.of(row[1], row[2], dict(reasons), unit="records", kept_as="trajectories", dropped_as="quarantined")


def apply_masks(store: Store, config: MaskConfig = MaskConfig()) -> Store:
    """Recompute the four statistics and the mask decision over every turn of the store."""
    if store.turns.height == 0:
        return store
    base = store.turns.select("trajectory_id", "turn_idx", "action", "observation").join(
        store.trajectories.select("trajectory_id", "domain"), on="trajectory_id", how="left"
    )
    masked, limits = mask_turns(base, config)
    return Store(store.trajectories, masked.select(list(TURN_SCHEMA)), store.quarantine, limits, store.log)


@dataclass(frozen=True)
class MaskReport:
    """The store's turns after :func:`recompute_masks`.

    Attributes:
        turns: every turn with its statistics and decision, plus its trajectory's ``source`` and ``domain``.
        thresholds: the thresholds in force (``mask_thresholds``).
    """

    turns: pl.DataFrame
    thresholds: pl.DataFrame

    @property
    def missing(self) -> int:
        """Turns lacking a statistic or a decision (0 after a complete recomputation)."""
        cols = ("obs_tokens", "compression_ratio", "novelty", "line_surprisal", "informative")
        return self.turns.filter(pl.any_horizontal(pl.col(*cols).is_null())).height

    @property
    def informative_share(self) -> float:
        """Share (0–1) of informative turns; 0 for an empty store."""
        return float(self.turns["informative"].mean() or 0.0) if self.turns.height else 0.0

    def per_source(self) -> pl.DataFrame:
        """``(source, turns, informative_share)`` per source, by source."""
        return self.turns.group_by("source").agg(pl.len().alias("turns"), pl.col("informative").mean().alias("informative_share")).sort("source")

    def reasons(self) -> pl.DataFrame:
        """``(mask_reason, len)``: how many turns each statistic decided, most first."""
        return self.turns.group_by("mask_reason").len().sort("len", descending=True)


def recompute_masks(warehouse: Warehouse, config: MaskConfig = MaskConfig(),
                    store_memory_mb: int = DEFAULT_STORE_MEMORY_MB) -> MaskReport:
    """Recompute the four statistics and the mask decision of every stored turn and write the store.

    The corpus-wide part runs in DuckDB SQL (:func:`masks_in_sql`) in a copy of the store that
    replaces it when done, under DuckDB's memory limit ``store_memory_mb`` MiB (:func:`memory_limited`);
    the report holds the statistics and decisions (no text) of every turn.

    Raises:
        WarehouseError: no store, or the store file is unreadable (nothing is written).
    """
    path = warehouse.trajectory_store
    with file_lock(path):
        with reading_store(path, STORE_KIND) as ro:
            ro.execute("SELECT batch FROM ingest_log LIMIT 0")
        with atomic_duckdb(path, update=True) as con, memory_limited(con, store_memory_mb):
            masks_in_sql(con, config)
    with reading_store(path, STORE_KIND) as con:
        turns = con.sql("""SELECT u.trajectory_id, u.turn_idx, u.obs_tokens, u.compression_ratio, u.novelty, u.line_surprisal,
                                  u.informative, u.mask_reason, t.source, t.domain
                           FROM turns u JOIN trajectories t USING (trajectory_id)""").pl()
        limits = read_table(con, "mask_thresholds")
    return MaskReport(turns, limits)


CHUNK_TURNS = 2_000
"""Turns buffered before a chunk goes to the store (with its trajectory-local statistics)."""

# Unicode White_Space, as polars' (Rust regex) ``\s`` in ``mask._line_surprisal``; RE2's ``\s`` is ASCII only
_WS = r"[\t\n\x{0b}\f\r \x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]+"


class _Writer:
    """Records of one ingest batch into an open store connection, in chunks of whole trajectories
    (with ``con=None``, into frames kept in :attr:`frames`, turns without statistics)."""

    def __init__(self, con: Any, batch_no: int, chunk_turns: int = CHUNK_TURNS) -> None:
        self.con, self.batch_no, self.chunk_turns = con, batch_no, chunk_turns
        self.frames: dict[str, list[pl.DataFrame]] = {"trajectories": [], "turns": [], "quarantine": []}
        self.traj_rows: list[tuple] = []
        self.turn_rows: list[tuple] = []
        self.q_rows: list[tuple] = []
        self.seen: set[str] = set()
        self.records_in = self.kept = self.turns = 0
        self.reasons: Counter = Counter()
        self.by_source: dict[str, list[int]] = {}

    def add(self, rec: Trajectory | Quarantined) -> None:
        """Count ``rec`` and buffer its rows (a trajectory read twice in a batch is quarantined);
        a full chunk is written."""
        self.records_in += 1
        if isinstance(rec, Quarantined):
            self._quarantine(rec.source_path, rec.locator, rec.reason, rec.file_sha1)
            return
        tid = rec.trajectory_id
        if tid in self.seen:  # the same file reached through two given paths
            self._quarantine(rec.source_path, rec.locator, "duplicate record (already read in this batch)", rec.file_sha1)
            return
        self.seen.add(tid)
        self.kept += 1
        self.turns += len(rec.turns)
        counts = self.by_source.setdefault(rec.source, [0, 0])
        counts[0] += 1
        counts[1] += len(rec.turns)
        # text as valid UTF-8 (a JSON "\ud800" is a lone surrogate that polars and DuckDB cannot hold)
        self.traj_rows.append(storable_row((tid, rec.source, rec.source_path, rec.format, rec.domain, rec.task, len(rec.turns),
                                            rec.locator, rec.file_sha1, self.batch_no)))
        self.turn_rows.extend((tid, i, storable(t.action), storable(t.observation)) for i, t in enumerate(rec.turns))
        if len(self.turn_rows) >= self.chunk_turns:
            self.flush()

    def _quarantine(self, path: str, locator: str, reason: str, sha: str) -> None:
        row = storable_row((path, locator, reason, sha, self.batch_no))
        self.q_rows.append(row)
        self.reasons[row[2]] += 1
        if len(self.q_rows) >= self.chunk_turns:
            self.flush()

    def flush(self) -> None:
        """Write the buffered rows; the turns get their trajectory-local statistics (tokens, compression, novelty)."""
        frames = {
            "trajectories": pl.DataFrame(self.traj_rows, schema=TRAJECTORY_SCHEMA, orient="row") if self.traj_rows else None,
            "turns": pl.DataFrame(self.turn_rows, schema={k: TURN_SCHEMA[k] for k in ("trajectory_id", "turn_idx", "action", "observation")},
                                  orient="row") if self.turn_rows else None,
            "quarantine": pl.DataFrame(self.q_rows, schema=QUARANTINE_SCHEMA, orient="row") if self.q_rows else None,
        }
        for table, frame in frames.items():
            if frame is None:
                continue
            if self.con is None:
                self.frames[table].append(frame)
            else:
                insert_frame(self.con, table, local_statistics(frame) if table == "turns" else frame)
        self.traj_rows, self.turn_rows, self.q_rows = [], [], []


def local_statistics(turns: pl.DataFrame) -> pl.DataFrame:
    """``obs_tokens``, ``compression_ratio`` and ``novelty`` of turns of whole trajectories (they depend on
    nothing else); ``line_surprisal`` and the decision, which depend on the corpus, are left null."""
    stats = compute_local_statistics(turns)
    return stats.with_columns(pl.lit(None, dtype=pl.Float64).alias("line_surprisal"), pl.lit(None, dtype=pl.Boolean).alias("informative"),
                              pl.lit(None, dtype=pl.String).alias("mask_reason")).select(list(TURN_SCHEMA))


def masks_in_sql(con: Any, config: MaskConfig = MaskConfig()) -> None:
    """Line surprisal, the per-domain thresholds and the mask decision of every turn, in DuckDB SQL.

    The same definitions as :func:`~worldforge.trajectories.mask.mask_turns` (DESIGN.md §5): a line
    is compared with runs of Unicode white space collapsed and trimmed; its document frequency is
    the number of trajectories holding it; ``N`` the number of trajectories with turns; a turn's
    surprisal the mean of ``-log2(df / N)`` over its non-empty lines (0 without any); thresholds
    the lower ``quantile`` (element ``floor(q * (n - 1))`` of the sorted values) of each statistic
    over a domain's non-empty turns, capped, or overridden. DuckDB works out of core, so memory does
    not grow with the store. Turns lacking their local statistics (written by an older version)
    get them first.
    """
    missing = con.execute("SELECT count(*) FROM turns WHERE obs_tokens IS NULL OR novelty IS NULL OR compression_ratio IS NULL").fetchone()[0]
    if missing:
        _fill_local_statistics(con)
    con.execute("DROP TABLE IF EXISTS temp.wf_surprisal")
    con.execute(f"""
        CREATE TEMP TABLE wf_surprisal AS
        WITH lines AS (
            SELECT trajectory_id, turn_idx, trim(regexp_replace(line, '{_WS}', ' ', 'g'), ' ') AS line
            FROM (SELECT trajectory_id, turn_idx, unnest(string_split(observation, chr(10))) AS line FROM turns)
        ), kept AS (SELECT * FROM lines WHERE line <> ''),
        df AS (SELECT line, count(DISTINCT trajectory_id) AS df FROM kept GROUP BY line),
        n AS (SELECT greatest(count(DISTINCT trajectory_id), 1)::DOUBLE AS n FROM turns)
        SELECT k.trajectory_id, k.turn_idx, avg(-log2(df.df / n.n)) AS s
        FROM kept k JOIN df USING (line), n GROUP BY k.trajectory_id, k.turn_idx""")
    con.execute("""UPDATE turns SET line_surprisal = greatest(coalesce(s.s, 0.0), 0.0) + 0.0
                   FROM (SELECT u.trajectory_id, u.turn_idx, w.s FROM turns u LEFT JOIN temp.wf_surprisal w USING (trajectory_id, turn_idx)) s
                   WHERE turns.trajectory_id = s.trajectory_id AND turns.turn_idx = s.turn_idx""")
    con.execute("DROP TABLE temp.wf_surprisal")
    rows = []
    domains = [r[0] for r in con.execute("SELECT DISTINCT t.domain FROM turns u JOIN trajectories t USING (trajectory_id) ORDER BY 1").fetchall()]
    for stat in STATISTICS:
        lower = dict(con.execute(f"""
            SELECT domain, v FROM (
                SELECT t.domain, u.{stat}::DOUBLE AS v, row_number() OVER (PARTITION BY t.domain ORDER BY u.{stat}) - 1 AS i,
                       count(*) OVER (PARTITION BY t.domain) AS n
                FROM turns u JOIN trajectories t USING (trajectory_id) WHERE u.obs_tokens > 0)
            WHERE i = floor((n - 1)::DOUBLE * ?)""", [config.quantile]).fetchall())
        for domain in domains:
            override = config.overrides.get(domain, {}).get(stat)
            if override is not None:
                rows.append((domain, stat, float(override), "override"))
                continue
            q = lower.get(domain, 0.0)
            q = 0.0 if q is None or math.isnan(q) else float(q)
            cap = config.caps.get(stat, math.inf)
            rows.append((domain, stat, min(q, cap), "cap" if cap < q else "quantile"))
    limits = pl.DataFrame(rows, schema=THRESHOLD_SCHEMA, orient="row").sort("domain", "statistic")
    con.execute("DELETE FROM mask_thresholds")
    insert_frame(con, "mask_thresholds", limits)
    cases = " ".join(f"WHEN u.{stat} <= (SELECT threshold FROM mask_thresholds m WHERE m.domain = t.domain AND m.statistic = '{stat}') THEN '{stat}'"
                     for stat in DECISION_ORDER)
    con.execute(f"""UPDATE turns SET mask_reason = d.reason, informative = d.reason = 'pass'
                    FROM (SELECT u.trajectory_id, u.turn_idx, CASE WHEN u.obs_tokens = 0 THEN 'empty' {cases} ELSE 'pass' END AS reason
                          FROM turns u JOIN trajectories t USING (trajectory_id)) d
                    WHERE turns.trajectory_id = d.trajectory_id AND turns.turn_idx = d.turn_idx""")


def _fill_local_statistics(con: Any, batch_rows: int = 8192) -> None:
    """Compute the trajectory-local statistics of turns that lack them, one chunk of trajectories at a time."""
    con.execute("DROP TABLE IF EXISTS temp.wf_local")
    con.execute("CREATE TEMP TABLE wf_local (trajectory_id VARCHAR, turn_idx BIGINT, obs_tokens BIGINT, compression_ratio DOUBLE, novelty DOUBLE)")
    reader = con.execute("""SELECT trajectory_id, turn_idx, action, observation FROM turns WHERE trajectory_id IN
                            (SELECT DISTINCT trajectory_id FROM turns WHERE obs_tokens IS NULL OR novelty IS NULL OR compression_ratio IS NULL)
                            ORDER BY trajectory_id, turn_idx""").fetch_record_batch(batch_rows)
    pending: pl.DataFrame | None = None
    writer = con.cursor()
    for batch in reader:
        frame = pl.from_arrow(batch)
        frame = frame if pending is None else pl.concat([pending, frame])
        last = frame["trajectory_id"][-1]
        done, pending = frame.filter(pl.col("trajectory_id") != last), frame.filter(pl.col("trajectory_id") == last)
        if done.height:
            insert_frame(writer, "temp.wf_local", compute_local_statistics(done).select("trajectory_id", "turn_idx", "obs_tokens", "compression_ratio", "novelty"))
    if pending is not None and pending.height:
        insert_frame(writer, "temp.wf_local", compute_local_statistics(pending).select("trajectory_id", "turn_idx", "obs_tokens", "compression_ratio", "novelty"))
    con.execute("""UPDATE turns SET obs_tokens = l.obs_tokens, compression_ratio = l.compression_ratio, novelty = l.novelty
                   FROM temp.wf_local l WHERE turns.trajectory_id = l.trajectory_id AND turns.turn_idx = l.turn_idx""")
    con.execute("DROP TABLE temp.wf_local")


def ingest(
    paths: Iterable[str | Path],
    warehouse: Warehouse,
    config: MaskConfig = MaskConfig(),
    progress: Callable[[int, int, str], None] | None = None,
    compute_masks: bool = True,
    mapping: Mapping | None = None,
    force: bool = False,
    chunk_turns: int = CHUNK_TURNS,
    max_record_mb: float = DEFAULT_MAX_RECORD_MB,
    store_memory_mb: int = DEFAULT_STORE_MEMORY_MB,
) -> IngestReport:
    """Read trajectory files into ``<warehouse>/trajectories.duckdb``, streaming.

    Records go to the store in chunks of ``chunk_turns`` turns (whole trajectories), each with its
    trajectory-local statistics; the corpus-wide ones (line surprisal, thresholds, the decision)
    are then computed in DuckDB SQL over the whole store (:func:`masks_in_sql`). Memory therefore
    holds one chunk, the largest trajectory and the ids of this batch, not the input nor the store.
    The work happens in a copy of the store that replaces it only when everything succeeded
    (``atomic_duckdb``): a failure leaves the previous store as it was, and readers of the store
    are never blocked.

    Incremental: a file the store already holds with the same ``source_path`` and the same bytes
    (SHA-1) is not read again (:attr:`IngestReport.unchanged`) unless ``force``. A file read again
    replaces every record of the same path or the same bytes. Writers take turns on the store's
    file lock (``trajectories.duckdb.lock``: other ingests, the recording proxies, mask
    recomputation), in any process.

    Args:
        paths: files or folders (folders are walked; see :func:`~worldforge.trajectories.readers.discover`).
        warehouse: the warehouse.
        config: the mask thresholds.
        progress: called after each file with ``(files done, files in all, the file's source_path)``.
        compute_masks: recompute the loss-mask statistics over the whole store (the
            ``turn_mask_stats`` asset does it as a step of its own).
        mapping: read every file with this declarative mapping
            (:func:`~worldforge.trajectories.readers.mapping.load_mapping`) instead of detecting formats.
        force: read every file, even those already ingested unchanged.
        chunk_turns: turns buffered before they are written.
        max_record_mb: records over this size (MiB) are quarantined with their size (default
            :data:`~worldforge.trajectories.readers.DEFAULT_MAX_RECORD_MB`; the edges pass ``WORLDFORGE_MAX_RECORD_MB``;
            see :func:`~worldforge.trajectories.readers.read_file`).
            A record under it costs about 11× its size in memory while its statistics are
            computed (``bench/ingest.py`` measures it; target ≤ 16×).
        store_memory_mb: DuckDB's memory limit (MiB) while the batch is written and the masks computed (default
            :data:`DEFAULT_STORE_MEMORY_MB`; the edges pass ``WORLDFORGE_STORE_MEMORY_MB``; see :func:`memory_limited`).

    Raises:
        FileNotFoundError: a path does not exist (nothing is written).
        WarehouseError: the existing store is unreadable (nothing is written).
    """
    path = warehouse.trajectory_store
    paths = [str(p) for p in paths]
    files, skipped = discover(paths)
    with file_lock(path):
        existed = path.exists()
        known: set[tuple[str, str]] = set()
        unmasked = 0
        if existed:
            with reading_store(path, STORE_KIND) as ro:
                if not force:
                    known = {(p, h) for p, h in ro.execute(
                        "SELECT source_path, file_sha1 FROM trajectories UNION SELECT source_path, file_sha1 FROM quarantine").fetchall() if h}
                ro.execute("SELECT batch FROM ingest_log LIMIT 0")
                unmasked = ro.execute("SELECT count(*) FROM turns WHERE informative IS NULL").fetchone()[0] if compute_masks else 0
        todo: list[tuple[Path, str, str | None]] = []
        unchanged = 0
        for f, rel in files:
            sha = _sha1_or_none(f)
            if (storable(rel), sha) in known:
                unchanged += 1
            else:
                todo.append((f, rel, sha))
        if existed and not todo and not unmasked:  # nothing new: the store stays as it is (no copy, no recomputation)
            with reading_store(path, STORE_KIND) as ro:
                sources = [r[0] for r in ro.execute("SELECT DISTINCT source FROM trajectories ORDER BY 1").fetchall()]
                share_row = ro.execute("SELECT avg(informative::INT) FROM turns").fetchone() if compute_masks else None
            writer = _Writer(None, 0)
        else:
            sources, share_row, writer = _write_batch(path, existed, todo, paths, len(files), unchanged, config, progress,
                                                      compute_masks, mapping, chunk_turns, max_record_mb,
                                                      store_memory_mb)
    share = (float(share_row[0]) if share_row and share_row[0] is not None else 0.0) if compute_masks else None
    tally = Tally.of(writer.records_in, writer.kept, dict(writer.reasons), unit="records", kept_as="trajectories", dropped_as="quarantined")
    return IngestReport(
        tally=tally, files=len(todo), skipped=len(skipped), turns=writer.turns, informative_share=share,
        by_source={s: (c[0], c[1]) for s, c in writer.by_source.items()}, sources=sources, path=path,
        skipped_reasons=dict(Counter(why for _, why in skipped)), unchanged=unchanged,
    )


def _write_batch(path: Path, existed: bool, todo: list[tuple[Path, str, str | None]], paths: list[str], n_files: int, unchanged: int,
                 config: MaskConfig, progress: Callable[[int, int, str], None] | None, compute_masks: bool, mapping: Mapping | None,
                 chunk_turns: int, max_record_mb: float, store_memory_mb: int) -> tuple[list[str], tuple | None, _Writer]:
    """The files of ``todo`` into a copy of the store that replaces it (see :func:`ingest`)."""
    with atomic_duckdb(path, update=existed) as con, memory_limited(con, store_memory_mb):
        if not existed:
            con.execute(STORE_DDL)
        batch_no = con.execute("SELECT coalesce(max(batch), 0) + 1 FROM ingest_log").fetchone()[0]
        _delete_files(con, [storable(rel) for _, rel, _ in todo], [sha for _, _, sha in todo if sha])
        writer = _Writer(con, batch_no, chunk_turns)
        done = unchanged
        for f, rel, _ in todo:
            for rec in read_file(f, rel, mapping, max_record_mb):
                writer.add(rec)
            done += 1
            if progress:
                progress(done, n_files, rel)
        writer.flush()
        insert_frame(con, "ingest_log", pl.DataFrame(
            [(batch_no, datetime.now(timezone.utc).replace(tzinfo=None), " ".join(paths), len(todo), writer.records_in,
              writer.kept, sum(writer.reasons.values()), writer.turns)], schema=LOG_SCHEMA, orient="row"))
        if compute_masks:
            masks_in_sql(con, config)
        share_row = con.execute("SELECT avg(informative::INT) FROM turns").fetchone() if compute_masks else None
        sources = [r[0] for r in con.execute("SELECT DISTINCT source FROM trajectories ORDER BY 1").fetchall()]
    return sources, share_row, writer


@contextlib.contextmanager
def memory_limited(con: Any, mb: int = DEFAULT_STORE_MEMORY_MB) -> Iterator[None]:
    """DuckDB's ``memory_limit`` at ``mb`` MiB (default :data:`DEFAULT_STORE_MEMORY_MB`) for the
    block, then back as it was; beyond it DuckDB spills to its temporary directory (the writer
    instance's, under the system's temporary folder: :func:`worldforge.warehouse.duck.atomic_duckdb`)."""
    before = con.execute("SELECT current_setting('memory_limit')").fetchone()[0]
    con.execute(f"SET memory_limit = '{int(mb)}MiB'")
    try:
        yield
    finally:
        con.execute(f"SET memory_limit = {quote_str(before)}")


def _delete_files(con: Any, rels: list[str], shas: list[str]) -> None:
    """Remove the records of files about to be read again (same path or same bytes).

    Each step commits on its own: DuckDB refuses to delete a referenced key in the transaction
    that deleted its references. The store file is a copy until the ingest succeeds, so the
    intermediate commits are never seen.
    """
    if not rels and not shas:
        return
    con.execute("CREATE TEMP TABLE IF NOT EXISTS wf_replace (source_path VARCHAR, file_sha1 VARCHAR)")
    con.execute("DELETE FROM temp.wf_replace")
    insert_frame(con, "temp.wf_replace", pl.DataFrame({"source_path": rels + [None] * len(shas), "file_sha1": [None] * len(rels) + shas},
                                                       schema={"source_path": pl.String, "file_sha1": pl.String}))
    hit = "(source_path IN (SELECT source_path FROM temp.wf_replace) OR file_sha1 IN (SELECT file_sha1 FROM temp.wf_replace))"
    con.execute(f"DELETE FROM turns WHERE trajectory_id IN (SELECT trajectory_id FROM trajectories WHERE {hit})")
    con.execute("COMMIT")
    con.execute("BEGIN TRANSACTION")
    con.execute(f"DELETE FROM trajectories WHERE {hit}")
    con.execute(f"DELETE FROM quarantine WHERE {hit}")
    con.execute("DROP TABLE temp.wf_replace")


@dataclass(frozen=True)
class StoreCounts:
    """Row counts of a trajectory store (all zero when there is no store yet).

    Attributes:
        informative_share: share (0–1) of turns that carry loss, ``None`` without turns.
    """

    trajectories: int = 0
    sources: int = 0
    turns: int = 0
    quarantined: int = 0
    informative_share: float | None = None


def store_counts(path: str | Path) -> StoreCounts:
    """Count a store file's trajectories, sources, turns and quarantined records, in SQL.

    Raises:
        WarehouseError: the file exists but is not a trajectory store.
    """
    if not Path(path).exists():
        return StoreCounts()
    with reading_store(path, STORE_KIND) as con:
        t, s = con.execute("SELECT count(*), count(DISTINCT source) FROM trajectories").fetchone()
        u, share = con.execute("SELECT count(*), avg(informative::INT) FROM turns").fetchone()
        q = con.execute("SELECT count(*) FROM quarantine").fetchone()[0]
    return StoreCounts(t, s, u, q, None if u == 0 or share is None else float(share))


def export_shard(warehouse: Warehouse, source: str) -> tuple[Path, int]:
    """One source's turns, with their trajectory fields and statistics, as a Parquet shard.

    Writes ``<warehouse>/trajectories/<source>.parquet`` (columns: ``trajectory_id, source,
    domain, task, turn_idx, action, observation`` and the four statistics with ``informative``
    and ``mask_reason``) atomically.

    Returns:
        ``(path, rows)``.

    Raises:
        WarehouseError: no store, or the store holds no trajectory of ``source``.
    """
    path = warehouse.trajectory_store
    out = warehouse.shard(source)
    con = open_readonly(path)
    try:
        n = con.execute("SELECT count(*) FROM trajectories WHERE source = ?", [source]).fetchall()[0][0]
        if n == 0:
            known = [r[0] for r in con.execute("SELECT DISTINCT source FROM trajectories ORDER BY 1").fetchall()]
            raise WarehouseError(f"{path}: no trajectories of source {source!r} (the store holds: {', '.join(known) or 'none'})")
        with atomic_file(out) as tmp:
            con.execute(
                f"""COPY (SELECT t.trajectory_id, t.source, t.domain, t.task, u.turn_idx, u.action, u.observation, u.obs_tokens,
                             u.compression_ratio, u.novelty, u.line_surprisal, u.informative, u.mask_reason
                      FROM turns u JOIN trajectories t USING (trajectory_id) WHERE t.source = {quote_str(source)}
                      ORDER BY t.trajectory_id, u.turn_idx) TO {quote_str(str(tmp))} (FORMAT parquet)"""
            )
        rows = con.execute("SELECT count(*) FROM turns u JOIN trajectories t USING (trajectory_id) WHERE t.source = ?", [source]).fetchall()[0][0]
    finally:
        con.close()
    return out, rows


_TURNS_SQL = """
SELECT t.trajectory_id, t.source, t.domain, coalesce(t.task, '') AS task, u.turn_idx, u.action, u.observation,
       u.informative, u.mask_reason
FROM turns u JOIN trajectories t USING (trajectory_id)
ORDER BY t.trajectory_id, u.turn_idx
"""


def trajectories_from_batches(batches: Iterable, origin: str, extra: dict[str, dict] | None = None) -> Iterator[StoredTrajectory]:
    """Trajectories from Arrow record batches of turns sorted by ``trajectory_id, turn_idx``.

    Args:
        batches: record batches with columns ``trajectory_id, source, domain, task, turn_idx,
            action, observation, informative, mask_reason`` (the last two may be null: such a
            turn is informative, ``not computed``).
        origin: ``real`` or ``simulated``.
        extra: per trajectory id, :attr:`StoredTrajectory.extra`.

    Yields:
        One :class:`StoredTrajectory` at a time (memory: one trajectory and one batch).
    """
    extra = extra or {}
    current: StoredTrajectory | None = None
    for batch in batches:
        cols = batch.to_pydict()
        for i in range(batch.num_rows):
            tid = cols["trajectory_id"][i]
            if current is None or current.trajectory_id != tid:
                if current is not None:
                    yield current
                current = StoredTrajectory(tid, cols["source"][i], cols["domain"][i], cols["task"][i], origin, [], extra.get(tid, {}))
            informative = cols["informative"][i]
            current.turns.append(StoredTurn(cols["turn_idx"][i], cols["action"][i], cols["observation"][i],
                                            bool(informative) if informative is not None else True,
                                            cols["mask_reason"][i] or "not computed"))
    if current is not None:
        yield current


def iter_trajectories(path: str | Path, batch_rows: int = 8192) -> Iterator[StoredTrajectory]:
    """Every trajectory of a store file with its turns and mask decisions, in ``trajectory_id`` order.

    Turns are streamed through an Arrow batch reader, so memory holds one trajectory and one
    batch however large the store is.

    Args:
        path: the store file (``<warehouse>/trajectories.duckdb``); a missing file yields nothing.
        batch_rows: turns per Arrow batch.

    Raises:
        WarehouseError: the file exists but is not a trajectory store.
    """
    if not Path(path).exists():
        return
    with reading_store(path, STORE_KIND) as con:
        yield from trajectories_from_batches(con.sql(_TURNS_SQL).to_arrow_reader(batch_rows), "real")
