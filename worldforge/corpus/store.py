"""Corpus tables in the world's DuckDB file, and the check that pages never contradict rows.

Tables (replaced together, atomically, on every build):

* ``corpus_pages(url PK, world, scenario, page_type, title, published, lead, body_md, site, chrome)`` —
  ``scenario`` is NULL for the world itself; ``body_md`` is the page's article (every fact it
  states), ``chrome`` the JSON recipe of the site furniture around it, rendered on read
  (:class:`~worldforge.corpus.chrome.Dresser`, :func:`read_corpus` with ``dressed=True``);
* ``corpus_facts(url FK, table_name, row_key, column_name, value_text, section, scope, kind, basis)`` — the
  provenance: each cell a page states (``kind = 'value'``), ``section`` ``lead`` (may show in a snippet) or
  ``body`` (only on the page); and each derived claim a page makes (``kind`` one of
  :data:`~worldforge.corpus.claims.CLAIM_KINDS`: ``value_text`` is the claim's phrase, ``basis`` the JSON of its
  parameters and of every cell it is computed from);
* ``_corpus(scenario, pages, facts, corpus_hash, built_at, chrome_context)`` — ``chrome_context``:
  JSON of what every page of the corpus shares when served (commenters, topics, background pool, year).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import orjson
import polars as pl

from worldforge.corpus.chrome import Dresser
from worldforge.corpus.claims import Claim, ClaimWorld
from worldforge.corpus.generate import Page, generate_pages
from worldforge.corpus.quantity import denotes, render_value
from worldforge.corpus.vocab import table_info
from worldforge.errors import WarehouseError
from worldforge.runtime import paused_gc
from worldforge.spec.scenario import scenario_spec
from worldforge.tally import Tally
from worldforge.warehouse import WorldFile, read_world
from worldforge.warehouse.duck import atomic_duckdb, count_rows, insert_frame, open_readonly, rows_per_group

PAGE_SCHEMA = {
    "url": pl.String, "world": pl.String, "scenario": pl.String, "page_type": pl.String, "title": pl.String,
    "published": pl.Date, "lead": pl.String, "body_md": pl.String, "site": pl.String, "chrome": pl.String,
}
FACT_SCHEMA = {
    "url": pl.String, "table_name": pl.String, "row_key": pl.String, "column_name": pl.String,
    "value_text": pl.String, "section": pl.String, "scope": pl.String, "kind": pl.String, "basis": pl.String,
}

_DDL = """
DROP VIEW IF EXISTS v_claims;
DROP VIEW IF EXISTS v_facts;
DROP VIEW IF EXISTS v_pages;
DROP TABLE IF EXISTS corpus_facts;
DROP TABLE IF EXISTS corpus_pages;
DROP TABLE IF EXISTS _corpus;
CREATE TABLE corpus_pages (url VARCHAR PRIMARY KEY USING COMPRESSION zstd, world VARCHAR NOT NULL, scenario VARCHAR,
  page_type VARCHAR NOT NULL, title VARCHAR NOT NULL USING COMPRESSION zstd, published DATE,
  lead VARCHAR NOT NULL USING COMPRESSION zstd, body_md VARCHAR NOT NULL USING COMPRESSION zstd, site VARCHAR,
  chrome VARCHAR USING COMPRESSION zstd);
CREATE TABLE corpus_facts (url VARCHAR NOT NULL, table_name VARCHAR NOT NULL,
  row_key VARCHAR NOT NULL, column_name VARCHAR NOT NULL, value_text VARCHAR NOT NULL, section VARCHAR NOT NULL, scope VARCHAR,
  kind VARCHAR NOT NULL DEFAULT 'value', basis VARCHAR USING COMPRESSION zstd);
CREATE TABLE _corpus (scenario VARCHAR, pages BIGINT, facts BIGINT, corpus_hash VARCHAR, built_at TIMESTAMP, chrome_context VARCHAR);
COMMENT ON TABLE corpus_pages IS 'Search corpus: pages generated from the world rows (scenario NULL = the world itself); body_md is the article (every stated fact is in it, what the search index reads); chrome is the JSON recipe of the site furniture around it (navigation, background, comments, related lists, footer), rendered on read with _corpus.chrome_context (worldforge.corpus.read_corpus, web_extractor).';
COMMENT ON TABLE corpus_facts IS 'Provenance: the (table, row, column) cells each page states (kind value; url: its corpus_pages row, written with it), value_text as the page writes it; section lead = may show in a search snippet; scope world = a base-world value on a scenario page (an archive). Derived claims (kind rank, peer, average, share, count, total, change, gap): value_text is the claim phrase, basis the JSON of its parameters and of every cell it is computed from; the corpus check recomputes each one.';
CREATE OR REPLACE VIEW v_pages AS
  SELECT p.url, p.scenario, p.page_type, p.title, p.published, count(f.url) AS facts,
         count(f.url) FILTER (WHERE f.section = 'body') AS body_only_facts
  FROM corpus_pages p LEFT JOIN (SELECT * FROM corpus_facts WHERE kind = 'value') f USING (url)
  GROUP BY ALL;
CREATE OR REPLACE VIEW v_facts AS
  SELECT f.table_name, f.row_key, f.column_name, f.value_text, f.section, f.scope, f.kind, p.scenario, p.page_type, p.title, f.url
  FROM corpus_facts f JOIN corpus_pages p USING (url);
CREATE OR REPLACE VIEW v_claims AS
  SELECT f.kind, f.value_text AS claim, f.table_name, f.row_key, f.column_name, f.scope, p.scenario, p.page_type, p.title, f.url, f.basis
  FROM corpus_facts f JOIN corpus_pages p USING (url) WHERE f.kind <> 'value';
COMMENT ON VIEW v_pages IS 'One row per corpus page with how many table cells it states (and how many only in its body).';
COMMENT ON VIEW v_facts IS 'Every stated cell (kind value) and derived claim with the page that states it: which facts does a page state, which pages state a row.';
COMMENT ON VIEW v_claims IS 'Derived claims (ranks, comparisons, averages, shares, counts, totals, changes, date gaps) with the page that makes them and the cells they are computed from (basis).';
"""


def corpus_frames(pages: list[Page]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``(corpus_pages, corpus_facts)`` frames of a list of pages (column-wise: one list per column); the facts frame holds
    the stated cells (``kind = 'value'``) and then the derived claims."""
    dump = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    p = pl.DataFrame({
        "url": [x.url for x in pages], "world": [x.world for x in pages], "scenario": [x.scenario for x in pages],
        "page_type": [x.page_type for x in pages], "title": [x.title for x in pages], "published": [x.published for x in pages],
        "lead": [x.lead for x in pages], "body_md": [x.body_md for x in pages], "site": [x.site or None for x in pages],
        "chrome": [dump(x.chrome) if x.chrome else None for x in pages],
    }, schema=PAGE_SCHEMA)
    facts = [f for x in pages for f in x.facts]  # Facts are named tuples: one zip makes the six columns
    claims = [c for x in pages for c in x.claims]
    cells = list(zip(*facts)) if facts else [()] * 6
    f = pl.DataFrame({
        "url": [x.url for x in pages for _ in x.facts] + [x.url for x in pages for _ in x.claims],
        "table_name": [*cells[0], *(c.table_name for c in claims)], "row_key": [*cells[1], *(c.row_key for c in claims)],
        "column_name": [*cells[2], *(c.column_name for c in claims)], "value_text": [*cells[3], *(c.text for c in claims)],
        "section": [*cells[4], *(c.section for c in claims)], "scope": [*cells[5], *(c.scope for c in claims)],
        "kind": ["value"] * len(facts) + [c.kind for c in claims],
        "basis": [None] * len(facts) + [orjson.dumps(c.basis).decode() for c in claims],
    }, schema=FACT_SCHEMA)
    return p, f


def article_text(row: dict) -> str:
    """A stored page's article (``corpus_pages`` row as a mapping): ``body_md[article_start:article_end]`` for a page
    served whole (:func:`read_corpus` with ``dressed=True``), else the stored body, which is the article."""
    start, end = row.get("article_start"), row.get("article_end")
    return row["body_md"] if start is None or end is None else row["body_md"][start:end]


def dress_frame(pages: pl.DataFrame, context: dict | None) -> pl.DataFrame:
    """Stored pages served whole: ``body_md`` becomes the article in its site's chrome
    (:class:`~worldforge.corpus.chrome.Dresser`) and ``article_start``/``article_end`` (0-based, end exclusive) mark
    the article inside it. Pages without a recipe (or a corpus without a context) are served as stored."""
    if pages.height == 0 or "chrome" not in pages.columns or context is None:
        return pages.with_columns(article_start=pl.lit(None, pl.Int32), article_end=pl.lit(None, pl.Int32))
    done = Dresser(context).render(pages.select("url", "page_type", "title", "published", "body_md", "site", "chrome").iter_rows(named=True))
    bodies = [done[u] for u in pages["url"]]
    return pages.with_columns(body_md=pl.Series([b for b, _, _ in bodies], dtype=pl.String),
                              article_start=pl.Series([a for _, a, _ in bodies], dtype=pl.Int32),
                              article_end=pl.Series([e for _, _, e in bodies], dtype=pl.Int32))


def corpus_hash(pages: pl.DataFrame, context: dict | None = None) -> str:
    """SHA-256 over (url, title, published, lead, article, site, chrome recipe) in URL order and the corpus's chrome
    context: changes whenever any page as served does (for a given version of the chrome code)."""
    h = hashlib.sha256()
    if context:
        h.update(json.dumps(context, sort_keys=True, ensure_ascii=False).encode() + b"\x1d")
    for row in pages.sort("url").select("url", "title", "published", "lead", "body_md", "site", "chrome").iter_rows():
        h.update("\x1f".join("" if v is None else str(v) for v in row).encode())
        h.update(b"\x1e")
    return h.hexdigest()


@dataclass(frozen=True)
class CorpusReport:
    """What a corpus build wrote.

    Attributes:
        path: the world file.
        pages: pages per corpus (``None``: the world's, else a scenario name).
        facts: ``corpus_facts`` rows over all pages: the table cells stated and the derived claims made.
        claims: of those, the derived claims (:mod:`worldforge.corpus.claims`).
    """

    path: Path
    pages: dict[str | None, int]
    facts: int
    claims: int = 0


def fact_tally(stated: int, contradictions: pl.DataFrame) -> Tally:
    """Facts stated = consistent with the tables + contradicted, by problem (:func:`check_corpus`'s frame)."""
    reasons = dict(contradictions.group_by("problem").len().iter_rows()) if contradictions.height else {}
    return Tally.of(stated, stated - contradictions.height, reasons, unit="facts", kept_as="consistent", dropped_as="contradicted")


def generate_corpus(path: str | Path, seed: int | None = None, world: WorldFile | None = None) -> dict[str | None, list[Page]]:
    """The pages of a world file's corpora, not stored: ``{None: the world's pages, scenario name: its pages}``
    for the world and each stored scenario (what :func:`write_corpus` stores; :func:`worldforge.corpus.steps.build_corpus` does both and checks the facts).

    ``world``: the file's ``read_world`` when the caller has already read it.

    Raises:
        WarehouseError: the file is not a world.
    """
    wf = read_world(path) if world is None else world
    with paused_gc():  # no collection between the corpora either (called alone, the collector walks the pages once, at the end)
        by_scenario = {None: generate_pages(wf.spec, wf.tables, None, seed)}
        for sc in wf.spec.scenarios:
            if sc.name in wf.scenarios:
                by_scenario[sc.name] = generate_pages(scenario_spec(wf.spec, sc), wf.scenarios[sc.name], sc.name, seed, base=(wf.spec, wf.tables))
    return by_scenario


def write_corpus(path: str | Path, by_scenario: dict[str | None, list[Page]]) -> CorpusReport:
    """Replace the corpus tables of a world file atomically.

    All corpora go into one insert per table, in row groups of half the facts (:func:`rows_per_group`): DuckDB then
    writes them straight to the file instead of through its write-ahead log."""
    with paused_gc():  # many small objects, all kept until written, no cycles: the collector would only walk them
        pf, ff = corpus_frames([p for pages in by_scenario.values() for p in pages])
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    contexts = {s: next((p.context for p in pages if p.context is not None), None) for s, pages in by_scenario.items()}
    counts = {s: (len(pages), sum(len(p.facts) + len(p.claims) for p in pages)) for s, pages in by_scenario.items()}
    hashes = {s: corpus_hash(pf.filter(pl.col("scenario").is_null() if s is None else pl.col("scenario") == s), contexts[s])
              for s in by_scenario}
    meta = pl.DataFrame(
        [(s, n_pages, n_facts, hashes[s], now, json.dumps(contexts[s], ensure_ascii=False) if contexts[s] else None)
         for s, (n_pages, n_facts) in counts.items()],
        schema={"scenario": pl.String, "pages": pl.Int64, "facts": pl.Int64, "corpus_hash": pl.String, "built_at": pl.Datetime("us"),
                "chrome_context": pl.String},
        orient="row",
    )
    with atomic_duckdb(path, update=True, row_group_size=rows_per_group(ff.height)) as con:
        con.execute(_DDL)
        insert_frame(con, "corpus_pages", pf)
        insert_frame(con, "corpus_facts", ff)
        insert_frame(con, "_corpus", meta)
    return CorpusReport(Path(path), {s: n for s, (n, _) in counts.items()}, ff.height,
                        sum(len(p.claims) for pages in by_scenario.values() for p in pages))


def read_corpus(path: str | Path, scenario: str | None = None, dressed: bool = True) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``(pages, facts)`` of one corpus (the world's when ``scenario`` is None).

    ``dressed``: serve each page whole, its article in the site's chrome (:func:`dress_frame`: ``body_md`` is the
    page ``web_extractor`` returns, ``article_start``/``article_end`` mark the article); ``False``: the stored
    articles (what the index and the task generator read, faster).

    Raises:
        WarehouseError: the file has no corpus yet.
    """
    pages, facts, context = _stored(path, scenario, dressed)
    return (dress_frame(pages, context) if dressed else pages), facts


def _stored(path: str | Path, scenario: str | None, context: bool) -> tuple[pl.DataFrame, pl.DataFrame, dict | None]:
    """``(pages as stored, facts, chrome context or None)`` of one corpus (:func:`read_corpus`)."""
    con = open_readonly(path)
    try:
        tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main'").fetchall()}
        if "corpus_pages" not in tables:
            raise WarehouseError(f"{path}: no corpus yet (run `worldforge corpus build`)")
        cond = "scenario IS NULL" if scenario is None else "scenario = ?"
        args = [] if scenario is None else [scenario]
        pages = con.sql(f"SELECT * FROM corpus_pages WHERE {cond} ORDER BY url", params=args).pl()
        claims = _has_claims(con)
        facts = con.sql(
            f"SELECT f.* EXCLUDE (kind, basis) FROM corpus_facts f JOIN corpus_pages p USING (url) WHERE p.{cond} AND f.kind = 'value' "
            "ORDER BY f.url, f.table_name, f.row_key, f.column_name" if claims else
            f"SELECT f.* FROM corpus_facts f JOIN corpus_pages p USING (url) WHERE p.{cond} ORDER BY f.url, f.table_name, f.row_key, f.column_name",
            params=args,
        ).pl()
        found = _context(con, scenario) if context and "chrome" in pages.columns else None
    finally:
        con.close()
    return pages, facts, found


class ServedPages(Mapping[str, dict]):
    """``url -> page row as served``, each page dressed on first access (:meth:`Dresser.prepare`): the same rows
    as ``read_corpus(path, scenario)`` (``body_md`` the whole page, ``article_start``/``article_end`` the article
    inside it) without rendering the pages nobody opens. Thread-safe for reading (a page rendered twice is the
    same page)."""

    def __init__(self, rows: dict[str, dict], context: dict | None):
        self._rows = rows
        self._prepared = Dresser(context).prepare(rows.values()) if context is not None and rows else None
        self._served: dict[str, dict] = {}

    def __getitem__(self, url: str) -> dict:
        got = self._served.get(url)
        if got is None:
            row = self._rows[url]
            if self._prepared is None or "chrome" not in row:
                got = {**row, "article_start": None, "article_end": None}
            else:
                body, start, end = self._prepared.page(url)
                got = {**row, "body_md": body, "article_start": start, "article_end": end}
            self._served[url] = got
        return got

    def get(self, url: str, default: dict | None = None) -> dict | None:  # type: ignore[override]
        """The page as served, or ``default`` for a URL not in the corpus. Unlike ``Mapping.get``, an error while
        dressing a page that exists propagates: it is a bug, never a 404."""
        return self[url] if url in self._rows else default

    def __contains__(self, url: object) -> bool:
        return url in self._rows

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def titles(self, page_type: str) -> list[str]:
        """The titles of the pages of one type (``encyclopedia``), read without rendering a page."""
        return [r["title"] for r in self._rows.values() if r["page_type"] == page_type]

    def __len__(self) -> int:
        return len(self._rows)


def served_corpus(path: str | Path, scenario: str | None = None) -> tuple[ServedPages, pl.DataFrame]:
    """``(pages, facts)`` of one corpus as a server reads it: :class:`ServedPages` (dressed on access, the pages of
    :func:`read_corpus` with ``dressed=True``) and the facts.

    Raises:
        WarehouseError: the file has no corpus yet.
    """
    pages, facts, context = _stored(path, scenario, context=True)
    return ServedPages({r["url"]: r for r in pages.iter_rows(named=True)}, context), facts


def _has_claims(con: duckdb.DuckDBPyConnection) -> bool:
    """The file's ``corpus_facts`` has the ``kind`` column (a corpus built before derived claims has stated values only)."""
    return bool(con.execute("SELECT count(*) FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = 'main' "
                            "AND table_name = 'corpus_facts' AND column_name = 'kind'").fetchall()[0][0])


def read_claims(path: str | Path, scenario: str | None = None) -> pl.DataFrame:
    """The derived claims of one corpus (the world's when ``scenario`` is None).

    Returns:
        Frame ``(url, kind, table_name, row_key, column_name, value_text, section, scope, basis)`` ordered by URL, empty
        for a corpus built before derived claims.

    Raises:
        WarehouseError: the file has no corpus yet.
    """
    con = open_readonly(path)
    try:
        if not con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main' "
                           "AND table_name = 'corpus_facts'").fetchall()[0][0]:
            raise WarehouseError(f"{path}: no corpus yet (run `worldforge corpus build`)")
        cols = ["url", "kind", "table_name", "row_key", "column_name", "value_text", "section", "scope", "basis"]
        if not _has_claims(con):
            return pl.DataFrame(schema={c: pl.String for c in cols})
        cond = "scenario IS NULL" if scenario is None else "scenario = ?"
        return con.sql(f"SELECT {', '.join('f.' + c for c in cols)} FROM corpus_facts f JOIN corpus_pages p USING (url) "
                       f"WHERE p.{cond} AND f.kind <> 'value' ORDER BY f.url, f.value_text", params=[] if scenario is None else [scenario]).pl()
    finally:
        con.close()


def _context(con: duckdb.DuckDBPyConnection, scenario: str | None) -> dict | None:
    """The chrome context stored for a corpus (``_corpus.chrome_context``), ``None`` when there is none."""
    cond = "scenario IS NULL" if scenario is None else "scenario = ?"
    try:
        row = con.execute(f"SELECT chrome_context FROM _corpus WHERE {cond}", [] if scenario is None else [scenario]).fetchone()
    except duckdb.Error:  # a corpus stored before the column existed
        return None
    return json.loads(row[0]) if row and row[0] else None


def all_pages(path: str | Path) -> pl.DataFrame | None:
    """Every page of a world file (the world's, then each scenario's), ordered by scenario and URL.

    Returns:
        Frame ``(world, scenario, url, title, published, body_md)``, or ``None`` when the file
        has no corpus yet (its corpus asset has not run).

    Raises:
        WarehouseError: the file is missing or not DuckDB.
    """
    con = open_readonly(path)
    try:
        scenarios = [r[0] for r in con.execute("SELECT DISTINCT scenario FROM corpus_pages ORDER BY coalesce(scenario, '')").fetchall()]
    except duckdb.CatalogException:
        return None
    finally:
        con.close()
    cols = ["world", "scenario", "url", "title", "published", "body_md"]
    frames = [read_corpus(path, s)[0].select(cols) for s in scenarios]
    return pl.concat(frames) if frames else pl.DataFrame(schema={c: PAGE_SCHEMA[c] for c in cols})


def corpus_scenarios(path: str | Path) -> list[str]:
    """The scenarios of a world file that have a corpus (``_corpus.scenario``), sorted; empty before the first build.

    Raises:
        WarehouseError: the file is missing or not DuckDB.
    """
    con = open_readonly(path)
    try:
        return [r[0] for r in con.execute("SELECT DISTINCT scenario FROM _corpus WHERE scenario IS NOT NULL ORDER BY 1").fetchall()]
    except duckdb.CatalogException:
        return []
    finally:
        con.close()


def page_count(path: str | Path) -> int | None:
    """Pages of a world file's corpus (the world's and its scenarios'), ``None`` before its first build.

    Raises:
        WarehouseError: the file is missing or not DuckDB.
    """
    return count_rows(path, "corpus_pages")


def stored_hash(path: str | Path, scenario: str | None = None) -> str | None:
    """The corpus hash recorded in ``_corpus`` for the world (or a scenario), ``None`` before the first build."""
    con = open_readonly(path)
    try:
        cond = "scenario IS NULL" if scenario is None else "scenario = ?"
        row = con.execute(f"SELECT corpus_hash FROM _corpus WHERE {cond}", [] if scenario is None else [scenario]).fetchone()
        return row[0] if row else None
    except duckdb.Error:  # no _corpus table yet
        return None
    finally:
        con.close()


def check_corpus(path: str | Path, world: WorldFile | None = None) -> pl.DataFrame:
    """Re-read every stated fact against the DuckDB rows.

    A fact is *contradicted* when its row is missing, its stated text is not a faithful writing of
    the cell (:func:`~worldforge.corpus.quantity.denotes`: the same date or text, a number within
    the rounding its digits show), or the page body does not contain the stated text. A fact with
    ``scope = 'world'`` on a scenario page is checked against the base world's tables. A derived claim
    (:mod:`worldforge.corpus.claims`) is contradicted when what its phrase asserts (a direction, a rank, a
    count, an amount, a gap) does not hold when recomputed from the tables, or its page does not contain it;
    its row's ``actual`` is the claim's kind.

    ``world``: the file's ``read_world`` when the caller has just read it (the tables are read
    from the file otherwise).

    Returns:
        Frame ``(url, scenario, table_name, row_key, column_name, stated, actual, problem)``,
        empty when the corpus agrees with the tables.
    """
    wf = read_world(path) if world is None else world
    con = open_readonly(path)
    try:
        claims_stored = _has_claims(con)
        facts = con.sql(
            "SELECT f.*, p.scenario, position(f.value_text IN p.body_md) > 0 AS in_body "
            "FROM corpus_facts f JOIN corpus_pages p USING (url)" + (" WHERE f.kind = 'value'" if claims_stored else "")
        ).pl()
        claims = con.sql(
            "SELECT f.*, p.scenario, position(f.value_text IN p.body_md) > 0 AS in_body "
            "FROM corpus_facts f JOIN corpus_pages p USING (url) WHERE f.kind <> 'value'"
        ).pl() if claims_stored else None
    finally:
        con.close()
    sources = {None: (wf.spec, wf.tables)}
    for sc in wf.spec.scenarios:
        if sc.name in wf.scenarios:
            sources[sc.name] = (scenario_spec(wf.spec, sc), wf.scenarios[sc.name])
    rows: dict[tuple, dict] = {}
    infos: dict[tuple, object] = {}
    for scen, (spec, tables) in sources.items():
        for t, table in spec.tables.items():
            pk = table.primary_key
            info = table_info(spec, t, tables[t])
            for c, ci in info.columns.items():
                infos[(scen, t, c)] = ci
            for row in tables[t].iter_rows(named=True):
                rows[(scen, t, str(row[pk]))] = row
    # The same cell is stated in the same words on many pages: each distinct (cell, text) is read
    # back once; whether a page's body holds the text is still looked at per fact.
    verdicts: dict[tuple, tuple[str | None, str | None]] = {}
    out = []
    cols = ("url", "scenario", "scope", "table_name", "row_key", "column_name", "value_text", "in_body")
    for url, scenario, scope, t, k, c, text, in_body in facts.select(cols).iter_rows():
        scen = None if scope == "world" else scenario
        key = (scen, t, k, c, text)
        verdict = verdicts.get(key)
        if verdict is None:
            row = rows.get((scen, t, k))
            ci = infos.get((scen, t, c))
            if row is None or ci is None or c not in row:
                verdict = ("no such row or column", None)
            else:
                stated = text.replace("\\|", "|")
                ok = denotes(stated, row[c], ci.unit, ci.kind if ci.kind in ("date", "number", "rank", "share") else "text")
                verdict = (None if ok else "value differs", render_value(row[c]))
            verdicts[key] = verdict
        problem, actual = verdict
        if problem is None and not in_body:
            problem = "the page does not state it"
        if problem:
            out.append((url, scenario, t, k, c, text, actual, problem))
    if claims is not None and claims.height:
        out += _check_claims(claims, sources, infos)
    names = ["url", "scenario", "table_name", "row_key", "column_name", "stated", "actual", "problem"]
    return pl.DataFrame(out, schema={n: pl.String for n in names}, orient="row")  # typed: a null scenario may come first


def _check_claims(claims: pl.DataFrame, sources: dict, infos: dict) -> list[tuple]:
    """Contradicted derived claims: each phrase read back (:func:`~worldforge.corpus.claims.read`) and recomputed from
    the tables of its corpus (:meth:`~worldforge.corpus.claims.ClaimWorld.verify`), or missing from its page.
    Rows as :func:`check_corpus` returns them, ``actual`` the claim's kind."""
    base_spec, base_tables = sources[None]
    base_rows = {t: f.to_dicts() for t, f in base_tables.items()}
    worlds: dict[str | None, ClaimWorld] = {}
    out = []
    cols = ("url", "scenario", "scope", "kind", "table_name", "row_key", "column_name", "value_text", "basis", "in_body")
    for url, scenario, scope, kind, t, k, c, text, basis, in_body in claims.select(cols).iter_rows():
        scen = scenario if scenario in sources else None
        world = worlds.get(scen)
        if world is None:
            spec, tables = sources[scen]
            world = worlds[scen] = ClaimWorld({n: (base_rows[n] if scen is None else f.to_dicts()) for n, f in tables.items()},
                                              {n: ts.primary_key for n, ts in spec.tables.items()},
                                              {(n, col): getattr(ci, "unit", None) for (s_, n, col), ci in infos.items() if s_ == scen},
                                              base=None if scen is None else base_rows)
        try:
            problem = world.verify(Claim(kind, t, k, c, text, orjson.loads(basis or "{}"), scope=scope))
        except (TypeError, ValueError, ZeroDivisionError):
            problem = "unreadable claim"
        if problem is None and not in_body:
            problem = "the page does not state it"
        if problem:
            out.append((url, scenario, t, k, c, text, kind, problem))
    return out


__all__ = ["CorpusReport", "ServedPages", "all_pages", "dress_frame", "article_text", "fact_tally", "page_count", "check_corpus", "corpus_frames", "corpus_hash", "corpus_scenarios", "generate_corpus", "read_claims", "read_corpus", "served_corpus", "stored_hash", "write_corpus"]
