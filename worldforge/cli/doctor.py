"""``worldforge doctor``: check every store of a warehouse, read whole; ``--quarantine`` moves damaged files aside."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape
from rich.table import Table

from worldforge.cli._common import WarehouseOpt, out, user_errors, warehouse_of

_STYLE = {"ok": "green", "damaged": "bold red", "missing": "red", "unreadable": "red", "torn": "yellow"}


def doctor(
    where: Annotated[Optional[Path], typer.Argument(metavar="[WAREHOUSE]", help="Warehouse folder (same as --warehouse).", show_default=False)] = None,
    warehouse: WarehouseOpt = None,
    move: Annotated[bool, typer.Option("--quarantine", help="Move damaged files to WAREHOUSE/quarantine/<timestamp>/ (nothing is deleted).")] = False,
    all_files: Annotated[bool, typer.Option("--all", help="List sound files too (default: only what needs attention).")] = False,
) -> None:
    """Read every world file, store, Parquet part, dataset file, the episode log and the catalog of a warehouse
    whole; print what is damaged, missing, unreadable or torn and what to do. Exit 1 when anything is damaged, missing or unreadable."""
    from worldforge.warehouse.doctor import diagnose, quarantine

    with user_errors():
        wh = warehouse_of(where if where is not None else warehouse)
        findings = diagnose(wh)
        moved = quarantine(wh, findings) if move else []
    shown = [f for f in findings if all_files or f.state != "ok"]
    if shown:
        table = Table(title=f"worldforge doctor {wh.root}")
        for col in ("path", "kind", "state", "detail", "what to do"):
            table.add_column(col, overflow="fold")
        for f in shown:
            path = f.path.relative_to(wh.root) if f.path.is_relative_to(wh.root) else f.path
            style = _STYLE.get(f.state, "")
            table.add_row(escape(str(path)), f.kind, f"[{style}]{f.state}[/]", escape(f.detail), escape(f.action))
        out.print(table)
    for src, dst in moved:
        out.print(f"moved {escape(str(src))} → {escape(str(dst))}", soft_wrap=True)
    failed = [f for f in findings if f.failed]
    summary = f"{len(findings)} checked: {sum(f.state == 'ok' for f in findings)} ok"
    counts = {s: sum(f.state == s for f in findings) for s in ("damaged", "missing", "unreadable", "torn")}
    summary += "".join(f", {n} {s}" for s, n in counts.items() if n)
    if moved:
        summary += f"; {len(moved)} moved to quarantine (run the builds again to write them anew)"
    out.print(("[red]" if failed else "[green]") + escape(summary) + "[/]", soft_wrap=True)
    if failed:
        raise typer.Exit(1)
