"""Benchmark: an editor's read of the generated pages — a seeded sample of prose sentences to grade, and the tally of a
graded sheet.

Metrics measure what is easy to count; whether a sentence would be published is read by a person. This bench draws
the sentences and counts the grades; the grading is done by a reader who has not seen the code (a helper, an editor),
on worlds built from specs written after the change that is being judged.

``sample``: builds each spec's world and corpus in memory (``build_world``, ``generate_pages``: the base world, no
scenario), splits every page's article into prose sentences (:func:`worldforge.corpus.measures.prose_sentences`:
paragraph text, not tables, lists, headings or chrome) and draws ``--n`` of them, spread evenly over the worlds and,
within a world, over its page types (genres) in turn, from ``--seed``: the same specs and seed give the same sheet. The
sheet is a CSV: ``id, world, genre, url, sentence, grade, defect, note``, with ``grade``/``defect``/``note`` empty.

``tally``: reads a graded sheet. ``grade`` is one of ``OK`` (a writer would publish it as it is), ``AWKWARD`` (correct,
but no writer would put it so), ``WRONG`` (says something false or ungrammatical) or ``FURNITURE`` (page furniture, not
prose: a caption, a byline); ``defect`` names a class for the others (``attribution``, ``designation``, ``label glue``,
``value as word``, ``unrelated facts``, ``genre``, ``connective``, ``format``, ``other``). Prints the publishable share
(OK over the graded prose sentences, furniture left out) overall and per genre, the defect classes by count, and the
WRONG ones per class. Exit 1 when the share is under ``--target`` (0.90) or a genre of ``--genres`` is under
``--genre-target`` (0.85) — the measures of the issue on pages an editor would publish.

Usage:
    python bench/editor.py sample SPEC [SPEC ...] [--n 240] [--seed 7] [--out sheet.csv]
    python bench/editor.py tally sheet.csv [--target 0.9] [--genre-target 0.85]
    python bench/editor.py --small          (a check that the bench runs: a sheet of one bundled world, tallied ungraded)
"""

from __future__ import annotations

import argparse
import csv
import random
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

GRADES = ("OK", "AWKWARD", "WRONG", "FURNITURE")
FIELDS = ("id", "world", "genre", "url", "sentence", "grade", "defect", "note")
FACT_GENRES = ("encyclopedia", "news", "press_release", "profile", "comparison")
"""The genres that carry the facts, each with its own target."""


def sample(specs: list[Path], n: int, seed: int) -> list[dict]:
    """``n`` prose sentences drawn from the worlds of ``specs`` (see the module docstring), as sheet rows.

    Raises:
        SpecError: a spec does not load.
    """
    from worldforge.corpus import generate_pages
    from worldforge.corpus.measures import prose_sentences
    from worldforge.spec import load_spec
    from worldforge.synth import build_world

    rng = random.Random(seed)
    rows: list[dict] = []
    per_world = [n // len(specs) + (1 if i < n % len(specs) else 0) for i in range(len(specs))]
    for path, k in zip(specs, per_world):
        spec = load_spec(path)
        pages = generate_pages(spec, build_world(spec))
        by_genre: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for p in pages:
            for s in prose_sentences(p.body_md):
                if len(s.split()) >= 4:
                    by_genre[p.page_type].append((p.url, s))
        genres = sorted(g for g, xs in by_genre.items() if xs)
        pools = {g: rng.sample(by_genre[g], len(by_genre[g])) for g in genres}  # each genre's sentences in a seeded order
        taken = 0
        while taken < k and any(pools.values()):
            for g in genres:
                if taken >= k or not pools[g]:
                    continue
                url, s = pools[g].pop()
                rows.append({"id": len(rows) + 1, "world": spec.world, "genre": g, "url": url, "sentence": s,
                             "grade": "", "defect": "", "note": ""})
                taken += 1
    return rows


def write_sheet(rows: list[dict], out: Path) -> None:
    """The sheet as CSV (UTF-8, a header line)."""
    with out.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)


def tally(rows: list[dict]) -> dict:
    """Figures of a graded sheet: ``graded``, ``publishable`` (share), ``by_genre`` ``{genre: (ok, graded)}``, ``defects``
    (Counter of classes over AWKWARD and WRONG), ``wrong`` (Counter of classes over WRONG), ``ungraded``, ``unknown`` (rows
    whose grade is none of :data:`GRADES`)."""
    graded = ok = ungraded = 0
    by_genre: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    defects: Counter = Counter()
    wrong: Counter = Counter()
    unknown = []
    for r in rows:
        grade = (r.get("grade") or "").strip().upper()
        if not grade:
            ungraded += 1
            continue
        if grade not in GRADES:
            unknown.append(r.get("id"))
            continue
        if grade == "FURNITURE":
            continue
        graded += 1
        by_genre[r["genre"]][1] += 1
        if grade == "OK":
            ok += 1
            by_genre[r["genre"]][0] += 1
        else:
            cls = (r.get("defect") or "other").strip().lower() or "other"
            defects[cls] += 1
            if grade == "WRONG":
                wrong[cls] += 1
    return {"graded": graded, "publishable": ok / graded if graded else None, "by_genre": {g: tuple(v) for g, v in sorted(by_genre.items())},
            "defects": defects, "wrong": wrong, "ungraded": ungraded, "unknown": unknown}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("command", nargs="?", choices=("sample", "tally"))
    ap.add_argument("paths", nargs="*", type=Path, help="sample: world specs (YAML); tally: one graded sheet (CSV)")
    ap.add_argument("--n", type=int, default=240, help="sentences to draw")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", type=Path, default=Path("editor_sheet.csv"))
    ap.add_argument("--target", type=float, default=0.90, help="publishable share overall")
    ap.add_argument("--genre-target", type=float, default=0.85, help="publishable share in each fact-carrying genre")
    ap.add_argument("--small", action="store_true", help="a check that the bench runs (seconds, make test), not the figures")
    args = ap.parse_args()
    if args.small:
        out = Path(tempfile.mkdtemp(prefix="editor_")) / "sheet.csv"
        rows = sample([ROOT / "world_specs" / "mars_colony_2030.yaml"], 24, args.seed)
        write_sheet(rows, out)
        print(f"sheet: {len(rows)} sentences from 1 world, {len({r['genre'] for r in rows})} genres -> {out}")
        got = tally(rows)
        print(f"tally: {got['graded']} graded, {got['ungraded']} ungraded")
        return
    if args.command is None or not args.paths:
        ap.error("give a command (sample SPEC..., or tally SHEET)")
    if args.command == "sample":
        missing = [str(p) for p in args.paths if not p.is_file()]
        if missing:
            ap.error(f"no such spec: {', '.join(missing)}")
        rows = sample(args.paths, args.n, args.seed)
        write_sheet(rows, args.out)
        genres = Counter(r["genre"] for r in rows)
        print(f"sheet: {len(rows)} sentences from {len(args.paths)} world(s) -> {args.out}")
        print("by genre: " + ", ".join(f"{g} {k}" for g, k in sorted(genres.items())))
        return
    if len(args.paths) != 1 or not args.paths[0].is_file():
        ap.error("tally takes one graded sheet (CSV)")
    with args.paths[0].open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    got = tally(rows)
    if got["unknown"]:
        print(f"rows with a grade that is none of {', '.join(GRADES)}: {got['unknown'][:20]}")
    if not got["graded"]:
        print(f"no graded sentence ({got['ungraded']} ungraded)")
        sys.exit(1)
    share = got["publishable"]
    print(f"graded prose sentences: {got['graded']} (ungraded {got['ungraded']})")
    print(f"publishable: {share:.1%}  (target {args.target:.0%})")
    misses = [] if share >= args.target else ["overall"]
    for g, (ok, n) in got["by_genre"].items():
        mark = ""
        if g in FACT_GENRES and ok / n < args.genre_target:
            mark, misses = "  MISS", misses + [g]
        print(f"  {g:<14} {ok / n:6.1%}  ({ok} of {n}){mark}")
    if got["defects"]:
        print("defect classes (AWKWARD and WRONG): " + ", ".join(f"{c} {k}" for c, k in got["defects"].most_common()))
    print("WRONG by class: " + (", ".join(f"{c} {k}" for c, k in got["wrong"].most_common()) or "none"))
    if misses:
        print(f"MISS: {', '.join(misses)}")
        sys.exit(1)


if __name__ == "__main__":
    main()
