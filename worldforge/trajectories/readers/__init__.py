"""Readers for real agent trajectory files, with format auto-detection.

:func:`read_path` walks files (``.json``, ``.jsonl``, ``.traj``), detects each file's
format from its structure (never from its name) and yields a :class:`Trajectory` per
readable record and a :class:`Quarantined` per record that cannot be read, so that
*records in = trajectories kept + records quarantined*. A *record* is the unit a format
stores one episode in: a whole file, a JSONL line, a key of a JSON object or an item of a
JSON list. A file that cannot be parsed or whose format is unknown is one quarantined
record.

Source-specific formats first (``FORMAT`` names; see each module for the source and its quirks):
``swe_agent_traj``, ``openhands_events``, ``openhands_output_jsonl``, ``intercode_json``,
``tau_bench_json``, ``toolbench_answer``, ``fireact_messages_jsonl``,
``fireact_trajs_json``, ``webvoyager_messages``, ``worldforge_recording``; then the shapes any
agent writes: MCP JSON-RPC logs (``mcp_log``), OpenTelemetry GenAI spans (``otel``), ATIF
(``atif``), ShareGPT (``sharegpt``), per-step records (``steps``) and chat messages with tool
calls in any encoding (``chat``: OpenAI, Hermes, XML, fenced bash, ReAct). A JSONL reader
either reads each line alone (``read_line``) or the whole file as groups of lines
(``read_lines(lines, path)``, given ``(line number, object or ValueError)`` pairs: MCP logs,
OTel exports, per-step records). Anything else: a declarative mapping (:mod:`.mapping`).
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import itertools
import json
import logging
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from worldforge.trajectories.model import Quarantined, Trajectory
from worldforge.trajectories.readers import (
    atif,
    chat,
    fireact,
    intercode,
    mcp_log,
    openhands,
    otel,
    recorded,
    sharegpt,
    steps,
    swe_agent,
    tau_bench,
    toolbench,
    webvoyager,
)

if TYPE_CHECKING:
    from worldforge.trajectories.readers.mapping import Mapping

log = logging.getLogger(__name__)

DATA_SUFFIXES = (".json", ".jsonl", ".traj")

# source-specific readers first (they keep their exact counts), then the shape-based ones
JSON_READERS = [recorded, swe_agent, openhands, intercode, tau_bench, toolbench, fireact.RunsJson, webvoyager,
                mcp_log, otel, atif, sharegpt, steps, chat]
JSONL_READERS = [openhands.OutputJsonl, fireact.MessagesJsonl, mcp_log.Jsonl, otel.Jsonl, sharegpt.Jsonl, steps.Jsonl, chat.Jsonl]

FORMATS = sorted(r.FORMAT for r in [*JSON_READERS, *JSONL_READERS])


def _companion(doc: Any) -> str | None:
    """Reasons for known data files that hold tasks or answers but no trajectories."""
    if isinstance(doc, list) and doc and isinstance(doc[0], dict) and {"api_list", "query"} <= doc[0].keys():
        return "ToolBench instruction file: queries and their APIs, no trajectories"
    if isinstance(doc, dict) and doc and all(isinstance(v, dict) and "answers" in v for v in doc.values()):
        return "WebVoyager reference answers: gold answers, no trajectories"
    if isinstance(doc, dict) and {"ques", "web"} <= doc.keys():
        return "WebVoyager task list: tasks without trajectories"
    return None


def _shape(doc: Any) -> str:
    if isinstance(doc, dict):
        keys = ", ".join(list(map(str, doc))[:6])
        return f"a JSON object with keys [{keys}{', ...' if len(doc) > 6 else ''}]"
    if isinstance(doc, list):
        inner = type(doc[0]).__name__ if doc else "nothing"
        return f"a JSON list of {len(doc)} {inner}"
    return f"a JSON {type(doc).__name__}"


_CHUNK = 1 << 20
MIB = 1 << 20


class _Unreadable(OSError):
    """A file that cannot be read to the end (it vanished, turned unreadable, or is not a regular file)."""


class RecordTooLarge(ValueError):
    """A record larger than the size cap (``max_record_mb``); the reason names its size and the cap."""

    def __init__(self, size: int, cap: int) -> None:
        super().__init__(f"record over the {cap / MIB:g} MiB size cap ({size / MIB:.1f} MiB; "
                         "raise WORLDFORGE_MAX_RECORD_MB to read it)")


DEFAULT_MAX_RECORD_MB = 16
"""The size cap of a trajectory record when the caller gives none (MiB of its JSON line, or mebi-characters of
its text); the CLI and the Dagster assets pass ``WORLDFORGE_MAX_RECORD_MB`` (the ``max_record_mb`` setting)."""


def _cap_bytes(max_record_mb: float) -> int:
    return int(max_record_mb * MIB)


def record_size(rec: Trajectory) -> int:
    """Characters of a trajectory's text: its task and every turn's action and observation."""
    return len(rec.task or "") + sum(len(t.action) + len(t.observation) for t in rec.turns)


def _loads(text: str, where: bool = True) -> Any:
    """``json.loads`` whose failures are all :class:`ValueError` with a reason a person can act on
    (``where=False``: a JSONL line, whose error names the column only).

    Raises:
        ValueError: invalid JSON (with line and column), nesting too deep for the parser, or an
            integer beyond Python's int-string conversion limit.
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        at = f"line {exc.lineno}, column {exc.colno}" if where else f"column {exc.colno}"
        raise ValueError(f"invalid JSON ({exc.msg} at {at})") from None
    except RecursionError:
        raise ValueError("JSON nested too deeply to parse") from None
    except ValueError as exc:  # "Exceeds the limit (4300 digits) for integer string conversion"
        if "integer string conversion" in str(exc):
            raise ValueError(f"integer too large to parse ({str(exc).split(':')[0]})") from None
        raise ValueError(f"invalid JSON ({exc})") from None


def _decode(raw: bytes, offset: int = 0) -> str:
    """UTF-8 text of ``raw`` (a BOM dropped); ``offset`` is where ``raw`` starts in its file.

    Raises:
        ValueError: not UTF-8, naming the byte and its offset in the file.
    """
    try:
        return raw.decode("utf-8-sig" if offset == 0 else "utf-8")
    except UnicodeDecodeError as exc:
        bad = raw[exc.start:exc.start + 1].hex()
        raise ValueError(f"not UTF-8 text (byte 0x{bad} at offset {offset + exc.start})") from None


def _guard(rel: str, locator: str, fn: Any, *args: Any) -> Any:
    """``fn(*args)``, or a :class:`Quarantined` when a reader fails in a way it did not anticipate.

    Readers quarantine the malformed records they know of themselves; this is the net under
    them (deep recursion in a reader, a field of an unexpected type): one record is lost, never
    the file or the ingest.
    """
    try:
        return fn(*args)
    except RecursionError:
        return Quarantined(rel, locator, "reader error (record nested too deeply)")
    except Exception as exc:  # noqa: BLE001 - any reader bug is one quarantined record
        return Quarantined(rel, locator, f"reader error ({type(exc).__name__}: {str(exc)[:200]})")


def _detect(readers: list, doc: Any, rel: str) -> Any:
    for r in readers:
        try:
            if r.detect(doc, rel):
                return r
        except RecursionError:
            return None
        except Exception:  # noqa: BLE001 - a detector that trips on an odd document does not claim it
            log.debug("detector %s failed on %s", getattr(r, "FORMAT", r), rel, exc_info=True)
    return None


def _records(gen: Iterator, rel: str) -> Iterator[Trajectory | Quarantined]:
    """The records a reader's generator yields; if it fails midway, the rest of the file is one quarantined record."""
    n = 0
    try:
        for rec in gen:
            n += 1
            yield rec
    except _Unreadable:
        raise
    except RecursionError:
        yield Quarantined(rel, f"after record {n}" if n else "file", "reader error (record nested too deeply)")
    except Exception as exc:  # noqa: BLE001
        yield Quarantined(rel, f"after record {n}" if n else "file", f"reader error ({type(exc).__name__}: {str(exc)[:200]})")


def _lines(fh: Any, digest: Any, cap: int) -> Iterator[tuple[int, bytes | RecordTooLarge, int]]:
    """``(line number, bytes, offset)`` of each line of a binary file, the digest updated as it goes.

    A line longer than ``cap`` bytes is never held whole: its first ``cap + 1`` bytes show it is too
    long, the rest is read in 1 MiB chunks for the digest, and it comes as a :class:`RecordTooLarge`.
    """
    offset, i = 0, 0
    try:
        while line := fh.readline(cap + 1):
            i += 1
            digest.update(line)
            size = len(line)
            if size > cap and not line.endswith(b"\n"):
                del line
                while part := fh.readline(_CHUNK):
                    digest.update(part)
                    size += len(part)
                    if part.endswith(b"\n"):
                        break
                yield i, RecordTooLarge(size - part.endswith(b"\n"), cap), offset
            else:
                yield i, line, offset
            offset += size
    except OSError as exc:
        raise _Unreadable(f"file became unreadable while read ({exc.strerror or exc})") from None


def _parsed_lines(lines: Iterator[tuple[int, bytes, int]]) -> Iterator[tuple[int, Any]]:
    """``(line number, object or ValueError)`` of every non-blank line."""
    for i, line, offset in lines:
        if isinstance(line, RecordTooLarge):
            yield i, line
            continue
        try:
            text = _decode(line.rstrip(b"\r\n"), offset)
        except ValueError as exc:
            yield i, exc
            continue
        if not text.strip():
            continue
        try:
            yield i, _loads(text, where=False)
        except ValueError as exc:
            yield i, exc


def _read_jsonl(lines: Iterator[tuple[int, Any]], rel: str, mapping: Mapping | None = None) -> Iterator[Trajectory | Quarantined]:
    """Records of a JSONL file, streamed: memory holds the lines before the first valid one and one line."""
    head: list[tuple[int, Any]] = []
    first = None
    for i, obj in lines:
        head.append((i, obj))
        if not isinstance(obj, Exception):
            first = obj
            break
    if first is None:
        if not head:
            yield Quarantined(rel, "file", "empty file")
        elif len(head) == 1:
            yield Quarantined(rel, "file", f"no valid JSON line: {head[0][1]}")
        else:
            yield Quarantined(rel, "file", f"no valid JSON line (line 1: {head[0][1]})")
        return
    reader = mapping if mapping is not None else _detect(JSONL_READERS, first, rel)
    if reader is None:
        reason = _companion(first) or f"unrecognised JSONL format: first record is {_shape(first)}"
        yield Quarantined(rel, "file", reason)
        for _ in lines:  # drain, so the digest covers the whole file
            pass
        return
    rest = itertools.chain(head, lines)
    if hasattr(reader, "read_lines"):  # the file is one trajectory per group of lines (e.g. per-step records)
        yield from _records(reader.read_lines(rest, rel), rel)
        return
    for i, obj in rest:
        locator = f"line {i}"
        if isinstance(obj, Exception):
            yield Quarantined(rel, locator, str(obj))
        else:
            yield _guard(rel, locator, reader.read_line, obj, rel, locator)


def _read_document(text: str, rel: str, mapping: Mapping | None = None) -> Iterator[Trajectory | Quarantined]:
    try:
        doc = _loads(text)
    except ValueError as exc:
        yield Quarantined(rel, "file", str(exc))
        return
    reader = mapping if mapping is not None else _detect(JSON_READERS, doc, rel)
    if reader is None:
        yield Quarantined(rel, "file", _companion(doc) or f"unrecognised format: {_shape(doc)}")
        return
    yield from _records(reader.read(doc, rel), rel)


def _open_regular(path: Path) -> Any:
    """A binary file object of ``path``; never blocks on a FIFO nor reads a device.

    Raises:
        _Unreadable: the path is not a regular file, or cannot be opened.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise _Unreadable(f"cannot read file ({exc.strerror or exc})") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _Unreadable(f"not a regular file ({_kind(mode)})")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def file_sha1(path: str | Path) -> str:
    """SHA-1 (hex) of a file's bytes, read in 1 MiB chunks.

    Raises:
        OSError: the file cannot be read, or is not a regular file (never blocks on a FIFO).
    """
    digest = hashlib.sha1()
    with _open_regular(Path(path)) as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def read_file(path: str | Path, rel: str | None = None, mapping: Mapping | None = None,
              max_record_mb: float = DEFAULT_MAX_RECORD_MB) -> Iterator[Trajectory | Quarantined]:
    """Read one trajectory file of any supported format; never raises for a bad file.

    ``.jsonl`` files are streamed line by line (memory: the largest line, or one trajectory
    for readers that group lines); a ``.json``/``.traj`` document is parsed whole (memory: the
    file). Every failure is a quarantined record with its reason: the file cannot be opened or
    is not a regular file (FIFO, device, socket), vanishes or turns unreadable while read, is
    empty, is not UTF-8 (the byte and its offset), is not JSON, nests too deeply, holds an
    integer beyond Python's conversion limit, has an unknown format, a reader fails on a
    record (that record only), or a record is over the size cap: a JSONL line of more than
    ``max_record_mb`` MiB (never held whole: memory stays within the cap), or a trajectory whose
    text (task, actions and observations) has more than that many mebi-characters.

    Args:
        path: the file.
        rel: the ``source_path`` to record (defaults to the file name).
        mapping: read the file with this declarative mapping
            (:func:`~worldforge.trajectories.readers.mapping.load_mapping`) instead of detecting its format.
        max_record_mb: the size cap in MiB (default :data:`DEFAULT_MAX_RECORD_MB`; the edges pass
            ``WORLDFORGE_MAX_RECORD_MB``).

    Yields:
        A :class:`Trajectory` per readable record, a :class:`Quarantined` per other record,
        each carrying the SHA-1 of the file's bytes (computed in a first pass, so that every
        record carries it; a file that changes between the passes gets one more quarantined
        record saying so).
    """
    p = Path(path)
    rel = rel or p.name
    try:
        sha = file_sha1(p)
    except _Unreadable as exc:
        yield Quarantined(rel, "file", exc.args[0])
        return
    except OSError as exc:
        yield Quarantined(rel, "file", f"cannot read file ({exc.strerror or exc})")
        return
    digest = hashlib.sha1()
    cap = _cap_bytes(max_record_mb)
    try:
        for rec in _parse(p, rel, mapping, digest, cap):
            if isinstance(rec, Quarantined):
                yield dataclasses.replace(rec, file_sha1=sha)
            elif (size := record_size(rec)) > cap:
                yield Quarantined(rel, rec.locator, str(RecordTooLarge(size, cap)), sha)
            else:
                rec.file_sha1 = sha
                yield rec
    except _Unreadable as exc:
        yield Quarantined(rel, "file" if digest.hexdigest() == hashlib.sha1().hexdigest() else "rest of file", exc.args[0], sha)
        return
    if digest.hexdigest() != sha:
        yield Quarantined(rel, "rest of file", "file changed while it was read (its records above are from the first version)", sha)


def _parse(p: Path, rel: str, mapping: Mapping | None, digest: Any, cap: int) -> Iterator[Trajectory | Quarantined]:
    with _open_regular(p) as fh:
        if p.suffix == ".jsonl":
            yield from _read_jsonl(_parsed_lines(_lines(fh, digest, cap)), rel, mapping)
            return
        try:
            raw = fh.read()
        except OSError as exc:
            raise _Unreadable(f"file became unreadable while read ({exc.strerror or exc})") from None
    digest.update(raw)
    if not raw.strip():
        yield Quarantined(rel, "file", "empty file")
        return
    try:
        text = _decode(raw)
    except ValueError as exc:
        yield Quarantined(rel, "file", str(exc))
        return
    del raw
    yield from _read_document(text, rel, mapping)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "FIFO"), (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"),
                       (stat.S_ISSOCK, "socket"), (stat.S_ISDIR, "folder")):
        if test(mode):
            return name
    return "special file"


def _stat_reason(path: Path) -> str | None:
    """Why ``path`` cannot be read as a data file (``None`` when it is a regular file)."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symlink loop"
        if exc.errno == errno.ENOENT:
            return "dangling symlink" if os.path.islink(path) else "vanished before it was read"
        return f"cannot stat ({exc.strerror or exc})"
    return None if stat.S_ISREG(mode) else f"not a regular file ({_kind(mode)})"


def discover(paths: Iterable[str | Path]) -> tuple[list[tuple[Path, str]], list[tuple[Path, str]]]:
    """Data files under the given files/folders, with their ``source_path``; what was skipped, with why.

    A folder's files are recorded relative to that folder (a name that is not UTF-8 keeps its
    bytes as surrogate escapes; the store writes them as ``\\udcXX``); a file given directly
    by its name. Never opens anything: FIFOs, devices and sockets, symlink loops, dangling
    links, unreadable folders, hidden files and files without a data suffix (licenses,
    READMEs) are skipped with their reason. Symlinked folders are not followed (no cycles).

    Returns:
        ``([(file, source_path), ...] sorted, [(skipped path, reason), ...])``.

    Raises:
        FileNotFoundError: a given path does not exist.
    """
    found: list[tuple[Path, str]] = []
    skipped: list[tuple[Path, str]] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            errors: list[OSError] = []
            entries = []
            for root, dirs, names in os.walk(p, onerror=errors.append):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                entries.extend(Path(root) / n for n in names if not n.startswith("."))
            skipped.extend((Path(e.filename or p), f"unreadable folder ({e.strerror or e})") for e in errors)
            for f in sorted(entries):
                if f.suffix not in DATA_SUFFIXES:
                    skipped.append((f, "not a data file (.json, .jsonl, .traj)"))
                elif (why := _stat_reason(f)) is not None:
                    skipped.append((f, why))
                else:
                    found.append((f, f.relative_to(p).as_posix()))
        elif p.exists() or p.is_symlink():
            why = _stat_reason(p)
            if why is None:
                found.append((p, p.name))
            else:
                skipped.append((p, why))
        else:
            raise FileNotFoundError(f"{p}: no such file or folder")
    return found, skipped


def read_path(paths: Iterable[str | Path], mapping: Mapping | None = None,
              max_record_mb: float = DEFAULT_MAX_RECORD_MB) -> Iterator[Trajectory | Quarantined]:
    """Read every data file under ``paths`` (see :func:`discover`), with ``mapping`` and the size
    cap when given (see :func:`read_file`)."""
    files, _ = discover(paths)
    for f, rel in files:
        yield from read_file(f, rel, mapping, max_record_mb)
