"""Measures of generated text: sentence-skeleton variety, page length, answer share, template constructions.

*Sentence-skeleton variety* is distinct skeletons / sentences, where a sentence's skeleton is its
text with every capitalised word masked as ``C``, every number (digits with their separators,
currency signs, ``%``) as ``0`` and every Markdown link as ``L``, lower-cased: ``Ares Dome has a
capacity of 79 people.`` and ``Gale Ring has a capacity of 24 people.`` share one skeleton. 1.0
means no two sentences are built alike; template text scores near 0. It is computed over *prose
sentences*: paragraph text, not tables, list items (bulleted or numbered), headings, links lists or chrome lines
without a full stop. :func:`fact_sentences` keeps those that state a registered fact of the page
(a ``corpus_facts`` value text occurs in them): the sentences the generator plans from the world,
as opposed to boilerplate.

*Page words* counts the words a reader sees in ``web_extractor``'s Markdown (link text, not URLs).
*Answer share* is the words of the page's distinct stated values over its words.

:data:`BAD_CONSTRUCTIONS` lists the constructions people would not write that template text
produced (label glue such as "is listed with 11 days for days" or "its closes are ...", passives of
intransitive verbs, people called "it", a present tense after "It was on <date> that", a designation
that restates its own date or carries a bare "(2)"); :func:`bad_constructions` finds them in a text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["ATTRIBUTION", "BAD_CONSTRUCTIONS", "CONNECTIVE", "bad_constructions", "fact_sentences", "page_words", "prose_sentences", "skeleton",
           "variety"]

_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_NUM = re.compile(r"[$€£¥₹₩]?\d[\d,.]*%?")
_CAP = re.compile(r"\b[A-Z][\w'’-]*")
_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z*\"“])")
_WORD = re.compile(r"\w+")

ATTRIBUTION = re.compile(
    r"\b(according to (?:official|the (?:register|latest|spec|filing|published))|as the (?:records|figures) (?:show|stand)|"
    r"(?:official |public )?records (?:show|indicate)|per the (?:published|official)|going by the (?:official|published|register)|"
    r"on the latest figures|at the last count|by the latest (?:tally|count)|as of the latest (?:update|records)|in the most recent data|"
    r"based on the (?:most recent|published)|the published tables show|on the register's numbers|in the current listings|"
    r"by the official count|sources agree|by most accounts|in the official records|is (?:listed|recorded|given) as|"
    r"was last reported as|at the time of writing|a filing shows|in the published tables)\b|^(?:As listed|On paper), ", re.I)
"""An attribution stuck on a plain fact: a source nobody can open ("according to the latest filings"), or a hedge on a
value ("is listed as", "was last reported as"). Only hearsay (a forum reply) and quotes may carry one."""

CONNECTIVE = re.compile(
    r"^(?:In addition|Beyond that|Separately|On top of that|Meanwhile|Also worth noting|For the record|By the latest count|"
    r"As for the numbers|Elsewhere in the record|Besides that|What is more|Further|Notably|Put another way|Relative to its peers|"
    r"For context|By this measure|In comparison|Overall|As it happens|By the same token|Looking at the group|Within its group|"
    r"In relative terms|Side by side|Judged by the numbers|Seen against the rest|All told|In all)[,:] ")
"""A connective opening a sentence with no relation to the one before it ("Put another way, ...", "In addition, ...")."""

BAD_CONSTRUCTIONS: dict[str, re.Pattern] = {
    "its <label> stands at": re.compile(r"\b[Ii]ts [a-z ]+ stands at\b"),
    "its number of": re.compile(r"\b[Ii]ts number of\b"),
    "has a number of <things> of": re.compile(r"\bhas a number of [a-z ]+ of\b"),
    "the <label> figure is": re.compile(r"\b[Tt]he [a-z ]+ figure is\b"),
    "figures put its": re.compile(r"\bFigures put its\b"),
    "<time> stands at <n> years": re.compile(r"\bstands at [\d,.]+ years\b"),
    "passive of an intransitive verb": re.compile(r"\b(was|were) (departed|arrived|started|ended|launched|opened|closed|retired|debuted|premiered|"
                                                  r"landed|docked|returned|began|finished|expired|died)\b"),
    "what the <label> of <entity> is?": re.compile(r"\bwhat the [a-z ]+ of .{1,80} is\?"),
    "it is part of [X].": re.compile(r"\bIt is part of \["),
    "it is listed with <label> <value>": re.compile(r"\bis listed with (?!a |an |the )[a-z]+ [a-z0-9]"),
    "its <days/years ...> figure": re.compile(r"\b(days|years|hours) after [a-z]+ figure\b"),
    "<person> itself": re.compile(r"\b[A-Z][a-z]+ [A-Z][a-z]+ itself\b"),
    "has <value> as its <label>": re.compile(r"\bhas [\w ,.-]+ as its [a-z ]+\b"),
    "doubled article": re.compile(r"\b(a|an|the) (a|an|the)\b"),
    "doubled word": re.compile(r"\b(?!(?:that|had|is|very|no)\b)([a-z]{3,}) \1\b"),  # "1,952 holds holds", "lift lift"
    "a year written 1,950": re.compile(r"\b(founded|established|formed|opened|built|launched|born|debuted|incorporated|inaugurated|since|"
                                       r"dates back to) (in )?[12],\d{3}\b(?![\d,]| (days|weeks|months|years|hours|minutes)\b)|^\| *(Year|Founded|Established|Built|Opened)\b[^|\n]*\| *[12],\d{3} *\|", re.M),
    "is listed with <value> for <label>": re.compile(r"\bis listed (?:with|under) (?!an? |the )[^.;,]{1,40}? for [a-z]"),
    "its <verb label> are": re.compile(r"\b[Ii]ts (?:closes|opens|ends|starts|begins|finishes|expires|lapses|renews|resumes) (?:are|were|is)\b"),
    "its <plural label> are <count>": re.compile(r"\b[Ii]ts [a-z]+s (?:are|were)(?: recorded as| given as| listed as| last reported as)? "
                                                  r"[\d,]+(?:\.\d+)?(?=[.;](?!\d)|,? and\b|,? while\b| according| at the| by the| on the| as| in the| per| going| based|$)", re.M),
    "its <plural> <adjective> is": re.compile(r"\b[Ii]ts [a-z]+s (?:open|available|remaining|active|closed|injured|free|left) (?:is|was)\b"),
    "It was on <date> that <row> <present tense>": re.compile(r"\bIt was on [^.]{3,40}? that [^.]{1,120}? (?:is|are|will|expires|matures|closes|opens|"
                                                             r"ends|starts|begins)\b"),
    "a designation that repeats its date": re.compile(r"\b(?:of|on) (\d{1,2} (?:January|February|March|April|May|June|July|August|September|October|"
                                                      r"November|December) \d{4})\b[^\n.]{0,160}?\b(?:on|dated) \1\b"),
    "a designation numbered (2)": re.compile(r"\b(?:of|on) \d{1,2} [A-Z][a-z]+ \d{4} \(\d+\)"),
    "the <designation> <verb>ed": re.compile(r"\b[Tt]he [A-Z][\w ]{0,40}? (launch|award|observation|listing|approval) (?:was )?\1e?d\b"),
    "citation after a closed clause": re.compile(r"(\bwhose [a-z ]+ (is|are) [^.;,*]+|\([^()]*: [^()]*\)) "
                                                 r"(documented |listed |covered by |catalogued |on file |on record )?(in )?\*"),
}
_ARTICLE = re.compile(r"(?<![\w'’-])(a|an) ([A-Za-z][a-z]+)\b")


def _article_mismatches(text: str) -> int:
    """"a hour", "an unit": indefinite articles that disagree with inflect's choice for the next word."""
    from worldforge.corpus.lexicon import a_or_an

    return sum(1 for m in _ARTICLE.finditer(text) if a_or_an(m.group(2)).split(" ", 1)[0] != m.group(1))


_ONE = re.compile(r"(?<![\w.,])1 ([a-z]+s|people|children|men|women|mice|geese|feet|teeth)\b")


def _one_plurals(text: str) -> int:
    """"1 films", "1 times": a count of exactly one before a plural noun (:func:`~worldforge.corpus.lexicon.singular_of_plural`)."""
    from worldforge.corpus.lexicon import singular_of_plural

    return sum(1 for m in _ONE.finditer(text) if singular_of_plural(m.group(1)) is not None)


def bad_constructions(text: str) -> dict[str, int]:
    """``{name: count}`` of :data:`BAD_CONSTRUCTIONS` found in ``text`` (only those found), with "a/an mismatch" and
    "1 <plural noun>"."""
    out = {}
    for name, pat in BAD_CONSTRUCTIONS.items():
        n = len(pat.findall(text))
        if n:
            out[name] = n
    n = _article_mismatches(text)
    if n:
        out["a/an mismatch"] = n
    n = _one_plurals(text)
    if n:
        out["1 <plural noun>"] = n
    return out


def prose_sentences(markdown: str) -> list[str]:
    """The prose sentences of a Markdown page: paragraph lines (and quoted replies) that end like sentences,
    split at sentence ends; tables, headings, list items and link-only lines are left out."""
    out = []
    for line in markdown.splitlines():
        line = line.strip()
        if line.startswith(">"):
            line = re.sub(r"^>\s*(\*\*[^*]+\*\*[^:]*:\s*)?", "", line)
        if not line or line[0] in "|#-*!" and not line.startswith("**") or line.startswith("---") or re.match(r"\d+\.\s", line):
            continue  # tables, headings, list items (bulleted or numbered), rules
        line = re.sub(r"^\*\*[^*]+\*\* (asks|wrote|posted|replied):\s*", "", line)
        text = _LINK.sub(r"\1", line).strip()
        if not text or text[-1] not in ".?!\u201d\"" or len(_WORD.findall(text)) < 4:
            continue
        out += [s.strip() for s in _SPLIT.split(text) if len(_WORD.findall(s)) >= 3]
    return out


def fact_sentences(markdown: str, value_texts: Iterable[str]) -> list[str]:
    """The prose sentences of a page that state one of its facts: a value text with a digit or a capital letter (a
    number, a date, a name) occurs in them as a whole word; a lower-case word ("planned", "budget") is too common to
    tell a statement from a coincidence."""
    vals = [v for v in set(value_texts) if len(v) >= 2 and any(ch.isdigit() or ch.isupper() for ch in v)]
    if not vals:
        return []
    pat = re.compile(r"(?<![\w.,])(?:" + "|".join(re.escape(v) for v in sorted(vals, key=len, reverse=True)) + r")(?![\w])")
    return [s for s in prose_sentences(markdown) if pat.search(s)]


def skeleton(sentence: str) -> str:
    """A sentence with links, numbers and capitalised words masked, lower-cased (see the module docstring)."""
    s = _LINK.sub("L", sentence)
    s = _NUM.sub("0", s)
    s = _CAP.sub("C", s)
    return re.sub(r"\s+", " ", s).strip()


def variety(sentences: list[str]) -> float:
    """Distinct skeletons / sentences (1.0 for no sentence; see the module docstring)."""
    return len({skeleton(s) for s in sentences}) / len(sentences) if sentences else 1.0


def page_words(markdown: str) -> int:
    """Words a reader sees on a Markdown page: link texts count, URLs do not."""
    return len(_WORD.findall(_LINK.sub(r"\1", markdown)))
