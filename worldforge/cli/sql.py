"""``worldforge sql``: read-only SQL over a warehouse file."""

from __future__ import annotations

from typing import Annotated

import typer

from worldforge.cli._common import WarehouseOpt, print_frame, user_errors, warehouse_of


def sql(
    name: Annotated[str, typer.Argument(help="A world name, or trajectories / episodes: WAREHOUSE/<name>.duckdb.")],
    query: Annotated[str, typer.Argument(help="SQL to run (read-only).")],
    limit: Annotated[int, typer.Option(help="Rows to print at most.")] = 50,
    warehouse: WarehouseOpt = None,
) -> None:
    """Run SQL against a warehouse file opened read-only and print the result as a table.

    World files carry documented views: v_columns, v_pages, v_facts, v_tasks, v_task_rows
    (see `SELECT view_name, comment FROM duckdb_views() WHERE NOT internal`).
    """
    from worldforge.warehouse.duck import query_readonly

    path = warehouse_of(warehouse) / f"{name}.duckdb"
    with user_errors():
        frame, more = query_readonly(path, query, limit)
    print_frame(frame, f"{path.name}: {frame.height} row(s)" + (" (more not shown)" if more else ""))
