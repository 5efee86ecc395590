"""What a reader tool returns around a page's article: navigation, breadcrumbs, comments, footers, background.

Real pages as ``web_extractor``-style reader tools return them run to about 1,400 words, most of
it not the answer. This module writes that part for the generated corpus, per site and
deterministic by seed: a navigation bar and breadcrumbs above the article, cookie and
subscription lines, share and tag lines, comment threads under news and forum posts, "related"
link lists (filled with real URLs of the same corpus by :func:`related_block`), a footer, and
background paragraphs of general, real-world knowledge of the domain (``background/*.yaml``, one
pool per catalog archetype and bundled world; for any other spec, sentences about its own topic
composed from the spec by :mod:`worldforge.corpus.topic`, carried in the chrome context). None of it
states a world fact: chrome has no digits but the copyright year, background sentences have
none at all, and comments react without figures.

Links in chrome never point into an encyclopedia's ``/wiki/<table>/`` space, so agents and the
oracle that follow an article's links by section are not misled, and chrome holds no Markdown
table (table readers see only the article's).
"""

from __future__ import annotations

import json
import random
import re
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

__all__ = ["Chrome", "Dresser", "background_pool", "forum_replies", "pool_file", "related_block"]

_NAV = {
    "wiki": ("Main page", "Contents", "Current events", "Random article", "About", "Contact us", "Help", "Community portal", "Recent changes"),
    "news": ("Home", "Latest", "Business", "Technology", "Markets", "Opinion", "Features", "Video", "Podcasts", "Newsletters", "Events"),
    "press": ("Newsroom", "Press releases", "Media kit", "Leadership", "Investors", "Careers", "Contact"),
    "ranking": ("Home", "Rankings", "Methodology", "Lists", "Newsletter", "About"),
    "profile": ("Home", "Browse", "Compare", "Specs", "Guides", "Deals", "Reviews"),
    "compare": ("Home", "Compare", "Popular comparisons", "Guides", "About"),
    "forum": ("Forums", "What's new", "Latest activity", "Members", "Search", "Log in", "Register"),
    "data": ("Home", "Datasets", "Topics", "API", "Documentation", "About the portal"),
    "archive": ("Home", "Archive", "Timelines", "Collections", "Search", "About"),
    "rumor": ("Home", "Leaks", "Rumors", "Tips", "About"),
}
_COOKIES = (
    "We use cookies to personalise content and ads and to analyse our traffic. [Accept all] [Manage preferences]",
    "This site uses cookies. By continuing to browse you agree to our use of cookies. [OK] [Learn more]",
    "Cookies help us deliver our services. Some are essential, others help us improve your experience. [Accept] [Reject non-essential]",
    "We and our partners store and access information on your device. [I agree] [Show purposes]",
    "Our website uses cookies to remember your settings and measure how the site is used. [Got it]",
)
_SUBSCRIBE = (
    "Sign up for our newsletter and get the week's top stories in your inbox.",
    "Subscribe for unlimited access. Cancel anytime.",
    "Enjoying this article? Support independent reporting by becoming a member.",
    "Get our morning briefing: the stories that matter, before your first coffee.",
    "Create a free account to save articles and follow topics.",
    "Want more like this? Join readers who get our daily digest.",
)
_SHARE = ("Share: Facebook · X · LinkedIn · Email · Copy link", "Share this article", "Share on: Reddit · WhatsApp · Email",
          "Print · Share · Save for later")
_FOOTER_LINKS = ("About us", "Contact", "Privacy policy", "Terms of use", "Cookie settings", "Advertise", "Careers", "Accessibility",
                 "Sitemap", "Editorial standards", "Corrections")
_COMMENTS = (
    "Interesting read, thanks for putting this together.",
    "I'd like to see a follow-up on this once more details come out.",
    "Not sure I agree with the framing here, but the facts are useful.",
    "Been following {name} for a while now and this matches what I've heard.",
    "Does anyone have a link to the original source?",
    "Great piece. The background section was especially helpful.",
    "This is the kind of coverage I come here for.",
    "Wow, I had no idea about {name}.",
    "Can someone explain why this matters? Genuinely curious.",
    "Finally some proper reporting on {name}.",
    "I wonder how this compares with last year.",
    "The comments section is going to be fun today.",
    "Bookmarking this for later.",
    "Good summary, though I think the headline oversells it a bit.",
    "My cousin works in this area and says the same thing.",
    "Honestly {name} deserves more attention than it gets.",
    "Somebody should make a proper list of these.",
    "Thanks, this cleared up a few things for me.",
    "Reported. Oh wait, wrong thread.",
    "Any word on what happens next?",
)
_FORUM_REPLIES = (
    "Following this thread.",
    "Same question here, glad someone asked.",
    "Check the official page, it usually has the latest details.",
    "Mods, can we pin this? It comes up every week.",
    "Thanks for the answer, that saved me a search.",
    "Old thread but still useful.",
    "+1, had the same problem finding this.",
    "Search is your friend, but fair enough.",
    "Welcome to the forum, by the way!",
    "Does anyone know if that has changed recently?",
)
_SEARCH = ("Search this site", "Search articles, people and topics", "Type to search", "Search the archive")
_BLURBS = {
    "wiki": ("{name} is a free encyclopedia that anyone can edit. Articles are written by volunteers and checked against published "
             "sources; if you spot a mistake, you are welcome to fix it or raise it on the talk page.",
             "{name} is a community reference work. Content is available under a free licence unless otherwise noted, and every "
             "article cites the records it draws on."),
    "news": ("{name} is an independent newsroom. Our reporters follow the story wherever it leads, and our journalism is paid for by "
             "readers and advertisers, never by the people we cover.",
             "{name} publishes news, analysis and opinion every day. Corrections are listed on our corrections page, and our "
             "editorial standards explain how we verify what we report.",
             "Founded by a small group of journalists, {name} covers the sector with a focus on accuracy and clarity. Tips are "
             "welcome through our secure contact form."),
    "press": ("This newsroom publishes official announcements. Journalists can request interviews, images and background "
              "material through the media contact listed on each release.",),
    "ranking": ("{name} compiles rankings from public records and official statements. Lists are updated as new figures are "
                "published; see our methodology page for how positions are decided.",),
    "profile": ("{name} collects specifications from official sources and keeps them up to date. We may earn a commission when you "
                "buy through links on this site, which does not affect how we present the data.",),
    "compare": ("{name} helps readers weigh their options side by side. Our comparisons use published figures only, and we update "
                "them when the underlying data changes.",),
    "forum": ("{name} is a community of enthusiasts. Be kind, stay on topic, and search before posting: the question may already "
              "have an answer. Moderators may remove posts that break the rules.",),
    "data": ("{name} publishes open data for reuse. Datasets are provided as they are received from the reporting organisations, "
             "with documentation of each field; quality notes accompany each release.",),
    "archive": ("{name} preserves what was published so that it can be read later. Pages are kept as they appeared and are not "
                "updated, so figures may since have changed.",),
    "rumor": ("{name} reports leaks and rumours from around the sector. Nothing here is official until it is confirmed, and we "
              "label speculation as such.",),
}
_EXTRAS = {
    "wiki": ("This article is a stub. You can help {name} by expanding it with material from reliable sources.",
             "This page was last edited by a volunteer. Text is available under a free licence; additional terms may apply.",
             "Some statements in this article may need additional citations. Please help improve it by adding references.",
             "The neutrality of this section is disputed. Relevant discussion may be found on the talk page."),
    "news": ("Have a tip or a correction? Our newsroom reads every message, and sources can reach us confidentially.",
             "This story has been updated with additional reporting. An earlier version did not include comment from the organisation.",
             "Our coverage of {topics} is supported by readers. If you value independent reporting, consider a subscription."),
    "forum": ("Similar threads are listed below. Posting in an old thread? Consider starting a new one instead.",
              "You must log in or register to reply here.", "Thread status: not open for further replies."),
    "profile": ("Specifications may vary by market and configuration. Always check with the manufacturer before you buy.",
                "Spotted an error in these specs? Tell us and we will check it against the official sheet."),
    "data": ("Cite this dataset as: {name}, open data release. Machine-readable metadata is available on request.",),
    "rumor": ("Have a tip? Our inbox is open and we protect our sources.",),
}
_LEGAL = ("Use of this site constitutes acceptance of our terms of use and privacy policy.",
          "Content on {name} is for information only and is not professional advice.",
          "Reproduction of material from {name} without written permission is prohibited.",
          "{name} is not responsible for the content of external sites.")
_AGO = ("just now", "an hour ago", "a few hours ago", "yesterday", "two days ago", "last week", "three weeks ago", "a month ago")


def pool_file(name: str | None) -> Path | None:
    """The background pool file of a catalog archetype or a bundled world's stem (``background/<name>.yaml``), or
    ``None`` when there is none (a user's spec: its background is composed, :mod:`worldforge.corpus.topic`)."""
    if not name or not re.fullmatch(r"[a-z0-9_]+", name) or name == "generic":
        return None
    path = Path(__file__).with_name("background") / f"{name}.yaml"
    return path if path.is_file() else None


@lru_cache(maxsize=64)
def background_pool(name: str | None) -> tuple[str, ...]:
    """General-knowledge sentences of a domain: ``background/<name>.yaml`` (a catalog archetype or a bundled
    world's stem), else ``generic.yaml``. Sentences carry no digits (no world fact can hide in them).

    ``generic.yaml`` serves only chrome contexts stored before background was composed for specs without a pool
    file (their ``pool`` names no file and they carry no ``background`` list), so that those corpora read as they did.
    """
    path = pool_file(name) or Path(__file__).with_name("background") / "generic.yaml"
    if not path.is_file():
        return ()
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return _no_digits(data.get("sentences") or ())


def _no_digits(sentences: Iterable[Any]) -> tuple[str, ...]:
    return tuple(str(s) for s in sentences if not any(ch.isdigit() for ch in str(s)))


class Chrome:
    """The page furniture of one site: deterministic by the page's random stream.

    Args:
        domain: the site's domain (``marsdaily.com``).
        name: its name (``Mars Daily``).
        genre: the site's genre key in ``_NAV`` (``news``, ``wiki``, ``forum`` ...).
        year: the copyright year of the footer.
    """

    def __init__(self, domain: str, name: str, genre: str, year: int):
        self.domain, self.name, self.genre, self.year = domain, name, genre, year
        self._lines: dict[tuple[str, int], str] = {}

    def _variant(self, rng, kind: str, make) -> str:
        """One of four variants of a line the site repeats on its pages (its menu, its footer links), made once
        from its own stream (site, kind, variant), so a page reads the same whichever page was rendered first."""
        key = (kind, rng.randrange(4))
        line = self._lines.get(key)
        if line is None:
            line = self._lines[key] = make(random.Random(zlib.crc32(f"{self.domain}|{kind}|{key[1]}".encode())))
        return line

    def _link(self, text: str) -> str:
        path = text.lower().replace("'", "").replace(" ", "-")
        return f"[{text}](https://{self.domain}/{path})"

    def header(self, rng, crumbs: list[str], topics: list[str] = ()) -> list[str]:
        """Navigation, a topics line, an optional cookie line, breadcrumbs: Markdown lines above the article."""
        items = _NAV.get(self.genre, _NAV["news"])
        nav = self._variant(rng, "nav", lambda r: " · ".join(self._link(x) for x in r.sample(items, min(len(items), r.randint(4, len(items))))))
        lines = [f"**{self.name}**", "", nav, ""]
        if topics:
            lines += [rng.choice(("Topics: ", "Sections: ", "Browse: ", "In this section: ")) + " · ".join(self._link(t) for t in topics), ""]
        if rng.random() < 0.5:
            lines += [rng.choice(_SEARCH), ""]
        if rng.random() < 0.8:
            lines += [rng.choice(_COOKIES), ""]
        if crumbs:
            lines += [" › ".join(["Home", *crumbs]), ""]
        return lines

    def footer(self, rng, topics: list[str] = ()) -> list[str]:
        """Genre extras (categories, tags, edit notes), subscription, share line and footer links: Markdown lines below the article."""
        lines = [""]
        extra = _EXTRAS.get(self.genre)
        if extra:
            lines += [rng.choice(extra).format(name=self.name, topics=", ".join(topics) or self.name), ""]
        if topics:
            lines += [rng.choice(("Categories: ", "Tags: ", "Filed under: ", "More in: ")) + " · ".join(topics), ""]
        if self.genre in ("news", "rumor", "ranking", "compare", "profile") and rng.random() < 0.8:
            lines += [rng.choice(_SHARE), ""]
        if rng.random() < 0.7:
            lines += [rng.choice(_SUBSCRIBE), ""]
        links = self._variant(rng, "footer", lambda r: " · ".join(self._link(x) for x in r.sample(_FOOTER_LINKS, r.randint(6, len(_FOOTER_LINKS)))))
        blurb = rng.choice(_BLURBS.get(self.genre, _BLURBS["news"])).format(name=self.name)
        lines += ["---", "", blurb, "", links, ""]
        lines += [x.format(name=self.name) for x in rng.sample(_LEGAL, 2)] + ["", f"© {self.year} {self.name}. All rights reserved."]
        return lines

    def comments(self, rng, users: list[str], name: str, n: int) -> list[str]:
        """A comment thread of ``n`` comments (no figures in them) by ``users``; ``name`` is the page's subject."""
        if n <= 0:
            return []
        lines = ["", f"## {rng.choice(('Comments', 'Reader comments', 'Join the discussion', 'Discussion'))} ({n})" if rng.random() < 0.5
                 else f"## {rng.choice(('Comments', 'Reader comments', 'Join the discussion', 'Discussion'))}", ""]
        for text in rng.sample(_COMMENTS, min(n, len(_COMMENTS))):
            lines += [f"**{rng.choice(users)}** · {rng.choice(_AGO)}", "", text.format(name=name), ""]
        return lines



def related_block(rng, heading: str, links: list[tuple[str, str]]) -> list[str]:
    """A "related" list of ``(title, url)`` links, as ``* [title](url)`` lines under ``heading``."""
    if not links:
        return []
    return ["", f"### {heading}", ""] + [f"* [{t.replace('[', '(').replace(']', ')')}]({u})" for t, u in links]


def forum_replies(rng, users: list[str], n: int) -> list[str]:
    """``n`` replies that add nothing (forum threads carry many), by ``users``: quoted Markdown lines."""
    out = []
    for text in rng.sample(_FORUM_REPLIES, min(n, len(_FORUM_REPLIES))):
        out += ["", f"> **{rng.choice(users)}**: {text}"]
    return out


_RELATED_HEADS = (("Related", "Read more", "You may also like", "More on this topic"), ("Popular now", "Most read", "Trending", "Editors' picks"))
_BACKGROUND_TITLES = ("## Background", "## Context", "## About the sector", "## Why it matters", "")


class Dresser:
    """Renders stored articles as whole pages: the site's chrome around each article, made on read.

    A corpus stores each page's *article* (``corpus_pages.body_md``: every fact it states) and a small
    *recipe* for the rest (``corpus_pages.chrome``, JSON): the site's genre and name, breadcrumbs, the
    comment subject, how many background sentences and comments, a seed, and for encyclopedia articles
    the URLs of the pages they cite. The corpus-wide context (commenters, topics, the background pool,
    the year) is stored once per corpus (``_corpus.chrome_context``). Rendering is deterministic: the
    same rows give the same pages in any order, as a web server renders templates around stored
    content, and the stored corpus stays a fraction of the size of the pages it serves.

    Args:
        context: ``{"users": [...], "topics": [...], "pool": archetype or world stem, "background": [...], "year": int,
            "retrieved": "Month D, YYYY", "seed": int}`` (:meth:`~worldforge.corpus.builder.CorpusBuilder.chrome_context` writes it).
            ``background``, when present, is the corpus's own background pool (composed from its spec, or the spec's
            ``background`` sentences: :func:`~worldforge.corpus.topic.spec_background`); without it the pool is
            :func:`background_pool` of ``pool`` (an archetype's or bundled world's file, and for contexts stored before
            composed pools, ``generic.yaml``).
    """

    def __init__(self, context: Mapping[str, Any]):
        self.users = list(context.get("users") or ["reader"])
        self.topics = list(context.get("topics") or [])
        own = context.get("background")
        self.pool = _no_digits(own) if own is not None else background_pool(context.get("pool"))
        # a composed pool runs table by table: the sentences a page draws keep its order
        self._order = {s: i for i, s in enumerate(self.pool)} if own is not None else None
        self.year = int(context.get("year") or 2030)
        self.retrieved = str(context.get("retrieved") or "")
        self.seed = int(context.get("seed") or 0)
        self._chrome: dict[tuple[str, str], Chrome] = {}

    def _site(self, domain: str, name: str, genre: str) -> Chrome:
        c = self._chrome.get((domain, genre))  # one domain may carry two genres (an archive's timelines and datasets)
        if c is None:
            c = self._chrome[(domain, genre)] = Chrome(domain, name, genre, self.year)
        return c

    def render(self, pages: Iterable[Mapping[str, Any]]) -> dict[str, tuple[str, int, int]]:
        """``{url: (page body, article start, article end)}`` for stored pages (mappings with ``url``,
        ``page_type``, ``title``, ``published``, ``body_md`` (the article), ``site`` and ``chrome`` (the recipe,
        a dict or its JSON; ``None``: the body is served as stored)). Related lists link pages of the same
        site among ``pages``, so pass a whole corpus."""
        prepared = self.prepare(pages)
        return {url: prepared.page(url) for url in prepared.urls}

    def prepare(self, pages: Iterable[Mapping[str, Any]]) -> PreparedCorpus:
        """The corpus-wide part of :meth:`render` (recipes, related lists), done once: its
        :meth:`PreparedCorpus.page` renders one page when asked, the same page :meth:`render` gives."""
        rows = sorted(pages, key=lambda r: r["url"])
        recipes = {r["url"]: (json.loads(r["chrome"]) if isinstance(r["chrome"], str) else r["chrome"]) for r in rows}
        return PreparedCorpus(self, {r["url"]: r for r in rows}, recipes, self._related([r for r in rows if recipes[r["url"]]]))

    def _page(self, corpus: PreparedCorpus, url: str) -> tuple[str, int, int]:
        r, rec, by_url, recipes = corpus.rows[url], corpus.recipes[url], corpus.rows, corpus.recipes
        article = r["body_md"]
        if not rec:
            return article, 0, len(article)
        rng = random.Random(rec["r"])
        chrome = self._site(r["site"], rec["n"], rec["g"])
        crumbs = list(rec.get("c") or [])
        head = chrome.header(rng, crumbs, rng.sample(self.topics, min(len(self.topics), rng.randint(3, 8))))
        parts = head + [article]
        k = int(rec.get("b") or 0)
        if k and self.pool:
            bg = rng.sample(self.pool, min(k, len(self.pool)))
            if self._order is not None:
                bg.sort(key=self._order.__getitem__)
            title = rng.choice(_BACKGROUND_TITLES)
            parts += ["", title, ""] if title else [""]
            parts += [" ".join(bg[:len(bg) // 2 + 1]), "", " ".join(bg[len(bg) // 2 + 1:])] if len(bg) > 8 else [" ".join(bg)]
        parts += chrome.comments(rng, self.users, rec.get("s") or "", int(rec.get("k") or 0))
        refs = [by_url[u] for u in rec.get("refs") or () if u in by_url]
        if refs:
            parts += ["", "## References", ""]
            for i, q in enumerate(refs, 1):
                when = f", {_render_date(q['published'])}" if q.get("published") else ""
                qname = (recipes[q["url"]] or {}).get("n", q["site"])
                parts.append(f"{i}. \u201c[{q['title']}]({q['url']})\u201d. *{qname}*{when}. Retrieved {self.retrieved}.")
            parts += [""] if rng.random() < 0.5 else ["", "External links: official website · archived copy"]
        parts += corpus.related.get(url, [])
        parts += chrome.footer(rng, crumbs[:-1] if len(crumbs) > 1 else crumbs)
        start = len("\n".join(head)) + 1
        return "\n".join(parts), start, start + len(article)

    def _related(self, rows: list[Mapping[str, Any]]) -> dict[str, list[str]]:
        """"Related" and "most read" lists per page: the pages after it in one seeded shuffle of its site's pages."""
        by_site: dict[str, list[Mapping[str, Any]]] = {}
        for r in rows:
            by_site.setdefault(r["site"], []).append(r)
        out = {}
        for site, pages in by_site.items():
            if len(pages) < 2:
                continue
            rng = random.Random(zlib.crc32(f"{self.seed}|{site}|related".encode()))
            order = pages[:]
            rng.shuffle(order)
            n = len(order)
            for i, p in enumerate(order):
                picks = [order[(i + j) % n] for j in range(1, min(n, 13))]
                first = picks[: rng.randint(3, 6)]
                second = picks[len(first):len(first) + rng.randint(3, 6)] if rng.random() < 0.8 else []
                out[p["url"]] = (related_block(rng, rng.choice(_RELATED_HEADS[0]), [(q["title"], q["url"]) for q in first])
                                 + related_block(rng, rng.choice(_RELATED_HEADS[1]), [(q["title"], q["url"]) for q in second]))
        return out


@dataclass(frozen=True)
class PreparedCorpus:
    """A corpus ready to render page by page (:meth:`Dresser.prepare`): ``urls`` in order, ``page(url)`` →
    ``(page body, article start, article end)``. A server renders only the pages an agent opens."""

    dresser: Dresser
    rows: Mapping[str, Mapping[str, Any]]
    recipes: Mapping[str, dict | None]
    related: Mapping[str, list[str]]

    @property
    def urls(self) -> list[str]:
        """Every page's URL, sorted."""
        return list(self.rows)

    def page(self, url: str) -> tuple[str, int, int]:
        """One page rendered whole (``KeyError`` for a URL not in the corpus)."""
        return self.dresser._page(self, url)


def _render_date(value: Any) -> str:
    from worldforge.corpus.quantity import render_value

    return render_value(value)
