"""Sentence planning: several facts about one row joined as a writer would join them.

Given the cells a paragraph states about one row (each with its :class:`~worldforge.corpus.lexicon.Frame`
and the text the site writes for it), :func:`realise` gives each fact a sentence, or two facts one
when the row "has" both (aggregation only within one verb: "has 3 berths and a maximum draught of
5.6 m"; never a relative clause or a second clause that joins facts with no relation between them),
picks a construction per sentence (a verb phrase, a fronted date, a possessive copula for a role's
name), refers to the row by name
first and then by pronoun, surname or definite description (referring expressions,
:class:`~worldforge.corpus.lexicon.Referent`); a forum reply may open with a hedge (hearsay), no other voice
with an attribution or a connective. Every
value text is inserted verbatim, so each stated cell stays findable by the corpus fact check.
Choices are drawn from the caller's seeded random stream: the same inputs give the same text.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from worldforge.corpus.lexicon import Frame, Referent, conjugate, fill, is_participle

__all__ = ["Said", "realise", "sentence_case"]

_FORUM = ("Pretty sure ", "IIRC ", "From what I remember, ", "Last I checked, ", "If memory serves, ", "")
"""Hedges of a forum reply, the one voice here that is hearsay. No other voice gets an attribution or a connective: no
source stands behind "according to official figures", and "In addition," joins facts that have no relation."""
# adverbs a writer slips into a verb phrase, by voice; "also" only after a first sentence, present-time ones only on
# a present-tense verb that states no date ("now handles", never "now departed on")
_ADVERBS = {"forum": ("actually", "still")}  # "apparently" doubled a forum opener's hedge ("If memory serves ... apparently")  # never "reportedly", "currently lists": hedges on a fact; never
# "also" or "now" in reported prose: "It is also a textile" adds to nothing, "now has a maximum draught" claims a change
_PRESENT_ONLY = {"now", "still"}
_MODALS = {"can", "could", "will", "would", "may", "might", "must", "shall", "should"}
_COPULA_JOINS = (", and ", ", and ", "; ")  # never ", while ": a contrast two cells do not make


@dataclass(frozen=True)
class Said:
    """One cell a paragraph states: how it can be said and the site's text for its value."""

    frame: Frame
    value: str


def sentence_case(text: str) -> str:
    """The text with its first letter upper-cased (the rest untouched: names keep their case)."""
    return text[:1].upper() + text[1:]


def _copula(frame: Frame) -> str:
    """``is``, conjugated for a plural noun ("its shifts per month are 14"); never "is listed as" or "was last reported
    as", which hedge a plain fact."""
    return conjugate("is", frame.plural)


def _vp(rng, s: Said) -> str:
    return fill(rng.choice(s.frame.vps), s.value)


@lru_cache(maxsize=4096)
def _head_form(head: str) -> str:
    """How a verb phrase's first word behaves: ``be`` (is, was), ``have``, ``modal``, ``present`` (handles),
    ``past`` (departed, sold) or ``other`` (an adverb or a word lemminflect does not know as a verb)."""
    if head in ("is", "are", "was", "were"):
        return "be"
    if head in ("has", "have"):
        return "have"
    if head in _MODALS:
        return "modal"
    if head.endswith("ly") or head in ("first", "last", "never", "still", "also", "once"):
        return "other"
    from lemminflect import getInflection, getLemma

    lemma = getLemma(head, upos="VERB")
    if not lemma or lemma[0] == head:
        return "other"
    if head in getInflection(lemma[0], "VBZ"):
        return "present"
    if head in getInflection(lemma[0], "VBD"):
        return "past"
    return "other"


_ANY_ADVERB = frozenset(a for advs in _ADVERBS.values() for a in advs) | {"also", "now", "still", "currently"}  # a spec's verb may hold one


def _perfect(after_have: str) -> bool:
    """What follows ``has``/``have`` makes a perfect: a past participle, after one of :data:`_ADVERBS` or not
    ("been sailing", "also been", "put in"; not "a mass of 5 kg")."""
    words = after_have.split(" ", 2)
    return is_participle(words[1] if words[0] in _ANY_ADVERB and len(words) > 1 else words[0])


def _adverb(rng, vp: str, voice: str, later: bool, event: bool) -> str:
    """``vp`` with an adverb a writer would slip in ("now handles", "has also been", "apparently sold"),
    or unchanged when none fits the verb's tense or the voice."""
    head, _, rest = vp.partition(" ")
    form = _head_form(head)
    if form in ("modal", "other"):
        return vp
    perfect = form == "have" and _perfect(rest)  # "has been", "has put in": adverb after "has"
    present = form == "present" or head in ("is", "are") or (form == "have" and not perfect)
    options = [a for a in _ADVERBS.get(voice, ()) if (later or a != "also") and (present and not event or a not in _PRESENT_ONLY)]
    if not options:
        return vp
    adv = rng.choice(options)
    if form == "be" or perfect:
        return f"{head} {adv} {rest}"  # "was reportedly added", "has also been"
    return f"{adv} {vp}"


@lru_cache(maxsize=4096)
def _possessive(vp: str) -> bool:
    """``vp`` starts with the main verb ``has`` ("has a mass of 5 kg"), not the perfect's auxiliary ("has been sailing",
    "has also been")."""
    head, _, rest = vp.partition(" ")
    return head == "has" and bool(rest) and not _perfect(rest)


def _has_only(s: Said) -> bool:
    """Every verb phrase of the frame is the main verb ``has`` with an object ("has 3 berths", "has a length of 9 m")."""
    return bool(s.frame.vps) and all(_possessive(v) for v in s.frame.vps)


def _join(parts: list[str]) -> str:
    """Coordinated verb phrases; a repeated possessive ``has`` is said once ("has a mass of 5 kg and a range of 9 km"),
    never an auxiliary's ("has been sailing since 1976 and has 6.78% of the berths", not "... and 6.78% of ...")."""
    parts = [p[4:] if i and _possessive(p) and _possessive(parts[i - 1]) else p for i, p in enumerate(parts)]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _sentence(rng, ref: Referent, group: list[Said], first: bool, voice: str = "encyclopedia", later: bool = False) -> str:
    subj = ref.subject(rng, first=first)
    verbal = [s for s in group if s.frame.vps]
    if verbal and subj != ref.name and _clash(subj, verbal[0].frame.vps):  # never "this visitation record records ..."
        subj = ref.name
    nominal = [s for s in group if not s.frame.vps and s.frame.noun]
    # one fact a sentence, or two a row "has" ("has 3 berths and a maximum draught of 5.6 m"): never "X, whose fare is
    # £5, has 26 sailings", "the fare of X is £5, and it ...", "With a price index of 1.06, X shows ..." — they join
    # facts with no relation between them
    shapes = ["coord"]
    dated = next((s for s in verbal if s.frame.event and any(v.endswith(" on {value}") for v in s.frame.vps)), None)
    if dated is not None and len(group) == 1 and subj == ref.name:  # "On May 5, 2030, X arrived." (never "..., it started")
        shapes.append("dated")
    shape = rng.choice(shapes)
    if shape == "dated":
        ev = next(v for v in dated.frame.vps if v.endswith(" on {value}"))[: -len(" on {value}")]
        core = f"on {dated.value}, {subj} {ev}"
    elif verbal:
        vps = [_vp(rng, s) for s in verbal]
        if rng.random() < (0.5 if len(vps) == 1 else 0.3):
            vps[0] = _adverb(rng, vps[0], voice, later, verbal[0].frame.event)
        core = f"{subj} {_join(vps)}"
    else:
        core = ""
    return _nominal_tail(rng, ref, core, nominal, subj if not core else None)


def _possessor(rng, ref: Referent, noun: str, subject: str | None = None) -> str:
    """The possessive before ``noun``: the given subject form or the next one, but never a description that repeats
    the noun's first word ("the line's line colour" -> "its line colour")."""
    subject = subject or ref.subject(rng)
    if subject != ref.name and subject.rsplit(" ", 1)[-1].lower() == noun.split(" ", 1)[0].lower():
        subject = ref.name if ref.person else "it"
    return ref.possessive(subject)


def _clash(subject: str, vps: tuple[str, ...]) -> bool:
    """The subject's last word and a verb phrase's first share a stem ("the record records", "the count counts")."""
    last = subject.rsplit(" ", 1)[-1].lower()
    return any(v.split(" ", 1)[0][:5] == last[:5] for v in vps) if len(last) >= 4 else False


def _nominal_tail(rng, ref: Referent, core: str, nominal: list[Said], subject: str | None = None) -> str:
    """``core`` with a possessive copula for each frame that has only a noun ("its conductor is Lucas Jimenez"; the
    planner gives such a frame a sentence of its own)."""
    for s in nominal:
        who = subject or ref.subject(rng)
        # a description takes the "of" genitive: "the party leader of the Ritter Hut stay of 16 July 2036", never "...2036's"
        owner = f"the {s.frame.noun} of {who}" if who.startswith("the ") and " of " in who else f"{_possessor(rng, ref, s.frame.noun, who)} {s.frame.noun}"
        cop = f"{owner} {_copula(s.frame)} {s.value}"
        core = f"{core}{rng.choice(_COPULA_JOINS)}{cop}" if core else cop
        subject = None
    return core


def realise(rng, ref: Referent, items: list[Said], voice: str = "encyclopedia", first_by_name: bool = True) -> list[str]:
    """Sentences stating ``items`` about ``ref``, one fact each, or two the row "has".

    Args:
        rng: a seeded ``random.Random``.
        ref: the row referred to (its mentions so far decide the first subject form).
        items: the cells to state, in the order the document plan gives them; items whose frame has neither
            verb phrases nor a noun (booleans) are skipped.
        voice: ``encyclopedia``, ``news`` or ``forum``: which sentence openers may be used.
        first_by_name: the first sentence names the row (else it may start with a pronoun).

    Returns:
        Sentences, each capitalised and ending with a full stop; every item's value text occurs verbatim.
    """
    todo = [s for s in items if s.frame.vps or s.frame.noun]
    out: list[str] = []
    i = 0
    while i < len(todo):
        group = [todo[i]]
        i += 1
        # two facts share a sentence only when the row "has" both ("has 40 looks and an average retail price of
        # $1,539"): one verb, one topic; anything else gets a sentence of its own
        if i < len(todo) and _has_only(group[0]) and _has_only(todo[i]) and rng.random() < 0.5:
            group.append(todo[i])
            i += 1
        core = _sentence(rng, ref, group, first=first_by_name and not out, voice=voice, later=bool(out))
        opener = ""
        fronted = not core.startswith(ref.name) and core[:1].islower() and core.split(" ", 1)[0] not in ("it", "its", "the", "this")
        if voice == "forum" and not fronted and rng.random() < 0.6:  # "With a fare zone of 2, ...": one fronted phrase is enough
            opener = rng.choice(_FORUM)
        text = opener + core
        # "vivo Edge 11" keeps its own case; "the Uig sailing of 5 June" is a description: "The Uig sailing ..."
        # a name keeps its own case, even a handle ("melody40"): the fact check reads it verbatim
        out.append((text if text.startswith(ref.name) and not ref.name.startswith("the ") else sentence_case(text)) + ".")
    return out
