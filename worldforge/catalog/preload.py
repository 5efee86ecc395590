"""Loaded once by the catalog build's forkserver, before it forks any worker.

A catalog worker is a fresh process every ``recycle`` worlds (:func:`worldforge.catalog.build.build_catalog`),
and the corpus's language libraries are slow to start: importing ``inflect`` takes about 3.5 s on this
machine (``typeguard`` instruments each of its functions), lemminflect's lookup tables and dateparser's
language data load on their first call (about 0.4 s each). Loaded here, in the forkserver
(:meth:`multiprocessing.context.ForkServerContext.set_forkserver_preload`), every worker starts with them
in its (copy-on-write) memory instead of paying for them again.

Only pure-Python libraries load here: nothing starts a thread pool (polars, DuckDB) before the fork.
"""

from __future__ import annotations


def warm() -> None:
    """Import the corpus's language libraries and load their data with one call each; never raises (the
    forkserver dies on any exception but ``ImportError`` in a preloaded module: a worker then loads them itself)."""
    from datetime import datetime

    try:
        import dateparser
        import inflect
        from lemminflect import getInflection, getLemma

        inflect.engine().plural("organisation")
        getLemma("arrived", upos="VERB")
        getInflection("sell", tag="VBN")
        dateparser.parse("3 days ago", settings={"RELATIVE_BASE": datetime(2030, 1, 1)})
    except Exception:  # noqa: BLE001 - an optimisation only
        pass


warm()
