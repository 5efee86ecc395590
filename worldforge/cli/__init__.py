"""The ``worldforge`` command line (typer + rich): one module per command group.

Each command parses its options, calls one library function and renders the result with rich.
User mistakes print one clear message and exit with status 2, without a traceback; failed
checks exit with status 1 (:mod:`worldforge.cli._common`).
"""

from __future__ import annotations

import typer

from worldforge.cli import catalog, corpus, datasets, dev, evaluation, export, record, rl, serve, spec, tasks, trajectories, world
from worldforge.cli._common import user_errors
from worldforge.cli.doctor import doctor
from worldforge.cli.settings import settings
from worldforge.cli.sql import sql
from worldforge.cli.summary import summary
from worldforge.runtime import apply_settings

app = typer.Typer(help="worldforge: fictional worlds and agent-trajectory datasets for world models.", no_args_is_help=True,
                  pretty_exceptions_enable=False)


@app.callback()
def _check_settings() -> None:
    # every command reads the settings: a WORLDFORGE_* variable that holds a bad value is one
    # clear error (exit 2) before any command runs, never a traceback halfway through one; the
    # process-wide ones (the bound of the world caches) apply to the whole command
    with user_errors():
        apply_settings()


app.add_typer(world.app, name="world")
app.add_typer(spec.app, name="spec")
app.add_typer(trajectories.app, name="trajectories")
app.add_typer(corpus.app, name="corpus")
app.add_typer(tasks.app, name="tasks")
app.add_typer(serve.app, name="serve")
app.add_typer(dev.app, name="dev")
app.add_typer(evaluation.app, name="eval")
app.add_typer(datasets.app, name="datasets")
app.add_typer(rl.app, name="rl")
app.add_typer(catalog.app, name="catalog")
app.add_typer(record.app, name="record")
app.add_typer(export.app, name="export")
app.command("sql")(sql)
app.command("summary")(summary)
app.command("settings")(settings)
app.command("doctor")(doctor)

__all__ = ["app"]
