"""Search-corpus pages generated from a world's rows: web genres with provenance for every stated value.

Each world gets its own fictional web: an encyclopedia, several news sites, a newsroom per
organisation that owns rows, a ranking site, a spec/profile site, a comparison site, a forum, a
statistics portal, an archive and a rumour blog. Every site writes values in its own
:class:`~worldforge.corpus.quantity.Style` (date format, money as ``$1,099`` or ``1,099 USD``,
large amounts in words or in full), and every genre has its own structure and several phrasings
per kind of fact, chosen by seed:

============== ================================= ===============================================
page_type      one page per                      states
============== ================================= ===============================================
encyclopedia   row of every table                 label, parents and category in the lead; every
                                                  column in an infobox, in full; the row in its
                                                  group (derived claims: ranks, comparisons with
                                                  peers and averages, shares), a table of its
                                                  nearest peers, its history; children as links
                                                  with their count, total and extremes; related
                                                  rows under "See also"
news           row with a dated event             the event in the lead; 2-3 attributes in prose,
                                                  rounded as news does; a related row's fact
press_release  dated row of an organisation's     the announcement in the lead; attributes in full;
               child table (about half)           an "About <organisation>" paragraph
ranking        rank column (per group)            rank, label and ranked value of every row
profile        row with three or more attributes  a key-spec sheet in the site's own format
comparison     pair/triple of sibling rows        numeric attributes side by side
forum          about a third of the rows          one or two attributes in casual answers
dataset        table (paginated, 25 rows a page)  label (linked), parent and up to six columns of every row
timeline       table and quarter of its event     labels and dates of the rows in the quarter
rumor          some rows with a parent            a near miss: the row's name, nothing new
============== ================================= ===============================================

A scenario's corpus also gets *archive* news pages dated in the base year and *archived datasets*
(the base world's values of the columns that changed, page type ``dataset``), both stating base-world
values (facts with ``scope = 'world'``): a previous year's value, clearly dated in the past.

Every page has a stable URL, a title, a date (``published``, or none for reference pages), an
*article* whose first paragraph is its *lead*, a Markdown body that puts the article in its
site's chrome (navigation, breadcrumbs, background paragraphs, comments, related lists, footer:
:mod:`worldforge.corpus.chrome`), and its provenance: the ``(table, row key, column, stated
text)`` cells it states, each marked ``lead`` or ``body``, all inside the article, and the derived claims it
makes (:mod:`worldforge.corpus.claims`, written by :mod:`worldforge.corpus.context`). Prose is
planned and realised by :mod:`worldforge.corpus.planner` over the verb frames of
:mod:`worldforge.corpus.lexicon`: several facts a sentence, the row named first and then
referred to by pronoun, surname or description. Search snippets are cut
from leads only (:mod:`worldforge.corpus.index`), so a ``body`` fact never shows in a snippet.
Pages never contradict the tables: every stated text is written from the cell by
:func:`~worldforge.corpus.quantity.format_value`, and :func:`~worldforge.corpus.store.check_corpus`
reads each one back (:func:`~worldforge.corpus.quantity.denotes`) against DuckDB. Column
identifiers never appear in a page: columns are named by their labels (:mod:`worldforge.corpus.vocab`).

A page and its facts are :mod:`worldforge.corpus.page`; the corpus being built is
:class:`~worldforge.corpus.builder.CorpusBuilder`; each genre is a function of :mod:`worldforge.corpus.genres`;
this module runs them.
"""

from __future__ import annotations

import polars as pl

from worldforge.corpus.builder import CorpusBuilder
from worldforge.corpus.genres import GENRES, references
from worldforge.corpus.page import Fact, Page, Site, page_markdown, slug
from worldforge.corpus.vocab import label_column, singular
from worldforge.runtime import paused_gc
from worldforge.spec import models as M

__all__ = ["Fact", "Page", "Site", "generate_pages", "label_column", "page_markdown", "served", "singular", "slug"]


def generate_pages(spec: M.WorldSpec, tables: dict[str, pl.DataFrame], scenario: str | None = None, seed: int | None = None,
                base: tuple[M.WorldSpec, dict[str, pl.DataFrame]] | None = None) -> list[Page]:
    """All pages of a world's (or a scenario's) corpus.

    Args:
        spec: the spec the tables satisfy (a scenario's spec for a scenario).
        tables: the world's (or scenario's) tables.
        scenario: the scenario name (None for the world itself); it enters URLs.
        seed: text-variety seed (default: the spec's).
        base: for a scenario, the base world's ``(spec, tables)``: archive pages state its values.

    Returns:
        Pages with their facts, in a deterministic order; each body is its article, the chrome a recipe, and every
        page holds the corpus's chrome context (:attr:`Page.context`, what :func:`served` dresses them with).
    """
    with paused_gc():  # many small objects, all kept until written, no cycles: the collector would only walk them
        b = CorpusBuilder(spec, tables, scenario, spec.seed if seed is None else seed, base)
        for genre in GENRES:
            genre(b)
        references(b)
    ctx = b.chrome_context()
    pages = b.pages
    for p in pages:
        p.context = ctx
    b.close()  # the builder and its helpers refer to each other: without this the pages would live until a full collection
    return pages


def served(pages: list[Page]) -> dict[str, str]:
    """``{url: body}`` of one corpus's pages (:func:`generate_pages`) as ``web_extractor`` serves them: each article in
    its site's chrome, with the context the pages carry."""
    from worldforge.corpus.chrome import Dresser

    context = next((p.context for p in pages if p.context is not None), {})
    return {u: body for u, (body, _, _) in Dresser(context).render([p.row() for p in pages]).items()}
