"""``worldforge catalog generate | author | build | report``: a catalog of distinct worlds (:mod:`worldforge.catalog`)."""

from __future__ import annotations

import typer

app = typer.Typer(help="Generate, author, build and report a catalog of distinct fictional worlds.", no_args_is_help=True)

# --- generate -------------------------------------------------------------------------------------

# --- author ---------------------------------------------------------------------------------------

# --- build ----------------------------------------------------------------------------------------

# --- report ---------------------------------------------------------------------------------------
