"""``worldforge settings``: the settings in force (each from ``WORLDFORGE_<NAME>`` or its default)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer
from rich.markup import escape
from rich.table import Table

from worldforge.cli._common import fail, out, user_errors


def settings(
    name: Annotated[Optional[str], typer.Argument(help="Print only this setting's value (e.g. warehouse), for scripts.")] = None,
) -> None:
    """Show every setting with its environment variable and value, or one value (`worldforge settings warehouse`)."""
    from worldforge.settings import Settings, get_settings

    with user_errors():
        values = get_settings().as_strings()
    if name is not None:
        if name not in values:
            raise fail(f"no setting {name!r}; one of: {', '.join(values)}")
        print(values[name])
        return
    table = Table(title="worldforge settings (environment variable or default)")
    for col in ("setting", "environment variable", "value"):
        table.add_column(col, overflow="fold")
    for key, value in values.items():
        table.add_row(key, Settings.env_var(key), escape(value))
    out.print(table)
