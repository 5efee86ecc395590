import re

import pytest

from worldforge.corpus.store import read_corpus
from worldforge.warehouse import Warehouse
from worldforge.worldmodel.verify import _DATE, FactVerifier


@pytest.fixture(scope="module")
def verifier(search_wh):
    return FactVerifier(Warehouse.of(search_wh).world("smartphones_2029"))


@pytest.fixture(scope="module")
def pages(search_wh):
    return read_corpus(Warehouse.of(search_wh).world("smartphones_2029"))[0].to_dicts()


def page_text(p):
    return f"# {p['title']}\n\n{p['body_md']}"


def test_the_grounded_corpus_has_no_contradiction(verifier, pages):
    verdicts = [verifier.verify(page_text(p)) for p in pages]
    assert [v.summary() for v in verdicts if not v.ok] == []
    assert sum(v.checked for v in verdicts) > 3 * len(pages)  # it checks claims, not nothing
    by_type = {}
    for p, v in zip(pages, verdicts):
        by_type[p["page_type"]] = by_type.get(p["page_type"], 0) + v.checked
    assert all(by_type[t] > 0 for t in ("encyclopedia", "ranking", "news", "comparison", "dataset", "profile"))


def _entity_page(pages, verifier):
    for p in pages:
        if p["page_type"] == "encyclopedia" and "| Launch price |" in p["body_md"]:
            return p
    raise AssertionError("no model page")


def test_a_planted_number_in_an_infobox_is_caught(verifier, pages):
    p = _entity_page(pages, verifier)
    m = re.search(r"\| Launch price \| \$([\d,]+)", p["body_md"])
    price = int(m.group(1).replace(",", ""))
    wrong = p["body_md"].replace(m.group(0), f"| Launch price | ${price * 2 + 7:,}")
    v = verifier.verify(page_text(p | {"body_md": wrong}))
    assert not v.ok and [c.column for c in v.contradictions] == ["launch_price_usd"]
    assert v.contradictions[0].expected == str(price)


def test_planted_prose_date_category_and_entity_are_caught(verifier, pages):
    # a lead that opens with the model's name (not "Records show that ...")
    news = next(p for p in pages if p["page_type"] == "news" and re.match(r"[A-Z][\w ]+ was announced on ", p["lead"])
                and " that " not in p["lead"].split(" was announced on ")[0])
    entity = news["lead"].split(" was announced on ")[0]
    assert verifier.verify(news["lead"]).ok
    bad_date = _DATE.sub("Dec 31, 1999", news["lead"], count=1)
    v = verifier.verify(bad_date)
    assert not v.ok and v.contradictions[0].column == "announced" and v.contradictions[0].entity == entity.lower()
    brand = next(p for p in pages if p["page_type"] == "encyclopedia" and "| Strategy |" in p["body_md"])
    real = re.search(r"\| Strategy \| ([\w-]+)", brand["body_md"]).group(1)
    other = next(c for c in sorted(verifier.columns["brands"]["strategy"].categories) if c != real)
    v = verifier.verify(page_text(brand | {"body_md": brand["body_md"].replace(f"| Strategy | {real}", f"| Strategy | {other}")}))
    assert [c.column for c in v.contradictions] == ["strategy"]
    ranking = next(p for p in pages if p["page_type"] == "ranking" and "| Model |" in p["body_md"])
    first = re.search(r"\| 1 \| ([^|]+) \|", ranking["body_md"]).group(1).strip()
    v = verifier.verify(page_text(ranking | {"body_md": ranking["body_md"].replace(first, "Acme Phantom 99")}))
    assert any(c.expected == "(no such entity)" and "Acme Phantom 99" in c.stated for c in v.contradictions)


def test_text_without_world_claims_checks_nothing(verifier):
    v = verifier.verify("Hello there. The weather is 21 degrees and sunny on Jun 18, 2024.")
    assert v.ok and v.checked == 0
