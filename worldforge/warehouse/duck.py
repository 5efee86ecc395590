"""DuckDB files of the warehouse: atomic writes, reading back, and constraint introspection.

Every DuckDB file is written to a temporary sibling and renamed over the target only once it
is complete and closed, so a failed build leaves the previous one untouched (``os.replace`` is
atomic on POSIX within one file system); plain files and folders use
:mod:`worldforge.warehouse.atomic`.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb
import polars as pl

from worldforge.errors import WarehouseError
from worldforge.warehouse.atomic import make_parent, out_of_space, remove_temporary, sweep_dead_temporaries

log = logging.getLogger(__name__)

_DUCK_TYPES: dict[type[pl.DataType], str] = {
    pl.Int64: "BIGINT",
    pl.Int32: "INTEGER",
    pl.Float64: "DOUBLE",
    pl.Float32: "FLOAT",
    pl.String: "VARCHAR",
    pl.Date: "DATE",
    pl.Boolean: "BOOLEAN",
    pl.Datetime: "TIMESTAMP",
    pl.Null: "VARCHAR",
}


def quote_ident(name: str) -> str:
    """A DuckDB identifier, double-quoted."""
    return '"' + name.replace('"', '""') + '"'


def quote_qualified(name: str) -> str:
    """``name`` or ``schema.name``, each part double-quoted."""
    return ".".join(quote_ident(part) for part in name.split("."))


def quote_str(text: str) -> str:
    """A DuckDB string literal."""
    return "'" + text.replace("'", "''") + "'"


def duck_type(dtype: pl.DataType) -> str:
    """The DuckDB column type for a polars dtype.

    Raises:
        WarehouseError: for dtypes the warehouse does not store.
    """
    for cls, name in _DUCK_TYPES.items():
        if isinstance(dtype, cls):
            return name
    raise WarehouseError(f"cannot store polars dtype {dtype} in DuckDB")


def table_ddl(name: str, schema: dict[str, pl.DataType | type[pl.DataType]], *, primary_key: tuple[str, ...] = (),
              not_null: tuple[str, ...] = (), references: dict[str, str] | None = None) -> str:
    """``CREATE TABLE`` for a store table declared once as a polars schema: the frames a store
    writes and the table it creates come from the same ``{column: dtype}``.

    Args:
        name: the table.
        schema: ``{column: polars dtype}`` in column order.
        primary_key: the key's columns (a one-column key is written on its column).
        not_null: columns that may not be NULL (key columns are already).
        references: ``{column: "table (column)"}`` foreign keys.

    Raises:
        WarehouseError: a dtype the warehouse does not store; a key, not-null or referencing
            column the schema does not have.
    """
    refs = references or {}
    unknown = sorted((set(primary_key) | set(not_null) | set(refs)) - set(schema))
    if unknown:
        raise WarehouseError(f"table {name}: no columns {unknown} in its schema")
    cols = []
    for col, dtype in schema.items():
        spec = f"{quote_ident(col)} {duck_type(dtype() if isinstance(dtype, type) else dtype)}"
        if primary_key == (col,):
            spec += " PRIMARY KEY"
        elif col in not_null:
            spec += " NOT NULL"
        if col in refs:
            spec += f" REFERENCES {refs[col]}"
        cols.append(spec)
    if len(primary_key) > 1:
        cols.append(f"PRIMARY KEY ({', '.join(quote_ident(c) for c in primary_key)})")
    return f"CREATE TABLE {quote_ident(name)} ({', '.join(cols)})"


def insert_frame(con: duckdb.DuckDBPyConnection, table: str, frame: pl.DataFrame) -> None:
    """Append a polars frame to an existing table (``name`` or ``schema.name``; columns matched by name).

    The frame is read through DuckDB's replacement scan of a local Arrow table, the
    fastest path for small frames (about 3x faster than ``register`` here).
    """
    if frame.height == 0:
        return
    _wf_src = frame.to_arrow()  # noqa: F841 - read by name in the SQL below
    cols = ", ".join(quote_ident(c) for c in frame.columns)
    con.execute(f"INSERT INTO {quote_qualified(table)} ({cols}) SELECT {cols} FROM _wf_src")


_writer_lock = threading.Lock()
_writer_db: tuple[int, duckdb.DuckDBPyConnection] | None = None
_aliases = itertools.count()


def _writer_cursor() -> duckdb.DuckDBPyConnection:
    """A cursor on this process's in-memory DuckDB instance, used to ATTACH files for writing and reading.

    Attaching a new file to a running instance costs about 8 ms here, against about 33 ms
    for starting a new instance per file (``duckdb.connect(path)``). A forked child makes
    its own instance instead of sharing its parent's.

    The instance turns on DuckDB's allocator background threads (``allocator_background_threads``,
    process-wide): without them, the memory DuckDB frees after a write stays with its allocator
    (jemalloc) while the process idles, so a long-lived server that records large episodes kept
    hundreds of MiB it no longer used (issue 33: 2 MiB episodes, +300 MiB per 100 MiB recorded);
    with them it is handed back to the OS within seconds (``bench/load.py --payload-kb 2048``).
    """
    global _writer_db
    with _writer_lock:
        if _writer_db is None or _writer_db[0] != os.getpid():
            # spill files under the system's temporary folder, not DuckDB's default ".tmp" in the current directory
            spill = Path(tempfile.gettempdir()) / f"worldforge-duckdb-{os.getpid()}"
            _writer_db = (os.getpid(), duckdb.connect(":memory:", config={"temp_directory": str(spill),
                                                                  "allocator_background_threads": True}))
        return _writer_db[1].cursor()


def rows_per_group(rows: int) -> int:
    """The ``row_group_size`` of :func:`atomic_duckdb` that splits an insert of ``rows`` rows into two row groups (half the
    rows, rounded up to DuckDB's 2,048-row vectors; at least one vector): both are then written straight to the file's
    blocks, which halves the time of a large write against the write-ahead log (a 98,000-row insert: about 0.26 s
    against 0.36 s here) for about 1 % more bytes (two row groups compress separately)."""
    return max(2048, -(-rows // 4096) * 2048)


@contextlib.contextmanager
def atomic_duckdb(path: str | Path, update: bool = False, block_size: int | None = None,
                  row_group_size: int | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """Open a DuckDB file that replaces ``path`` only if the block succeeds.

    Args:
        path: the file to (re)place.
        update: start from a copy of the existing file instead of an empty one (which keeps its block size).
        block_size: bytes per storage block of a new file (DuckDB's ``BLOCK_SIZE``, 16 KiB to 256 KiB, a
            power of two); ``None``: DuckDB's default, 256 KiB.
        row_group_size: rows per row group of what the block writes (DuckDB's ``ROW_GROUP_SIZE``, a multiple of 2,048);
            ``None``: DuckDB's default, 122,880. A transaction whose inserts into a table fill more than one row group
            has them written straight to the file's blocks (DuckDB's optimistic writing) instead of into the
            write-ahead log at ``COMMIT`` and then again, compressed, at the checkpoint: a size that splits a large
            insert in two halves the write (:func:`rows_per_group`).

    Yields:
        A connection whose default catalog is a temporary file beside ``path``.

    Raises:
        WarehouseError: ``update`` and ``path`` does not exist, or is damaged (:func:`damaged_error`).
        StorageFullError: the file system ran out of space, in the copy, the block, ``COMMIT`` or the checkpoint
            (:func:`~worldforge.warehouse.atomic.out_of_space`).
        Exception: whatever else the block, the copy, ``COMMIT``, ``DETACH`` or the rename raises (``KeyboardInterrupt``
            included); the temporary file and its write-ahead log are removed and ``path`` is untouched.
    """
    target = Path(path)
    if target.is_dir():  # checked before anything is written: nothing to clean up, one clear line
        raise WarehouseError(f"{target}: is a folder, not a DuckDB file (move or remove it, then run again)")
    make_parent(target)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}-{threading.get_ident()}")
    remove_temporary(tmp)  # a crashed run of this process id and thread left it
    sweep_dead_temporaries(target)  # and those of killed writers (other process ids)
    if update and not target.is_file():
        raise WarehouseError(f"{target}: no such DuckDB file to update (build the world first)")
    alias = f"wf_write_{next(_aliases)}"
    guard = damage_guard(target) if update else contextlib.nullcontext()  # a damaged file to update: one line
    with guard:
        yield from _atomic_write(target, tmp, alias, update, block_size, row_group_size)


def _atomic_write(target: Path, tmp: Path, alias: str, update: bool, block_size: int | None,
                  row_group_size: int | None) -> Iterator[duckdb.DuckDBPyConnection]:
    """The body of :func:`atomic_duckdb` (a generator it delegates to)."""
    try:
        with out_of_space(target, tmp):
            if update:
                shutil.copyfile(target, tmp)
            con = _writer_cursor()
            try:
                options = [f"BLOCK_SIZE {int(block_size)}"] if block_size is not None and not update else []
                if row_group_size is not None:
                    options.append(f"ROW_GROUP_SIZE {int(row_group_size)}")
                con.execute(f"ATTACH {quote_str(str(tmp))} AS {alias}" + (f" ({', '.join(options)})" if options else ""))
                ok = False
                try:
                    con.execute(f"USE {alias}")
                    con.execute("BEGIN TRANSACTION")
                    yield con
                    con.execute("COMMIT")
                    ok = True
                finally:
                    try:
                        if not ok:
                            with contextlib.suppress(duckdb.Error):  # no transaction when USE/BEGIN failed
                                con.execute("ROLLBACK")
                        con.execute("USE memory")
                    finally:
                        if ok:
                            con.execute(f"DETACH {alias}")  # checkpoints and closes the file; a failure keeps the old one
                        else:
                            with contextlib.suppress(duckdb.Error):  # the block's own exception is the one to see
                                con.execute(f"DETACH {alias}")
            finally:
                con.close()
            os.replace(tmp, target)  # only reached when the block, COMMIT and DETACH succeeded
            log.debug("wrote %s", target)
    finally:
        remove_temporary(tmp)  # and its .wal: after a failure, an exception or KeyboardInterrupt


def _existing(path: str | Path) -> Path:
    """``path`` as a Path when it is a file; a folder or nothing there is a :class:`WarehouseError`."""
    p = Path(path)
    if p.is_dir():
        raise WarehouseError(f"{p}: is a folder, not a DuckDB file")
    if not p.is_file():
        raise WarehouseError(f"{p}: no such DuckDB file")
    return p


_DAMAGE_SIGNS = ("corrupt database file", "does not match stored checksum", "could not read enough bytes")
# not "not a valid DuckDB database file": that is another kind of file (a YAML spec), "cannot open as DuckDB"
_CHECKSUM_AT = re.compile(r"in block at location (\d+)")


def is_damage(exc: BaseException) -> bool:
    """Whether a DuckDB error says the file itself is damaged (a block's checksum does not match, the file ends
    inside a block, the header is not DuckDB's), not that a query or its input is wrong."""
    text = str(exc).lower()
    return isinstance(exc, duckdb.Error) and any(sign in text for sign in _DAMAGE_SIGNS)


def damaged_error(path: str | Path, exc: BaseException) -> WarehouseError:
    """The one line a damaged DuckDB file gives: the file, what DuckDB found, what to do.

    ``… is damaged (DuckDB: checksum mismatch in the block at byte 61440): <what to do>; `worldforge doctor`
    lists damaged files (``--quarantine`` moves them aside)``. What to do depends on the file
    (:func:`worldforge.warehouse.layout.repair_hint`).
    """
    from worldforge.warehouse.layout import repair_hint

    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    at = _CHECKSUM_AT.search(first)
    if "checksum" in first.lower():
        what = "checksum mismatch " + (f"in the block at byte {at.group(1)}" if at else "in its header")
    else:
        what = first
    return WarehouseError(f"{path} is damaged (DuckDB: {what}): {repair_hint(Path(path))}; "
                          "`worldforge doctor` lists damaged files (--quarantine moves them aside)")


@contextlib.contextmanager
def damage_guard(path: str | Path) -> Iterator[None]:
    """Turn a DuckDB error that says ``path`` is damaged (:func:`is_damage`) into :func:`damaged_error`'s
    :class:`WarehouseError`; every other error passes unchanged."""
    try:
        yield
    except duckdb.Error as exc:
        if is_damage(exc):
            raise damaged_error(path, exc) from None
        raise


class _Guarded:
    """A DuckDB connection or relation whose calls go through :func:`damage_guard` of one file; what they return
    (a connection after ``execute``, a relation from ``sql``) is guarded the same way."""

    __slots__ = ("_obj", "_path")

    def __init__(self, obj: object, path: Path):
        self._obj = obj
        self._path = path

    def __getattr__(self, name: str):
        return _guard_attr(getattr(self._obj, name), self._path)

    def __iter__(self):
        with damage_guard(self._path):
            return iter(self._obj.fetchall())

    def __len__(self) -> int:
        return len(self._obj)

    def __repr__(self) -> str:
        with damage_guard(self._path):
            return repr(self._obj)

    def __str__(self) -> str:
        with damage_guard(self._path):
            return str(self._obj)


def _plain(value: object) -> object:
    """The DuckDB object a :class:`_Guarded` wraps (DuckDB's own methods, ``rel.join(other)``, want it), else ``value``."""
    return value._obj if isinstance(value, _Guarded) else value


def _guard_attr(attr: object, path: Path) -> object:
    if not callable(attr):
        return attr

    def call(*args, **kwargs):
        args = tuple(_plain(a) for a in args)
        kwargs = {k: _plain(v) for k, v in kwargs.items()}
        with damage_guard(path):
            res = attr(*args, **kwargs)
        return _Guarded(res, path) if isinstance(res, (duckdb.DuckDBPyConnection, duckdb.DuckDBPyRelation)) else res

    return call


class ReadConnection:
    """A read-only connection to one DuckDB file, attached to this process's shared instance
    (:func:`open_readonly`).

    Behaves as the ``duckdb.DuckDBPyConnection`` it wraps (``execute``, ``sql``, ``fetchall`` ...): its
    default database is the file, so unqualified names and ``schema.table`` resolve inside it. The
    instance may have other files attached at the same time (other threads' readers and writers):
    a catalog function (``duckdb_tables()``, ``duckdb_columns()``, ``duckdb_constraints()``) lists them
    all, so a query of one filters on ``database_name = current_database()``.

    A query that reads a damaged block of the file raises :func:`damaged_error`'s :class:`WarehouseError`
    (one line naming the file and what to do), not DuckDB's ``Corrupt database file``.

    :meth:`close` (or leaving a ``with`` block, or garbage collection) detaches the file; the
    connection is unusable afterwards.
    """

    __slots__ = ("_con", "_alias", "path")

    def __init__(self, con: duckdb.DuckDBPyConnection, alias: str, path: Path):
        self._con: duckdb.DuckDBPyConnection | None = con
        self._alias = alias
        self.path = path

    def __getattr__(self, name: str):
        con = self._con
        if con is None:
            raise duckdb.ConnectionException(f"{self.path}: connection already closed")
        return _guard_attr(getattr(con, name), self.path)  # a damaged block read: one line naming the file

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """Another cursor on the same file (for another thread), valid while this connection is open."""
        if self._con is None:
            raise duckdb.ConnectionException(f"{self.path}: connection already closed")
        con = self._con.cursor()
        con.execute(f"USE {self._alias}")
        return con

    def duplicate(self) -> duckdb.DuckDBPyConnection:
        """:meth:`cursor` (DuckDB's other name for it)."""
        return self.cursor()

    def close(self) -> None:
        """Detach the file and close the cursor (a second call does nothing)."""
        con, self._con = self._con, None
        if con is None:
            return
        try:
            with contextlib.suppress(duckdb.Error):
                con.execute("USE memory")
                con.execute(f"DETACH {self._alias}")
        finally:
            con.close()

    def __enter__(self) -> ReadConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # interpreter shutdown: the instance may be gone already
            self.close()


def open_readonly(path: str | Path) -> ReadConnection:
    """Open an existing warehouse file read-only.

    The file is ``ATTACH``-ed (``READ_ONLY``) to this process's shared in-memory instance (the one
    :func:`atomic_duckdb` writes through) instead of starting a DuckDB instance for it: about 6 ms
    against about 40 ms here, where a world's build opens its file some twenty times. The same file
    may be open in several threads at once (each has its own attachment).

    Returns:
        A :class:`ReadConnection` whose default database is the file; close it (or use it as a
        context manager) when done.

    Raises:
        WarehouseError: the file does not exist, is not a DuckDB database, or its header is damaged
            (:func:`damaged_error`).
    """
    p = _existing(path)
    alias = f"wf_read_{next(_aliases)}"
    con = _writer_cursor()
    try:
        con.execute(f"ATTACH {quote_str(str(p))} AS {alias} (READ_ONLY)")
    except duckdb.Error as exc:
        con.close()
        if is_damage(exc):
            raise damaged_error(p, exc) from None
        raise WarehouseError(f"{p}: cannot open as DuckDB ({str(exc).splitlines()[0]})") from None
    try:
        con.execute(f"USE {alias}")
    except BaseException:
        with contextlib.suppress(duckdb.Error):
            con.execute(f"DETACH {alias}")
        con.close()
        raise
    return ReadConnection(con, alias, p)


@contextlib.contextmanager
def reading_store(path: str | Path, kind: str) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection to a store file, closed afterwards; a missing table inside the block
    means the file is not that kind of store.

    Args:
        path: the DuckDB file.
        kind: what the file should be, for the message (``trajectory store``, ``episode store`` ...).

    Raises:
        WarehouseError: the file is missing, not DuckDB, or lacks a table the block reads.
    """
    p = Path(path)
    con = open_readonly(p)
    try:
        # a missing table must be a CatalogException: with Python replacement scans on, DuckDB would read a Python
        # object of the caller's frame named like the table instead (deep_questions is also a function)
        con.execute("SET python_enable_replacements = false")
        yield con
    except duckdb.CatalogException as exc:
        raise WarehouseError(f"{p}: not a worldforge {kind} ({str(exc).splitlines()[0]})") from None
    finally:
        con.close()


def count_rows(path: str | Path, table: str) -> int | None:
    """Rows of ``table`` in schema ``main`` of a DuckDB file, ``None`` when the table does not exist.

    Raises:
        WarehouseError: the file does not exist or is not a DuckDB database.
    """
    con = open_readonly(path)
    try:
        if not con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main' "
                           "AND table_name = ?", [table]).fetchall()[0][0]:
            return None
        return con.execute(f"SELECT count(*) FROM {quote_ident(table)}").fetchall()[0][0]
    finally:
        con.close()


SQL_MEMORY_LIMIT = "1GB"
"""Memory a ``worldforge sql`` query may use (DuckDB ``memory_limit``); nothing spills to disk."""

SQL_THREADS = 2
"""Threads a ``worldforge sql`` query may use (DuckDB ``threads``)."""

SQL_TIMEOUT_S = 60.0
"""Seconds a ``worldforge sql`` query may run before it is interrupted (``--timeout``)."""

_SQL_KINDS = "SELECT, WITH, FROM, VALUES, SHOW, DESCRIBE, SUMMARIZE, PIVOT ... IN (...), EXPLAIN of those"
_KIND_NAMES = {"LOAD": "INSTALL / LOAD", "SET": "SET / RESET / USE"}
_EXPLAIN = re.compile(r"^EXPLAIN(?:\s+ANALY[SZ]E)?(?:\s*\([^()]*\))?\s+", re.IGNORECASE)


def open_sandboxed(path: str | Path, memory_limit: str = SQL_MEMORY_LIMIT, threads: int = SQL_THREADS) -> duckdb.DuckDBPyConnection:
    """Open an existing warehouse file read-only for untrusted SQL (``worldforge sql``).

    The connection reaches no other file (``enable_external_access=false``: no ``read_text``,
    ``read_csv``, ``read_parquet``, ``glob``, ``ATTACH``, ``COPY ... TO``, ``EXPORT DATABASE``,
    ``INSTALL`` / ``LOAD``), uses at most ``memory_limit`` of memory and ``threads`` threads,
    never spills to disk (no temp directory), and its configuration is locked so a query
    cannot ``SET`` any of this back.

    Raises:
        WarehouseError: the file does not exist or is not a DuckDB database.
    """
    p = _existing(path)
    try:
        con = duckdb.connect(str(p), read_only=True, config={"enable_external_access": False, **_sandbox_config(memory_limit, threads)})
    except duckdb.Error as exc:
        if is_damage(exc):
            raise damaged_error(p, exc) from None
        raise WarehouseError(f"{p}: cannot open as DuckDB ({str(exc).splitlines()[0]})") from None
    try:
        _lock_settings(con)
    except BaseException:
        con.close()
        raise
    return con


def _sandbox_config(memory_limit: str, threads: int) -> dict:
    """The settings every sandboxed connection opens with: no extensions, capped memory and threads, no spilling."""
    return {"autoinstall_known_extensions": False, "autoload_known_extensions": False, "allow_community_extensions": False,
            "allow_unsigned_extensions": False, "memory_limit": memory_limit, "threads": threads, "temp_directory": ""}


def _lock_settings(con: duckdb.DuckDBPyConnection) -> None:
    """The last step of opening a sandboxed connection: no progress bar, then no SET / RESET / PRAGMA changes a setting."""
    con.execute("SET enable_progress_bar = false")  # a connection setting: not accepted in ``config``
    con.execute("SET lock_configuration = true")


def open_sandboxed_views(
    allowed: str | Path,
    setup: Callable[[duckdb.DuckDBPyConnection], None],
    memory_limit: str = SQL_MEMORY_LIMIT,
    threads: int = SQL_THREADS,
) -> duckdb.DuckDBPyConnection:
    """An in-memory connection for untrusted SQL over files of one folder (a store of Parquet parts).

    ``setup`` creates the views the queries see (``read_parquet`` of files under ``allowed``);
    then the connection is locked as :func:`open_sandboxed` locks a file: no file outside
    ``allowed`` (DuckDB's ``allowed_directories`` with ``enable_external_access=false``), no
    extensions, capped memory and threads, no spilling, settings locked. The caller runs only
    SELECT-like statements on it (:func:`query_readonly`), so nothing is written under ``allowed``.

    Raises:
        Exception: whatever ``setup`` raises (the connection is closed).
    """
    con = duckdb.connect(":memory:", config=_sandbox_config(memory_limit, threads))
    try:
        con.execute(f"SET allowed_directories = [{quote_str(str(Path(allowed).resolve()) + os.sep)}]")
        con.execute("SET enable_external_access = false")
        setup(con)
        _lock_settings(con)
    except BaseException:
        con.close()
        raise
    return con


def _check_read_only(con: duckdb.DuckDBPyConnection, sql: str, name: str) -> None:
    """Refuse anything but one SELECT-like statement (or an EXPLAIN of one), before it runs.

    Raises:
        WarehouseError: no statement, several, or one of another kind (``COPY``, ``SET``, ``CREATE`` ...).
    """
    statements = con.extract_statements(sql)
    if not statements:
        raise WarehouseError("no SQL statement given")
    if len(statements) > 1:
        raise WarehouseError(f"`worldforge sql` runs one statement at a time; got {len(statements)}")
    stmt = statements[0]
    kind = stmt.type
    if kind == duckdb.StatementType.EXPLAIN:
        m = _EXPLAIN.match(stmt.query.lstrip())
        inner = con.extract_statements(stmt.query.lstrip()[m.end():]) if m else []
        if len(inner) == 1 and inner[0].type == duckdb.StatementType.SELECT:
            return
        refused = "an EXPLAIN of anything but a SELECT is refused"
    elif kind == duckdb.StatementType.SELECT:
        return
    else:
        refused = f"{_KIND_NAMES.get(kind.name, kind.name)} statements are refused"
    raise WarehouseError(f"{name} is opened read-only: `worldforge sql` runs one read-only query ({_SQL_KINDS}); {refused}")


def query_readonly(
    path: str | Path,
    sql: str,
    limit: int,
    timeout_s: float | None = SQL_TIMEOUT_S,
    memory_limit: str = SQL_MEMORY_LIMIT,
    threads: int = SQL_THREADS,
    connect: Callable[[], duckdb.DuckDBPyConnection] | None = None,
) -> tuple[pl.DataFrame, bool]:
    """Run one read-only statement against a warehouse file (``worldforge sql``), sandboxed.

    The file is opened with :func:`open_sandboxed` (read-only, no access to any other file, no
    extensions, capped memory and threads, locked settings) and only one SELECT-like statement
    is run (:func:`_check_read_only`); a query running longer than ``timeout_s`` is interrupted.

    Args:
        path: the DuckDB file.
        sql: a SELECT-like statement.
        limit: rows returned at most.
        timeout_s: seconds the query may run; ``None`` or 0: no limit.
        memory_limit: DuckDB memory limit of the connection.
        threads: DuckDB threads of the connection.
        connect: opens the sandboxed connection instead (a store of Parquet parts:
            :func:`open_sandboxed_views`); ``path`` then only names it in messages.

    Returns:
        ``(the first `limit` rows, whether there were more)``.

    Raises:
        WarehouseError: the file cannot be opened; the statement is not one SELECT-like query,
            would write, reaches outside the file, needs more than ``memory_limit``, runs past
            ``timeout_s`` or fails (its first line is the message).
    """
    p = Path(path)
    con = connect() if connect is not None else open_sandboxed(p, memory_limit=memory_limit, threads=threads)
    timer = threading.Timer(timeout_s, con.interrupt) if timeout_s else None
    try:
        _check_read_only(con, sql, p.name)
        if timer is not None:
            timer.daemon = True
            timer.start()
        rel = con.sql(sql)
        if rel is None:
            raise WarehouseError("the statement returned no rows (only SELECT-like queries are allowed here)")
        frame = rel.limit(limit + 1).pl()
    except duckdb.PermissionException as exc:
        first = str(exc).splitlines()[0]
        raise WarehouseError(
            f"refused: {first} (`worldforge sql` reads only the tables and views inside {p.name}: "
            "no other file, extension or setting)"
        ) from None
    except duckdb.OutOfMemoryException as exc:
        first = str(exc).splitlines()[0]
        raise WarehouseError(f"the query needs more memory than `worldforge sql` allows ({memory_limit}): {first}") from None
    except duckdb.InterruptException:
        raise WarehouseError(f"the query ran longer than {timeout_s:g} s and was stopped (--timeout sets the limit)") from None
    except duckdb.Error as exc:
        if is_damage(exc):
            raise damaged_error(p, exc) from None
        first = str(exc).splitlines()[0]
        if "read-only" in first.lower() or "configuration has been locked" in first.lower():
            raise WarehouseError(f"{p.name} is opened read-only: this statement would change it ({first})") from None
        raise WarehouseError(first) from None
    finally:
        if timer is not None:
            timer.cancel()
        con.close()
    return frame.head(limit), frame.height > limit


def read_table(con: duckdb.DuckDBPyConnection, table: str) -> pl.DataFrame:
    """A whole table (``name`` or ``schema.name``) as a polars frame."""
    return con.sql(f"SELECT * FROM {quote_qualified(table)}").pl()


def constraints(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Declared PRIMARY KEY / FOREIGN KEY constraints of every schema of the connection's default database.

    Returns:
        Frame ``(schema_name, table_name, constraint_type, columns, referenced_table,
        referenced_columns)``.
    """
    return con.sql(
        """
        SELECT schema_name, table_name, constraint_type,
               array_to_string(constraint_column_names, ',') AS columns,
               referenced_table,
               array_to_string(referenced_column_names, ',') AS referenced_columns
        FROM duckdb_constraints()
        WHERE constraint_type IN ('PRIMARY KEY', 'FOREIGN KEY') AND database_name = current_database()
        ORDER BY schema_name, table_name, constraint_type, columns
        """
    ).pl()


def read_every_block(path: str | Path) -> int:
    """Read every stored value of a DuckDB file, so that DuckDB verifies the checksum of every block in use.

    DuckDB checks a block's checksum when it reads the block, and reads only the blocks a query needs: a query of
    some columns never sees damage in the others. This reads every column of every table (a hash of each value,
    so no statistic or metadata stands in for the data) and looks one value up through each key's index (ART
    indexes are stored in blocks of their own, read on first use). Blocks nothing uses (free blocks) are not read:
    damage there changes nothing.

    Returns:
        The tables read.

    Raises:
        WarehouseError: the file is missing or not DuckDB, or a block is damaged (:func:`damaged_error`: one line
            naming the file and what to do).
    """
    con = open_readonly(path)
    try:
        tables = con.execute("SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = current_database() "
                             "ORDER BY ALL").fetchall()
        for schema, table in tables:
            name = f"{quote_ident(schema)}.{quote_ident(table)}"
            cols = [c for (c,) in con.execute("SELECT column_name FROM duckdb_columns() WHERE database_name = current_database() "
                                              "AND schema_name = ? AND table_name = ? ORDER BY column_index", [schema, table]).fetchall()]
            if cols:
                con.execute(f"SELECT count(*), {', '.join(f'bit_xor(hash({quote_ident(c)}))' for c in cols)} FROM {name}").fetchall()
        keys = con.execute("SELECT schema_name, table_name, constraint_column_names[1] FROM duckdb_constraints() "
                           "WHERE database_name = current_database() AND constraint_type IN ('PRIMARY KEY', 'UNIQUE', 'FOREIGN KEY') "
                           "AND len(constraint_column_names) >= 1").fetchall()
        for schema, table, col in keys:
            name, c = f"{quote_ident(schema)}.{quote_ident(table)}", quote_ident(col)
            first = con.execute(f"SELECT {c} FROM {name} WHERE {c} IS NOT NULL LIMIT 1").fetchall()
            if first:
                con.execute(f"SELECT count(*) FROM {name} WHERE {c} = ?", [first[0][0]]).fetchall()
        return len(tables)
    finally:
        con.close()
