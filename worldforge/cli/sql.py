"""``worldforge sql``: read-only SQL over a warehouse file, sandboxed."""

from __future__ import annotations

import re
from typing import Annotated

import typer

from worldforge.cli._common import WarehouseOpt, print_frame, user_errors, warehouse_of
from worldforge.errors import WarehouseError

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def sql(
    name: Annotated[str, typer.Argument(help="A world name (WAREHOUSE/<name>.duckdb), trajectories (the trajectory store) or episodes (the episode store).")],
    query: Annotated[str, typer.Argument(help="One SQL query to run (read-only: SELECT, WITH, FROM, SHOW, DESCRIBE, SUMMARIZE, EXPLAIN).")],
    limit: Annotated[int, typer.Option(help="Rows to print at most.")] = 50,
    timeout: Annotated[float, typer.Option(help="Seconds the query may run before it is stopped (0: no limit).")] = 60.0,
    warehouse: WarehouseOpt = None,
) -> None:
    """Run SQL against a warehouse file opened read-only and print the result as a table.

    World files carry documented views: v_columns, v_references, v_pages, v_facts, v_tasks, v_task_rows
    (see `SELECT view_name, comment FROM duckdb_views() WHERE NOT internal`). `episodes` shows
    every world's episodes as the tables trajectories, turns, episodes and steps (closed sessions
    still in the episode log are recorded first, as for every reader of the store). The query sees
    only that store: no other file, extension or setting; it may use 1 GB of memory and 2 threads.
    """
    from worldforge.warehouse.duck import query_readonly

    with user_errors():
        if not _NAME.match(name) or ".." in name:
            raise WarehouseError(f"{name!r}: NAME is a world name, trajectories or episodes, not a path")
        wh = warehouse_of(warehouse)
        if name == "episodes":
            from worldforge.trajectories.episodes import open_episode_sql
            path = wh.episode_store
            frame, more = query_readonly(path, query, limit, timeout_s=timeout, connect=lambda: open_episode_sql(wh))
        else:
            path = wh.root / f"{name}.duckdb"
            frame, more = query_readonly(path, query, limit, timeout_s=timeout)
    print_frame(frame, f"{path.name}: {frame.height} row(s)" + (" (more not shown)" if more else ""))
