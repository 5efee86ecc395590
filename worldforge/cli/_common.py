"""What every command group shares: the consoles, user-error handling, progress bars, rendering.

User mistakes (a malformed spec, a missing file, a broken warehouse file, a bad setting) print
one clear message and exit with status 2, without a traceback; failed checks exit with status 1.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from worldforge.errors import WorldforgeError
from worldforge.tally import Tally
from worldforge.warehouse.atomic import is_storage_full
from worldforge.warehouse.layout import Warehouse

if TYPE_CHECKING:
    import polars as pl

    from worldforge.corpus import RetrieverConfig

_LOG_WIDTH = 240
"""Columns of output written to a log or CI (no terminal): wide enough that names, paths and numbers never wrap."""


def _console(stderr: bool = False) -> Console:
    """A console that never wraps names, paths and numbers: the terminal's width in a terminal, ``COLUMNS`` when set,
    else :data:`_LOG_WIDTH` (rich would default to 80 columns and fold table cells); printed lines soft-wrap (a log
    keeps each line whole)."""
    probe = Console(stderr=stderr)
    wide = None if probe.is_terminal or os.environ.get("COLUMNS") else _LOG_WIDTH
    return Console(stderr=stderr, width=wide, soft_wrap=True)


out = _console()
err = _console(stderr=True)

WarehouseOpt = Annotated[Optional[Path], typer.Option("--warehouse", "-w", help="Warehouse folder (default: WORLDFORGE_WAREHOUSE, see `worldforge settings`).", show_default=False)]
"""The ``--warehouse`` option of every command that reads or writes a warehouse; ``None``: the configured one."""
WriterOpt = Annotated[str, typer.Option(help="Who writes the prose pages (news, press releases, forum, rumors): template, or openai "
                                        "(a model behind an OpenAI-compatible server rewrites them; a page is kept only when every value checks out).")]
"""``--writer``: the corpus writer of the commands that build a corpus (``world run``, ``corpus build``)."""
WriterUrlOpt = Annotated[Optional[str], typer.Option(help="--writer openai: the server's API root (default: WORLDFORGE_VLLM_URL).", show_default=False)]
"""``--base-url`` of the corpus writer."""
WriterModelOpt = Annotated[Optional[str], typer.Option(help="--writer openai: the served model (default: WORLDFORGE_VLLM_MODEL, else the first one served).",
                                                       show_default=False)]
"""``--model`` of the corpus writer."""
WriterKeyOpt = Annotated[Optional[str], typer.Option(help="--writer openai: bearer token for the server.", show_default=False)]
"""``--api-key`` of the corpus writer."""
WriterRoundsOpt = Annotated[int, typer.Option(min=1, help="--writer openai: requests per page at most (the first and the repairs).")]
"""``--max-rounds`` of the corpus writer (default 2)."""
WriterConcurrencyOpt = Annotated[int, typer.Option(min=1, help="--writer openai: requests in flight at most.")]
"""``--concurrency`` of the corpus writer (default 8)."""
WriterLimitOpt = Annotated[Optional[int], typer.Option(min=0, help="--writer openai: rewrite at most this many prose pages.", show_default=False)]
"""``--limit`` of the corpus writer."""
HostOpt = Annotated[Optional[str], typer.Option(help="Interface to bind (default: WORLDFORGE_HOST, loopback).", show_default=False)]
"""The ``--host`` of every server command."""


def port_opt(default: str) -> object:
    """The ``--port`` option of a server command; ``default`` says where the port comes from when it is not given."""
    return Annotated[Optional[int], typer.Option(help=f"TCP port (default: {default}).", show_default=False)]


def warehouse_of(option: Path | None) -> Warehouse:
    """The warehouse a command works in: the ``--warehouse`` option (made absolute), else the configured one
    (``WORLDFORGE_WAREHOUSE``); the one place a command resolves it, passed down from there.

    Raises:
        SettingsError: ``WORLDFORGE_WAREHOUSE`` holds a bad value (reported by :func:`user_errors`).
    """
    return Warehouse(Path(os.path.abspath(option))) if option is not None else Warehouse.configured()


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print ``error: message`` on stderr; returns the :class:`typer.Exit` to raise."""
    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(code)


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn the errors a user can cause and fix into one message and exit status 2: a
    :class:`~worldforge.errors.WorldforgeError` (a full disk included), a missing file, a bad option, and any
    writer's error that says the file system is full (:func:`~worldforge.warehouse.atomic.is_storage_full`), and a
    damaged DuckDB file (:func:`worldforge.warehouse.duck.is_damage`)."""
    try:
        yield
    except (WorldforgeError, FileNotFoundError, ValueError) as exc:  # ValueError: pydantic validation of options
        raise fail(str(exc)) from None
    except Exception as exc:
        # a write that ran out of space outside the atomic writers (which say which target, see
        # warehouse.atomic.out_of_space): still one line, with the file the writer named
        if is_storage_full(exc):
            raise fail(f"no space left on the device: {_first_line(exc)} (free space, or write elsewhere, and run again)") from None
        from worldforge.warehouse.duck import is_damage  # here: DuckDB and polars load only when a command needs them

        if is_damage(exc):  # a damaged block read where no reader named its file: still one line, and where to look
            raise fail(f"a warehouse file is damaged (DuckDB: {str(exc).splitlines()[0]}): `worldforge doctor` "
                       "finds which one and --quarantine moves it aside") from None
        raise


def _first_line(exc: BaseException) -> str:
    """The first line of ``exc``'s message, without the writer's class prefix (``IO Error: ``)."""
    text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return text.split(": ", 1)[1] if re.match(r"^[A-Za-z ]+Error: ", text) else text


def progress() -> Progress:
    """A rich progress bar on stderr (transient; off when stderr is not a terminal)."""
    return Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=err, transient=True, disable=not err.is_terminal)


def print_tally(tally: Tally) -> None:
    """One line: the tally's balance (:meth:`~worldforge.tally.Tally.summary`) and whether it holds."""
    mark = "[green]balanced[/]" if tally.balanced else "[red]NOT balanced[/]"
    out.print(f"{escape(tally.summary())}  {mark}", soft_wrap=True)


def print_frame(frame: "pl.DataFrame", title: str) -> None:
    """A polars frame as a rich table (every cell as text, ``None`` as empty)."""
    table = Table(title=title)
    for col in frame.columns:
        table.add_column(escape(col), overflow="fold")
    for row in frame.iter_rows():
        table.add_row(*(escape("" if v is None else str(v)) for v in row))
    out.print(table)


def settings_retriever() -> RetrieverConfig | None:
    """The retriever the settings choose for the index step (``WORLDFORGE_RETRIEVER`` and ``WORLDFORGE_EMBEDDING_*``);
    ``None`` for ``bm25``: BM25 indexes, and a corpus indexed dense or hybrid before keeps its retriever.

    Raises:
        WorldforgeError: ``dense``/``hybrid`` without an embedding model.
    """
    from worldforge.corpus import RetrieverConfig
    from worldforge.settings import get_settings

    return RetrieverConfig.over_settings(get_settings())
