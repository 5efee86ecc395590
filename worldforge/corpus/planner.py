"""Sentence planning: several facts about one row joined as a writer would join them.

Given the cells a paragraph states about one row (each with its :class:`~worldforge.corpus.lexicon.Frame`
and the text the site writes for it), :func:`realise` groups them into sentences of one to
three facts (aggregation), picks a construction per sentence (coordinated verb phrases, a
fronted ``with``-phrase, a relative clause, a possessive copula), refers to the row by name
first and then by pronoun, surname or definite description (referring expressions,
:class:`~worldforge.corpus.lexicon.Referent`), and opens some sentences with a connective. Every
value text is inserted verbatim, so each stated cell stays findable by the corpus fact check.
Choices are drawn from the caller's seeded random stream: the same inputs give the same text.
"""

from __future__ import annotations

from dataclasses import dataclass

from worldforge.corpus.lexicon import Frame, Referent, conjugate

__all__ = ["Said", "realise", "sentence_case"]

_CLOSERS = (", according to official figures", ", at the last count", ", by the latest tally", " on the latest figures",
            ", as the records show", ", per the published data", ", going by the official numbers", " at the time of writing")
_COPULAS = ("is", "is", "is", "is recorded as", "is given as", "is listed as", "was last reported as")
_OPENERS = ("According to the register, ", "As of the latest records, ", "Official records show that ", "By most accounts, ",
            "Public records indicate that ", "Sources agree that ", "On paper, ", "As listed, ")
_CONNECTIVES = ("In addition, ", "Beyond that, ", "Separately, ", "On top of that, ", "Meanwhile, ", "Also worth noting: ",
                "For the record, ", "By the latest count, ", "As for the numbers, ", "Elsewhere in the record, ")
_FORUM = ("Pretty sure ", "IIRC ", "From what I remember, ", "Last I checked, ", "If memory serves, ", "According to the spec sheet, ",
          "Going by the official page, ", "")
_NEWS = ("According to the filing, ", "Records show that ", "The figures show that ", "Data reviewed by this outlet show that ", "")


@dataclass(frozen=True)
class Said:
    """One cell a paragraph states: how it can be said and the site's text for its value."""

    frame: Frame
    value: str


def sentence_case(text: str) -> str:
    """The text with its first letter upper-cased (the rest untouched: names keep their case)."""
    return text[:1].upper() + text[1:]


def _copula(rng, frame: Frame) -> str:
    """``is`` or a variant, conjugated for a plural noun ("its shifts per month are 14")."""
    return conjugate(rng.choice(_COPULAS), frame.plural)


def _vp(rng, s: Said) -> str:
    return rng.choice(s.frame.vps).format(value=s.value)


def _join(parts: list[str]) -> str:
    """Coordinated verb phrases; a repeated ``has`` is said once ("has a mass of 5 kg and a range of 9 km")."""
    parts = [p[4:] if i and p.startswith("has ") and parts[i - 1].startswith("has ") else p for i, p in enumerate(parts)]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _sentence(rng, ref: Referent, group: list[Said], first: bool) -> str:
    subj = ref.subject(rng, first=first)
    verbal = [s for s in group if s.frame.vps]
    nominal = [s for s in group if not s.frame.vps and s.frame.noun]
    shapes = ["coord"]
    if len(verbal) >= 2 and verbal[0].frame.with_phrase:
        shapes.append("with")
    if len(verbal) >= 2 and verbal[0].frame.noun and not verbal[0].frame.plural and not ref.person and subj[:1].isupper():  # never "It, whose ..."
        shapes.append("whose")
    if verbal and any(s.frame.noun for s in verbal) and not nominal:  # one possessive copula a sentence at most
        shapes.append("copula")
    dated = next((s for s in verbal if s.frame.event and any(v.endswith(" on {value}") for v in s.frame.vps)), None)
    if dated is not None and len(group) == 1:  # "On May 5, 2030, X arrived." (never dating the row's other facts)
        shapes.append("dated")
    shape = rng.choice(shapes)
    if shape == "dated":
        ev = next(v for v in dated.frame.vps if v.endswith(" on {value}"))[: -len(" on {value}")]
        rest = [s for s in verbal if s is not dated]
        core = f"on {dated.value}, {subj} {_join([ev] + [_vp(rng, s) for s in rest])}"
    elif shape == "with":
        w, rest = verbal[0], verbal[1:]
        core = f"{w.frame.with_phrase.format(value=w.value)}, {subj} {_join([_vp(rng, s) for s in rest])}"
    elif shape == "whose":
        w, rest = verbal[0], verbal[1:]
        core = f"{subj}, whose {w.frame.noun} {'are' if w.frame.plural else 'is'} {w.value}, {_join([_vp(rng, s) for s in rest])}"
    elif shape == "copula":
        w = next(s for s in verbal if s.frame.noun)
        rest = [s for s in verbal if s is not w]
        cop = f"{ref.possessive(subj)} {w.frame.noun} {_copula(rng, w.frame)} {w.value}"
        core = cop if not rest else f"{subj} {_join([_vp(rng, s) for s in rest])}, and {ref.possessive(ref.subject(rng))} {w.frame.noun} {_copula(rng, w.frame)} {w.value}"
    else:
        core = f"{subj} {_join([_vp(rng, s) for s in verbal])}" if verbal else ""
    for s in nominal:  # frames with only a noun: a possessive copula of their own
        cop = f"{ref.possessive(ref.subject(rng))} {s.frame.noun} {_copula(rng, s.frame)} {s.value}"
        core = f"{core}, and {cop}" if core else cop
    return core


def realise(rng, ref: Referent, items: list[Said], voice: str = "encyclopedia", first_by_name: bool = True) -> list[str]:
    """Sentences stating ``items`` about ``ref``, one to three facts each.

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
        size = rng.choices((1, 2, 3), weights=(1, 5, 5))[0]
        group = [todo[i]]
        i += 1
        while len(group) < size and i < len(todo):
            if not todo[i].frame.vps and any(not g.frame.vps for g in group):
                break  # one copula-only fact a sentence: never "..., and its X is A, and its Y is B"
            group.append(todo[i])
            i += 1
        core = _sentence(rng, ref, group, first=first_by_name and not out)
        opener = ""
        if out and rng.random() < 0.3:
            opener = rng.choice(_CONNECTIVES)
        elif voice == "encyclopedia" and rng.random() < 0.3:
            opener = rng.choice(_OPENERS)
        elif voice == "forum" and rng.random() < 0.6:
            opener = rng.choice(_FORUM)
        elif voice == "news" and out and rng.random() < 0.3:
            opener = rng.choice(_NEWS)
        closer = rng.choice(_CLOSERS) if voice != "forum" and rng.random() < (0.35 if len(group) == 1 else 0.12) else ""
        if len(group) == 1 and not opener and voice == "encyclopedia" and rng.random() < 0.4:
            opener = rng.choice(_OPENERS)
        text = opener + core + closer
        out.append((text if text.startswith(ref.name) else sentence_case(text)) + ".")  # "vivo Edge 11" keeps its own case
    return out
