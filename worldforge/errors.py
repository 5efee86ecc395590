"""Errors raised by worldforge.

Every message says what to fix; the CLI prints it without a traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


class WorldforgeError(Exception):
    """Base class of every error a user can cause and fix."""


class SpecError(WorldforgeError):
    """A world spec is malformed.

    Args:
        source: The spec file (or ``"<spec>"`` for in-memory specs).
        problems: ``(field_path, message)`` pairs, e.g. ``("tables.models.rows", "must be > 0")``.
    """

    def __init__(self, source: str, problems: list[tuple[str, str]]):
        self.source = source
        self.problems = problems
        lines = [f"{source}: invalid world spec"]
        lines += [f"  {path}: {msg}" if path else f"  {msg}" for path, msg in problems]
        super().__init__("\n".join(lines))


class ExpressionError(WorldforgeError):
    """A derived-column expression cannot be parsed or evaluated."""


class GenerationError(WorldforgeError):
    """A world cannot be generated from a valid spec (e.g. too few unique values)."""


class WarehouseError(WorldforgeError):
    """A DuckDB warehouse file is missing, unreadable or not a worldforge file."""


class StorageFullError(WarehouseError):
    """A write ran out of space (``ENOSPC`` or ``EDQUOT``) on the file system that holds its target.

    The write's temporary files are removed and the target is left as it was. The message names the
    target and the space free on that file system once the temporary files are gone (the write needs
    more than that), and what the write had put into its temporary files when it failed.

    Args:
        target: the file or folder the write would have replaced.
        written: bytes the write had put into its temporary files when it failed.
        free: bytes free on the full file system after the temporary files were removed
            (``None``: unknown).
        elsewhere: the file the write could not grow when it is on another file system than ``target``
            (DuckDB's spill files in the temporary folder); ``None``: ``target``'s own.
    """

    def __init__(self, target: str, written: int, free: int | None, elsewhere: str | None = None):
        self.target = target
        self.written = written
        self.free = free
        self.elsewhere = elsewhere
        room = "the device is full" if free is None else f"the write needs more than the {_size(free)} free there"
        device = "its device" if elsewhere is None else f"the device of {elsewhere}"
        super().__init__(f"{target}: no space left on {device}: {room} (it had written {_size(written)}); "
                         f"{Path(target).name} is unchanged. Free space there, or write elsewhere, and run again")


def _size(n: float) -> str:
    """``n`` bytes as ``"12.3 MiB"`` (binary units up to GiB; whole bytes below 1 KiB)."""
    if n < 1024:
        return f"{int(n)} B"
    for unit in ("KiB", "MiB", "GiB"):
        n /= 1024
        if n < 1024 or unit == "GiB":
            break
    return f"{n:.1f} {unit}"


def validation_problems(exc: Any, limit: int = 5, root: str = "") -> str:
    """The first ``limit`` problems of a pydantic ``ValidationError`` as ``"loc: msg; loc: msg"``
    (an empty location reads ``root``), without URLs or the input values."""
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or root}: {e['msg']}" for e in exc.errors(include_url=False, include_input=False)[:limit])
