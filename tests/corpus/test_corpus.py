import re

import duckdb
import polars as pl
import pytest

from tests.conftest import BUNDLED
from tests.conftest_worlds import built_world
from worldforge.corpus import build_index, check_corpus, generate_pages, index_dir, read_corpus, search
from worldforge.corpus.index import plain
from worldforge.corpus.quantity import parse_date
from worldforge.corpus.store import corpus_frames, corpus_hash, write_corpus
from worldforge.synth import build_world
from worldforge.warehouse import Warehouse, read_world


@pytest.fixture(scope="module")
def phones(specs, tmp_path_factory):
    wh = Warehouse(tmp_path_factory.mktemp("wh"))
    return built_world(specs["smartphones_2029"], wh), wh


@pytest.mark.parametrize("name", BUNDLED)
def test_corpus_never_contradicts_the_tables(specs, tmp_path, name):
    path = built_world(specs[name], tmp_path)
    assert check_corpus(path).height == 0
    pages, facts = read_corpus(path)
    genres = set(pages["page_type"])
    # press releases only where an organisation announces something recent (tests/corpus/test_genres_fit.py)
    assert len(genres) >= 6 and genres >= {"encyclopedia", "news", "ranking", "profile", "comparison", "forum", "dataset", "timeline"}
    assert 300 <= pages.height <= 5000 and facts.height > pages.height
    assert pages["url"].n_unique() == pages.height
    with duckdb.connect(str(path), read_only=True) as con:  # every stated cell belongs to a stored page (no declared key: written together)
        assert con.execute("SELECT count(*) FROM corpus_facts f ANTI JOIN corpus_pages p USING (url)").fetchone()[0] == 0
    assert facts.filter(pl.col("section") == "lead").height > 0 and facts.filter(pl.col("section") == "body").height > 0


def test_every_fact_is_stated_where_it_says(specs):
    spec = specs["mars_colony_2030"]
    for page in generate_pages(spec, build_world(spec, 3)):
        for f in page.facts:
            assert f.value_text in page.body_md
            if f.section == "lead":
                assert f.value_text in page.lead


def test_scenario_corpora_have_their_own_urls(phones):
    path, _ = phones
    world, _ = read_corpus(path)
    scen, facts = read_corpus(path, "market_2031")
    assert scen.height and set(scen["url"]).isdisjoint(set(world["url"]))
    assert all("/market_2031/" in u for u in scen["url"])
    # the 2031 copy states 2031 launch dates (its archive pages state 2029 ones, as base-world facts)
    launch = facts.filter((pl.col("table_name") == "models") & (pl.col("column_name") == "launch_date") & pl.col("scope").is_null())["value_text"]
    assert launch.len() and {parse_date(x).year for x in launch} == {2031}


def test_the_check_finds_contradictions(phones, tmp_path):
    path, _ = phones
    copy = tmp_path / path.name
    copy.write_bytes(path.read_bytes())
    con = duckdb.connect(str(copy))
    con.execute("UPDATE models SET battery_mah = battery_mah + 1 WHERE model_id = 5")
    con.execute("UPDATE corpus_pages SET body_md = replace(body_md, 'Samsung', 'Sam-sung') WHERE page_type = 'encyclopedia' AND scenario IS NULL")
    con.close()
    bad = check_corpus(copy)
    differs = bad.filter(pl.col("problem") == "value differs")
    assert set(differs["table_name"]) == {"models"} and set(differs["row_key"]) == {"5"} and set(differs["column_name"]) == {"battery_mah"}
    assert bad.filter(pl.col("problem") == "the page does not state it").height > 0


def test_same_seed_same_corpus(specs):
    spec = specs["esports_2031"]
    tables = build_world(spec, 1)
    a, b = corpus_frames(generate_pages(spec, tables)), corpus_frames(generate_pages(spec, tables))
    assert a[0].equals(b[0]) and a[1].equals(b[1])
    c = corpus_frames(generate_pages(spec, tables, seed=99))
    assert corpus_hash(c[0]) != corpus_hash(a[0])
    assert corpus_hash(a[0], {"users": ["ann"]}) != corpus_hash(a[0], {"users": ["bob"]})  # the served pages differ


def test_search_finds_the_entity_page_with_a_lead_snippet(phones):
    path, wh = phones
    pages, facts = read_corpus(path)
    model = facts.filter((pl.col("table_name") == "models") & (pl.col("column_name") == "name"))["value_text"][0]
    hits = search("smartphones_2029", model, 10, wh)
    assert len(hits) == 10 and hits[0].score >= hits[-1].score
    assert any(h.page_type == "encyclopedia" and h.title.startswith(model + " - ") for h in hits[:5])
    leads = dict(zip(pages["url"], pages["lead"]))
    for h in hits:
        assert h.snippet.rstrip("…") in " ".join(plain(leads[h.url]).split())
        assert not re.search(r"\s[.,;:!?]", h.snippet), h.snippet  # an emphasis mark leaves no space before punctuation
    # query syntax errors fall back to the words: the brand is still found
    brand = facts.filter((pl.col("table_name") == "brands") & (pl.col("column_name") == "name"))["value_text"][0]
    fallback = search("smartphones_2029", f'AND ( "{brand}', 3, wh)
    assert fallback and all(brand in h.title for h in fallback)


def test_a_repeated_query_gives_the_same_hits_until_the_corpus_changes(phones, specs, tmp_path):
    path, wh = phones
    world = tmp_path / path.name
    world.write_bytes(path.read_bytes())
    first = search("smartphones_2029", "Samsung smartphone", 5, Warehouse(tmp_path))
    kept = list(first)
    first.reverse()  # the caller's list: reordering it changes nothing kept
    assert search("smartphones_2029", "Samsung smartphone", 5, Warehouse(tmp_path)) == kept
    assert search("smartphones_2029", "Samsung smartphone", 3, Warehouse(tmp_path)) == kept[:3]
    spec = specs["smartphones_2029"]
    write_corpus(world, {None: generate_pages(spec, build_world(spec, 12345))})  # other rows: other leads
    leads = [" ".join(plain(x).split()) for x in read_corpus(world, dressed=False)[0]["lead"]]
    after = search("smartphones_2029", "Samsung smartphone", 5, Warehouse(tmp_path))
    assert all(any(h.snippet.rstrip("…") in lead for lead in leads) for h in after)  # the new corpus's hits
    assert not all(any(h.snippet.rstrip("…") in lead for lead in leads) for h in kept)  # not the kept ones


def test_index_is_rebuilt_when_the_corpus_changes(phones, specs, tmp_path):
    path, wh = phones
    world = tmp_path / path.name
    world.write_bytes(path.read_bytes())
    search("smartphones_2029", "Samsung", 1, Warehouse(tmp_path))
    marker = index_dir(world) / "corpus.sha256"
    before = marker.read_text()
    spec = specs["smartphones_2029"]
    write_corpus(world, {None: generate_pages(spec, build_world(spec, 12345))})  # other rows: other leads
    search("smartphones_2029", "Samsung", 1, Warehouse(tmp_path))
    assert marker.read_text() != before
    assert build_index(world) == index_dir(world)


@pytest.mark.parametrize("name", BUNDLED)
def test_pages_never_show_a_column_identifier(specs, tmp_path, name):
    """Columns are named by their labels: no page of the world or its scenarios writes ``launch_price_usd``,
    ``shipments k`` or ``market share pct``, nor a template phrase such as "reaches its"."""
    from worldforge.corpus.vocab import table_info

    path = built_world(specs[name], tmp_path)
    spec = specs[name]
    texts = []
    for scen in [None, *[s.name for s in spec.scenarios]]:
        pages, _ = read_corpus(path, scen)
        texts += [f"{t}\n{b}".lower() for t, b in zip(pages["title"], pages["body_md"])]
    assert texts
    text = "\n".join(re.sub(r"\([^)]*\)", " ", t) for t in texts)  # URLs inside links may hold slugs
    forbidden = set()
    frames = read_world(path).tables
    for t, table in spec.tables.items():
        info = table_info(spec, t, frames[t])
        for c in table.columns:
            if "_" not in c:
                continue
            spaced = c.replace("_", " ")
            forbidden.add(c)
            event = (info.columns[c].event or "").removeprefix("was ")
            natural = spaced in info.columns[c].label.lower() or spaced in info.noun or (event and spaced == f"{event} on")  # "was listed on <date>"
            if not natural:
                forbidden.add(spaced)
    found = sorted(f for f in forbidden if re.search(rf"(?<![\w-]){re.escape(f)}(?![\w-])", text))
    assert found == []
    assert " reaches its " not in text and " value musd" not in text


def test_scenario_corpora_state_base_year_values_as_archives(phones):
    path, _ = phones
    pages, facts = read_corpus(path, "market_2031")
    world = facts.filter(pl.col("scope") == "world")
    assert world.height > 0
    archived = pages.filter(pl.col("url").is_in(world["url"].unique().implode()))
    assert set(archived["page_type"]) == {"news", "dataset"}
    assert all("2029" in t for t in archived["title"])  # clearly dated in the past
    launch = world.filter((pl.col("table_name") == "models") & (pl.col("column_name") == "launch_date"))["value_text"]
    assert launch.len() and {parse_date(x).year for x in launch} == {2029}


def test_plain_text_drops_emphasis_marks_without_leaving_a_gap():
    assert plain("listed in *Global smartphone market, 2029*.") == "listed in Global smartphone market, 2029."
    assert " ".join(plain("**Nova X** | 2029 | # Specs > quote").split()) == "Nova X 2029 Specs quote"
    assert plain("the launch_price_usd column") == "the launch_price_usd column"  # an underscore inside a word stays
    assert plain("[the article](https://x.org/a) says") == "the article says"


def test_served_pages_are_the_dressed_pages_rendered_on_access(phones):
    """A server's corpus (:func:`served_corpus`) renders each page when first opened; every page is the one
    ``read_corpus`` dresses for the whole corpus at once, whichever page is opened first, for the world and
    each scenario, and nothing is rendered before a page is asked for."""
    import duckdb

    from worldforge.corpus.store import read_corpus, served_corpus

    path, _ = phones
    con = duckdb.connect(str(path), read_only=True)
    try:
        scenarios = [r[0] for r in con.execute("SELECT name FROM _scenarios ORDER BY name").fetchall()]
    finally:
        con.close()
    assert scenarios
    for scenario in [None, *scenarios]:
        pages, facts = read_corpus(path, scenario)
        served, served_facts = served_corpus(path, scenario)
        assert served_facts.equals(facts) and list(served) == pages["url"].to_list() and len(served) == pages.height
        assert not served._served  # nothing dressed yet
        dressed = {r["url"]: r for r in pages.iter_rows(named=True)}
        urls = list(dressed)
        for url in reversed(urls):  # the other order than read_corpus renders them in
            assert served[url] == dressed[url], url
        assert any(served[u]["article_start"] > 0 for u in urls)  # the chrome was rendered, not the stored article
    with pytest.raises(KeyError):
        served["https://nowhere.example/none"]


def test_the_index_reads_the_same_tokens_from_the_body_as_from_its_plain_text(phones):
    """The unstored body is indexed after the link pass only (:func:`index_text`): the marks :func:`plain` also
    removes are separators to tantivy's default tokenizer, so every page gives the same tokens in the same
    order either way (tokens as that tokenizer cuts them: runs of letters and digits, lower-cased)."""
    import re

    from worldforge.corpus.index import index_text, plain
    from worldforge.corpus.store import article_text, read_corpus

    path, _ = phones
    pages, _ = read_corpus(path, None, dressed=False)
    bodies = [article_text(r) for r in pages.iter_rows(named=True)]
    assert any("](" in b for b in bodies) and any("*" in b or "|" in b for b in bodies)  # links and marks to cut

    def tokens(text):
        return re.findall(r"[^\W_]+", text.lower())

    for body in bodies:
        assert tokens(index_text(body)) == tokens(plain(body))
        assert "](" not in index_text(body)  # link targets are not indexed
