"""Benchmark: how the generated corpus reads — sentence-skeleton variety, page length, answer share, template constructions.

For every bundled world, one world of each catalog archetype (``draw_spec`` with seed 0) and the
hand-written specs in ``bench/specs/``, builds the world's tables and pages and prints, per
world: prose sentences that state a fact and their skeleton variety (distinct skeletons /
sentences; :mod:`worldforge.corpus.measures`), the same over all prose sentences (chrome,
comments and background included), median / p10 / p90 page words as ``web_extractor`` returns
pages, the median and maximum share of a page's words that are its stated values, and the
template constructions found (:data:`~worldforge.corpus.measures.BAD_CONSTRUCTIONS`). Over all worlds
it prints the background sentences shared between worlds of different topics (a world's topic: its
archetype, else its background pool's name, the world without its year): the background sentences
each world's pages serve, counted when worlds of two or more topics serve one.

It also prints the median *article* words of encyclopedia pages (the article alone, between
``article_start`` and ``article_end`` of the served page: chrome not counted; link text counts, URLs
do not) and the derived claims per encyclopedia article (:mod:`worldforge.corpus.claims`: ranks,
comparisons, averages, shares, counts, totals, changes, date gaps), with the share of encyclopedia
articles that make none.

Targets (issue "prose people would write"): fact-sentence variety >= 0.70 per world, median
page >= 400 words; (issue "pages that say what the world knows") median encyclopedia article >= 250
words, answer share a minority (< 0.5) of every page, 0 template constructions; and
(issue "background about the topic, on any spec") 0 background sentences shared between topics.
There is no public corpus of real pages shipped by a package here, so the real-page figure
(about 0.8) is the one quoted in the issue, not measured in this run.

Usage: python bench/prose.py [--archetypes N] [--small] [--no-fail]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from worldforge.catalog.archetype import load_archetypes  # noqa: E402
from worldforge.catalog.generate import draw_spec  # noqa: E402
from worldforge.corpus import generate_pages  # noqa: E402
from worldforge.corpus.chrome import Dresser  # noqa: E402
from worldforge.corpus.generate import page_markdown, served  # noqa: E402
from worldforge.corpus.measures import bad_constructions, fact_sentences, page_words, prose_sentences, variety  # noqa: E402
from worldforge.corpus.vocab import table_info  # noqa: E402
from worldforge.spec import load_spec  # noqa: E402
from worldforge.spec.load import spec_from_dict  # noqa: E402
from worldforge.synth import build_world  # noqa: E402


def measure(spec) -> dict:
    """The figures of one world's corpus (see the module docstring)."""
    tables = build_world(spec)
    t0 = time.perf_counter()
    pages = generate_pages(spec, tables)
    secs = time.perf_counter() - t0
    bodies = served(pages)  # as web_extractor returns them: each article in its site's chrome
    labels = {t: table_info(spec, t, tables[t]).label_column for t in spec.tables}
    facts_s, prose, words, shares, bad = [], [], [], [], Counter()
    articles = [page_words(p.body_md) for p in pages if p.page_type == "encyclopedia"]  # the stored body is the article
    claims = [len(p.claims) for p in pages if p.page_type == "encyclopedia"]
    for p in pages:
        md = page_markdown({"title": p.title, "published": p.published, "body_md": bodies[p.url]})
        facts_s += fact_sentences(md, [f.value_text for f in p.facts if f.column_name != labels[f.table_name]])
        prose += prose_sentences(md)
        w = page_words(md)
        words.append(w)
        shares.append(sum(page_words(v) for v in {f.value_text for f in p.facts}) / max(1, w))
        bad.update(bad_constructions(md))
    q = statistics.quantiles(words, n=10) if len(words) > 1 else [words[0]] * 9
    context = next((p.context for p in pages if p.context is not None), {})
    text = "\n".join(bodies.values())
    served_bg = {s for s in Dresser(context).pool if s in text}  # the background sentences its pages serve
    return {"world": spec.world, "topic": spec.archetype or context.get("pool") or spec.world, "background": served_bg,
            "pages": len(pages), "secs": secs, "fact_sentences": len(facts_s), "variety": variety(facts_s),
            "prose": len(prose), "prose_variety": variety(prose), "median_words": statistics.median(words), "p10": q[0], "p90": q[-1],
            "share_median": statistics.median(shares), "share_max": max(shares), "bad": dict(bad),
            "article_words": statistics.median(articles) if articles else 0, "claims": statistics.mean(claims) if claims else 0.0,
            "no_claim": sum(1 for c in claims if c == 0) / max(1, len(claims))}


def shared_background(rows: list[dict]) -> dict[str, set[str]]:
    """Background sentences served by worlds of two or more topics: ``{sentence: {topic, ...}}``."""
    topics: dict[str, set[str]] = {}
    for r in rows:
        for sentence in r["background"]:
            topics.setdefault(sentence, set()).add(r["topic"])
    return {s: t for s, t in topics.items() if len(t) > 1}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--archetypes", type=int, default=0, help="archetypes to measure (0: all)")
    ap.add_argument("--small", action="store_true", help="bundled worlds, the hand-written specs and 3 archetypes")
    ap.add_argument("--no-fail", action="store_true", help="exit 0 even when a target is missed (make bench)")
    args = ap.parse_args()
    specs = [load_spec(p) for p in sorted((ROOT / "world_specs").glob("*.yaml"))]
    specs += [load_spec(p) for p in sorted((ROOT / "bench" / "specs").glob("*.yaml"))]
    library = load_archetypes()
    names = sorted(library)[: 3 if args.small else (args.archetypes or None)]
    for name in names:
        specs.append(spec_from_dict(draw_spec(library[name], random.Random(0), f"{name}_w0"), f"<archetype {name}>"))
    rows = [measure(s) for s in specs]
    print(f"{'world':34} {'pages':>6} {'fact sent':>9} {'variety':>7} {'all prose':>9} {'variety':>7} {'words p10/med/p90':>18} "
          f"{'answer med/max':>14} {'article':>7} {'claims':>6} {'none':>5}  template constructions")
    for r in rows:
        print(f"{r['world'][:34]:34} {r['pages']:6} {r['fact_sentences']:9} {r['variety']:7.2f} {r['prose']:9} {r['prose_variety']:7.2f} "
              f"{r['p10']:5.0f}/{r['median_words']:5.0f}/{r['p90']:5.0f} {r['share_median']:6.2f}/{r['share_max']:.2f} "
              f"{r['article_words']:7.0f} {r['claims']:6.1f} {r['no_claim']:5.0%}  {r['bad'] or 0}")
    low = [r["world"] for r in rows if r["variety"] < 0.70]
    short = [r["world"] for r in rows if r["median_words"] < 400]
    heavy = [r["world"] for r in rows if r["share_max"] >= 0.5]
    bad = [r["world"] for r in rows if r["bad"]]
    thin = [r["world"] for r in rows if r["article_words"] < 250]
    print(f"encyclopedia articles: median words min {min(r['article_words'] for r in rows):.0f} (target >= 250, chrome not counted); "
          f"derived claims per article {min(r['claims'] for r in rows):.1f}-{max(r['claims'] for r in rows):.1f}")
    print(f"\nworlds: {len(rows)}; fact-sentence variety min {min(r['variety'] for r in rows):.2f} (target >= 0.70; real pages about 0.8, "
          f"quoted); median words min {min(r['median_words'] for r in rows):.0f} (target >= 400); answer share max "
          f"{max(r['share_max'] for r in rows):.2f} (target < 0.5); worlds with template constructions: {len(bad)}")
    shared = shared_background(rows)
    print(f"background sentences shared between worlds of different topics: {len(shared)} (target 0; "
          f"{len({r['topic'] for r in rows})} topics, {sum(len(r['background']) for r in rows)} served background sentences)")
    for sentence, topics in sorted(shared.items())[:5]:
        print(f"  {', '.join(sorted(topics))}: {sentence}")
    print(f"pages per second (generation only): {sum(r['pages'] for r in rows) / sum(r['secs'] for r in rows):,.0f}")
    mixed = sorted({t for topics in shared.values() for t in topics})
    failed = [("variety", low), ("length", short), ("article length", thin), ("answer share", heavy), ("template constructions", bad), ("shared background", mixed)]
    missed = any(x for _, x in failed)
    print("PASS" if not missed else "FAIL " + "; ".join(f"{k}: {', '.join(v)}" for k, v in failed if v))
    if missed and not args.no_fail:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
