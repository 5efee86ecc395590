"""One page of a corpus and the table cells it states: :class:`Fact`, :class:`Page`, :class:`Site`, URL slugs."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache
from typing import NamedTuple

from worldforge.corpus.claims import Claim
from worldforge.corpus.quantity import Style, render_value


class Fact(NamedTuple):
    """One table cell a page states (a named tuple: a corpus makes some 100,000 of them, and a tuple is built, hashed and
    compared several times faster than a frozen dataclass).

    Attributes:
        table_name, row_key, column_name: the cell.
        value_text: the text the page states for it (in the site's style, verbatim in the body).
        section: ``lead`` (may show in a search snippet) or ``body``.
        scope: ``None`` when the cell is of the page's own corpus (the world or its scenario);
            ``world`` for a scenario page that states a base-world value (an archive page).
    """

    table_name: str
    row_key: str
    column_name: str
    value_text: str
    section: str
    scope: str | None = None


@dataclass
class Page:
    """One generated page and the table cells it states (a ``corpus_pages`` row and its ``corpus_facts``).

    Attributes:
        url: the stable URL (the page's key).
        world: the world name.
        scenario: the scenario, or ``None`` for the world itself.
        page_type: the genre (see the module docstring).
        title: the page title.
        published: the publication date, or ``None`` (reference pages).
        lead: the first paragraph, the only text search snippets are cut from.
        body_md: the Markdown body, starting with the lead.
        facts: the cells the page states, each marked ``lead`` or ``body``.
        claims: the derived claims the page makes (ranks, comparisons, shares, counts, totals, changes, date gaps:
            :mod:`worldforge.corpus.claims`), each phrase verbatim in ``body_md``.
        site: the domain of the site that publishes it.
        chrome: how the site dresses the article when the page is served (a recipe for
            :class:`~worldforge.corpus.chrome.Dresser`: genre, site name, breadcrumbs, counts of background
            sentences and comments, a seed, cited URLs), or ``None`` for a bare page. ``body_md`` is the article
            alone (lead, prose, tables: every fact is stated there); the chrome is rendered on read.
        context: the corpus's chrome context (:meth:`~worldforge.corpus.builder.CorpusBuilder.chrome_context`), one dict shared by all its pages;
            stored once per corpus in ``_corpus.chrome_context``.
    """

    url: str
    world: str
    scenario: str | None
    page_type: str
    title: str
    published: date | None
    lead: str
    body_md: str
    facts: list[Fact] = field(default_factory=list)
    site: str = ""
    chrome: dict | None = None
    context: dict | None = field(default=None, repr=False, compare=False)
    claims: list[Claim] = field(default_factory=list)

    def row(self) -> dict:
        """The page as a stored ``corpus_pages`` row (what :meth:`~worldforge.corpus.chrome.Dresser.render` reads)."""
        return {"url": self.url, "page_type": self.page_type, "title": self.title, "published": self.published,
                "body_md": self.body_md, "site": self.site, "chrome": self.chrome}


def page_markdown(page) -> str:
    """A stored page (a ``corpus_pages`` row as a mapping) as ``web_extractor`` returns it:
    ``# title``, the publication line when dated, then the Markdown body."""
    published = f"*Published {render_value(page['published'])}*\n\n" if page["published"] else ""
    return f"# {page['title']}\n\n{published}{page['body_md']}"


@lru_cache(maxsize=65536)
def slug(text: str) -> str:
    """``Nova X 2029!`` -> ``nova-x-2029``: lower case, every run of other characters a ``-``; ``x`` when nothing is left."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"



def cell_text(text: str) -> str:
    """A cell's text as it can stand in a Markdown table (``|`` escaped)."""
    return text.replace("|", "\\|")


@dataclass(frozen=True)
class Site:
    """One fictional site: its domain, its name as a publisher, and how it writes values."""

    domain: str
    name: str
    style: Style
