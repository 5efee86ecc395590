"""The LLM writer of corpus pages against scripted OpenAI-compatible servers (started for real on 127.0.0.1) and a real
``vllm serve`` of the tiny model: rejection sampling keeps the corpus free of contradictions, whatever the model writes."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import httpx
import polars as pl
import pytest
from typer.testing import CliRunner

from tests.conftest_worlds import built_world
from tests.servers import ProcessServer
from worldforge.cli import app
from worldforge.corpus import RewriterConfig, build_corpus, check_corpus, read_corpus
from worldforge.corpus.generate import Fact, Page
from worldforge.corpus.rewriter import PROSE_GENRES, check_reply, clean_reply, first_paragraph, mentions
from worldforge.corpus.store import generate_corpus
from worldforge.llm.base import BackendError
from worldforge.net import free_port
from worldforge.warehouse import Warehouse

WORLD = "mars_colony_2030"
FAKE = Path(__file__).with_name("fake_openai.py")
LIMIT = 8


class FakeServer(ProcessServer):
    """``fake_openai.py MODE`` as a :class:`~tests.servers.ProcessServer` (own session, free port, stopped by PID)."""

    def __init__(self, mode: str):
        super().__init__(lambda port: [sys.executable, str(FAKE), mode, str(port)], startup_s=20)

    @property
    def chats(self) -> int:
        """Chat requests answered so far."""
        return httpx.get(self.url + "/count", timeout=5).json()["chat"]

    def config(self, **kw) -> RewriterConfig:
        return RewriterConfig(**({"base_url": self.url + "/v1", "model": "fake-writer", "limit": LIMIT} | kw))


@pytest.fixture
def server(request):
    s = FakeServer(request.param)
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture(scope="module")
def template_world(specs, tmp_path_factory) -> Path:
    """A world with its template corpus, built once; each test works on a copy in its own warehouse."""
    return built_world(specs[WORLD], tmp_path_factory.mktemp("writer-wh"))


@pytest.fixture
def world(template_world, tmp_path) -> Path:
    path = tmp_path / template_world.name
    shutil.copyfile(template_world, path)
    return path


def _bodies(path: Path) -> dict[str, tuple[str, str]]:
    """``{url: (lead, body)}`` over every stored corpus."""
    import duckdb

    con = duckdb.connect(str(path), read_only=True)
    try:
        return {u: (lead, body) for u, lead, body in con.execute("SELECT url, lead, body_md FROM corpus_pages").fetchall()}
    finally:
        con.close()


def _generated(path: Path) -> dict[str, Page]:
    return {p.url: p for ps in generate_corpus(path).values() for p in ps}


# -- the check itself -----------------------------------------------------------------------------


def _page(body: str) -> Page:
    facts = [Fact("t", "1", "arrival", "March 7, 2028", "lead"), Fact("t", "1", "sols", "822 sols", "body")]
    return Page("https://x.example/a", "w", None, "news", "T", None, first_paragraph(body), body, facts)


DRAFT = "Barry Ingram arrived on March 7, 2028.\n\nHe has spent 822 sols on Mars, and [more](https://mars-2030pedia.org/1)."


def test_the_check_reads_values_back():
    page = _page(DRAFT)
    assert check_reply(DRAFT, page) == []
    assert check_reply("On 7 March 2028 Barry Ingram arrived: March 7, 2028.\n\n822 sols in all.", page) == []  # a restated date
    kinds = [(p.kind, p.detail) for p in check_reply("Barry Ingram arrived on March 7, 2028.\n\n823 sols, $98,765 and 12%.", page)]
    assert kinds == [("dropped fact", "822 sols"), ("unregistered value", "823"), ("unregistered value", "$98,765"), ("unregistered value", "12%")]
    assert [p.kind for p in check_reply("Barry Ingram arrived.\n\nMarch 7, 2028 and 822 sols.", page)] == ["lead fact moved"]
    assert [p.kind for p in check_reply("", page)] == ["empty reply"]
    assert [t for t, _ in mentions("S30 and mars-2030pedia, 1. item\n1. the 3rd of $2.65 million, 52.5%")] == ["1", "3rd", "$2.65 million", "52.5%"]
    assert clean_reply("<think>42</think>\n```markdown\n# Title\nHello\n\nWorld\n```") == "Hello\n\nWorld"


# -- scripted servers ----------------------------------------------------------------------------


@pytest.mark.parametrize("server", ["alter"], indirect=True)
def test_a_model_that_alters_every_number_is_rejected(world, server):
    generated = _generated(world)
    built = build_corpus(world, rewriter=server.config())
    w = built.rewriter
    assert w.balanced and w.tally.balanced and w.inputs == sum(built.report.pages.values())
    assert w.written == 0 and w.repaired == 0
    rejected = {r: n for r, n in w.kept.items() if r.startswith("rejected after 2 rounds")}
    assert sum(rejected.values()) == LIMIT, w.kept
    assert w.requests == server.chats == 2 * LIMIT and w.cached == 0
    assert w.kept["structured genre"] == sum(p.page_type not in PROSE_GENRES for p in generated.values())
    assert built.contradictions.height == 0 and check_corpus(world).height == 0
    assert all(body == generated[u].body_md and lead == generated[u].lead for u, (lead, body) in _bodies(world).items())


@pytest.mark.parametrize("server", ["echo"], indirect=True)
def test_a_model_that_keeps_every_value_is_accepted_and_cached(world, server):
    generated = _generated(world)
    ticks = []
    built = build_corpus(world, rewriter=server.config(), on_page=lambda done, total: ticks.append((done, total)))
    w = built.rewriter
    assert w.balanced and w.written == LIMIT and w.repaired == 0 and w.requests == server.chats == LIMIT, w.summary()
    assert ticks[-1] == (w.inputs, w.inputs) and [d for d, _ in ticks] == sorted(d for d, _ in ticks) and len(ticks) >= LIMIT
    assert "written by the model 8 + repaired 0" in w.summary()
    assert built.contradictions.height == 0
    stored = _bodies(world)
    rewritten = [u for u, (_, body) in stored.items() if body != generated[u].body_md]
    assert len(rewritten) == LIMIT and {generated[u].page_type for u in rewritten} == {p.page_type for p in generated.values()} & set(PROSE_GENRES)
    for u in rewritten:
        lead, body = stored[u]
        # the stored article is replaced; the page keeps its chrome recipe (navigation, related lists, footer)
        assert "Further coverage of this story is on the way." in body and "<think>" not in body and "```" not in body
        assert lead in body and lead != generated[u].lead or lead == generated[u].lead
        assert all(f.value_text in lead for f in generated[u].facts if f.section == "lead")
    served, facts = read_corpus(world)
    assert facts.height == sum(len(p.facts) for p in generated.values() if p.scenario is None)
    for row in served.filter(pl.col("url").is_in(rewritten)).iter_rows(named=True):  # served whole: the new article in the old chrome
        assert row["body_md"][row["article_start"]:row["article_end"]] == stored[row["url"]][1]
        assert json.loads(row["chrome"]) == generated[row["url"]].chrome and len(row["body_md"]) > len(stored[row["url"]][1]) + 500

    # a second build is answered from the cache under the warehouse: no request at all
    again = build_corpus(world, rewriter=server.config())
    assert again.rewriter.requests == 0 and again.rewriter.cached == LIMIT and server.chats == LIMIT
    assert again.rewriter.written == LIMIT and _bodies(world) == stored
    assert (world.parent / "cache" / "corpus-writer.sqlite").is_file()


def test_the_check_reads_direction_words_back():
    draft = "Nova X was announced 45 days after Nova Y.\n\nIt has the highest price of the 12 models of Xiaomi, at $1,099."
    page = _page(draft)
    page.facts = [Fact("m", "1", "price", "$1,099", "body")]
    from worldforge.corpus.claims import Claim

    page.claims = [Claim("rank", "m", "1", "price", "the highest price of the 12 models of Xiaomi", {})]
    assert check_reply(draft, page) == []
    assert check_reply("Priced at $1,099, it has the highest price of the 12 models of Xiaomi. Nova X came 45 days after Nova Y.", page) == []
    swapped = draft.replace("after", "before").replace("highest", "lowest")
    assert [(p.kind, p.detail) for p in check_reply(swapped, page)] == [
        ("dropped claim", "the highest price of the 12 models of Xiaomi"), ("changed claim", "before"), ("changed claim", "lowest")]
    # a direction word about nothing in the world may stay; one the draft never used may not
    more = _page(draft + "\n\nMore to follow.")
    more.facts, more.claims = page.facts, page.claims
    assert check_reply(more.body_md, more) == []
    assert [p.kind for p in check_reply(draft + "\n\nFewer to follow.", page)] == ["changed claim"]


@pytest.mark.parametrize("server", ["swap"], indirect=True)
def test_a_model_that_reverses_every_comparison_is_rejected(world, server):
    """A server that turns "after" into "before", "more" into "fewer", "largest" into "smallest" ... and keeps every number:
    no such reply is stored, and the corpus keeps 0 contradictions (every prose page of a scenario corpus is sent)."""
    generated = _generated(world)
    swappable = [p for p in generated.values() if p.page_type in PROSE_GENRES and _swap_changes(p.body_md)]
    built = build_corpus(world, rewriter=server.config(limit=None))
    w = built.rewriter
    assert w.balanced and w.inputs == sum(built.report.pages.values())
    assert swappable and sum(p.claims != [] for p in swappable) > 0  # news stories make derived claims
    stored = _bodies(world)
    assert all(stored[p.url][1] == p.body_md for p in swappable)  # every reversed reply rejected: the draft kept
    assert w.written + w.repaired == sum(p.page_type in PROSE_GENRES for p in generated.values()) - len(swappable)
    assert built.contradictions.height == 0 and check_corpus(world).height == 0


def _swap_changes(text: str) -> bool:
    import importlib.util

    spec = importlib.util.spec_from_file_location("fake_openai", FAKE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.swap(text) != text


@pytest.mark.parametrize("server", ["repair"], indirect=True)
def test_a_reply_sent_back_with_its_problems_is_repaired(world, server):
    built = build_corpus(world, rewriter=server.config())
    w = built.rewriter
    assert w.balanced and w.written == 0 and w.repaired == LIMIT and w.requests == server.chats == 2 * LIMIT, w.summary()
    assert built.contradictions.height == 0


@pytest.mark.parametrize("server", ["echo"], indirect=True)
def test_a_model_the_server_does_not_serve_is_one_error_and_nothing_written(world, server):
    before = _bodies(world)
    with pytest.raises(BackendError, match="does not serve 'nope'"):
        build_corpus(world, rewriter=RewriterConfig(base_url=server.url + "/v1", model="nope", limit=2))
    assert _bodies(world) == before and server.chats == 0


# -- the command line ----------------------------------------------------------------------------


def _stamp(path: Path) -> list:
    import duckdb

    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute("SELECT scenario, corpus_hash, built_at FROM _corpus ORDER BY scenario NULLS FIRST").fetchall()
    finally:
        con.close()


def test_cli_unreachable_server_is_one_line_and_the_corpus_is_untouched(world):
    before = _stamp(world)
    dead = f"http://127.0.0.1:{free_port()}/v1"
    r = CliRunner().invoke(app, ["corpus", "build", WORLD, "-w", str(world.parent), "--writer", "openai", "--base-url", dead, "--model", "m"])
    assert r.exit_code == 2, r.output
    lines = [x for x in r.output.strip().splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and "cannot reach" in lines[0] and "Traceback" not in r.output
    assert _stamp(world) == before
    r = CliRunner().invoke(app, ["corpus", "build", WORLD, "-w", str(world.parent), "--writer", "gpt"])
    assert r.exit_code == 2 and "unknown writer 'gpt'" in r.output


@pytest.mark.parametrize("server", ["echo"], indirect=True)
def test_cli_writer_openai_prints_the_writer_tally(world, server):
    r = CliRunner().invoke(app, ["corpus", "build", WORLD, "-w", str(world.parent), "--writer", "openai", "--base-url", server.url + "/v1",
                                 "--model", "fake-writer", "--limit", "4", "--concurrency", "2"])
    assert r.exit_code == 0, r.output
    assert "writer: pages in" in r.output and "written by the model 4 + repaired 0" in r.output and "balanced" in r.output
    assert server.chats == 4


# -- a real vllm serve of the tiny model ---------------------------------------------------------


@pytest.mark.vllm
def test_the_tiny_model_through_vllm_serve(world, vllm_server):
    config = RewriterConfig(base_url=vllm_server.base_url, limit=4, max_tokens=48, timeout_s=120)
    built = build_corpus(world, rewriter=config)
    w = built.rewriter
    assert w.balanced and w.tally.balanced and w.written + w.repaired + sum(n for r, n in w.kept.items() if r.startswith(("rejected", "request"))) == 4
    assert built.contradictions.height == 0 and check_corpus(world).height == 0


# -- the Dagster asset ---------------------------------------------------------------------------


@pytest.mark.dagster
@pytest.mark.parametrize("server", ["echo"], indirect=True)
def test_the_search_corpus_asset_takes_the_writer_from_its_run_config(world, server):
    from dagster import DagsterInstance, materialize

    from assets.resources import WarehouseResource
    from assets.worlds import WORLD_ASSETS

    search_corpus = WORLD_ASSETS["search_corpus"]

    config = {"writer": "openai", "base_url": server.url + "/v1", "model": "fake-writer", "limit": 3}
    result = materialize([search_corpus], partition_key=WORLD, resources={"warehouse": WarehouseResource(root=str(world.parent))},
                         run_config={"ops": {"search_corpus": {"config": config}}}, instance=DagsterInstance.ephemeral())
    assert result.success
    meta = result.asset_materializations_for_node("search_corpus")[0].metadata
    assert meta["writer"].value["written"] == 3 and meta["writer"].value["balanced"] and "written by the model 3" in meta["writer_balance"].value
    assert {e.check_name: e.passed for e in result.get_asset_check_evaluations()} == {"no_contradicted_fact": True}

    config["model"] = "nope"
    result = materialize([search_corpus], partition_key=WORLD, resources={"warehouse": WarehouseResource(root=str(world.parent))},
                         run_config={"ops": {"search_corpus": {"config": config}}}, instance=DagsterInstance.ephemeral(), raise_on_error=False)
    assert not result.success


# -- the catalog build ---------------------------------------------------------------------------


def test_catalog_build_checks_the_writer_server_once_before_building(tmp_path):
    from tests.conftest import SPECS_DIR

    specs = tmp_path / "specs"
    specs.mkdir()
    shutil.copy(SPECS_DIR / f"{WORLD}.yaml", specs)
    dead = f"http://127.0.0.1:{free_port()}/v1"
    r = CliRunner().invoke(app, ["catalog", "build", str(specs), "-w", str(tmp_path / "wh"), "--writer", "openai", "--base-url", dead, "--model", "m"])
    assert r.exit_code == 2, r.output
    lines = [x for x in r.output.strip().splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and "cannot reach" in lines[0]
    assert not (tmp_path / "wh" / f"{WORLD}.duckdb").exists() and not (tmp_path / "wh" / "catalog.duckdb").exists()


@pytest.mark.parametrize("server", ["echo"], indirect=True)
def test_a_catalog_world_built_with_the_writer(tmp_path, server):
    from tests.conftest import SPECS_DIR
    from worldforge.catalog.build import build_entry

    row, outcome = build_entry(SPECS_DIR / f"{WORLD}.yaml", Warehouse(tmp_path), rewriter=server.config(limit=4))
    assert outcome == "built" and row.contradictions == 0, row.error
    assert server.chats == 4
