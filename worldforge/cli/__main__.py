"""``python -m worldforge.cli``: the same as the ``worldforge`` command."""

from worldforge.cli import app

app()
