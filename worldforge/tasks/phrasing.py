"""How task questions are worded: frames per kind, lists of attributes in varied order, varied output instructions.

Real WideSearch questions are requests ("Compile ..."), questions ("Which ...?") or scenarios ("I'm
writing a report on ..."), state their constraints before or after the columns they want, and end
with output instructions worded in several ways that all say the same: one Markdown table, the exact
column names in order, dates as "Mon DD, yyyy", numbers without units or separators, a ```markdown
fence. :class:`Phrasing` draws every choice from the task generator's seeded stream, so the same
world and seed give the same questions.
"""

from __future__ import annotations

import random
import re

__all__ = ["Phrasing", "join_words", "requirement_blocks", "without_requirements"]

_REQUESTS = ("Compile", "Put together", "Build", "Prepare", "Assemble", "I need", "I'd like", "Please give me", "Draw up", "Create")
_PREFACES = (
    "I'm writing a report and need some data.", "I'm preparing a briefing.", "This is for a market analysis.", "Quick research task.",
    "I'm putting together a fact sheet.", "I need this for a newsletter piece.", "Some background research, please.",
    "This is for a report I'm drafting.", "Context: I'm comparing sources for an article.",
)


def join_words(items: list[str], conj: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    items = [i for i in items if i]
    if len(items) <= 2:
        return f" {conj} ".join(items)
    return ", ".join(items[:-1]) + f" {conj} " + items[-1]


def requirement_blocks(cols: str) -> list[str]:
    """Every wording of a wide task's output instructions for the columns ``cols`` (comma-joined), each starting with a
    blank line: what :meth:`Phrasing.requirements` appends to a question."""
    blocks = [
        ("\n\nPlease output the result as a Markdown table. The table must contain the following columns: "
         f"{cols}. Output requirements:\n\n"
         "- Output one single Markdown table; do not split it into several tables\n"
         "- Fill every cell as its column asks; do not leave cells out without reason\n"
         f"- The column names, in order, are: {cols}\n"
         '- Write dates as "Mon DD, yyyy" (for example: Feb 01, 1994)\n'
         "- Write numbers without units or thousands separators; the unit is in the column name\n"
         "- Output the result directly, in the format ```markdown{table}```"),
        (f"\n\nAnswer with a single Markdown table whose columns are, in this order: {cols}.\n\nFormat rules:\n"
         "- One Markdown table only, not several\n"
         "- Keep the column names exactly as given, in the same order\n"
         '- Dates as "Mon DD, yyyy" (e.g. Feb 01, 1994)\n'
         "- Numbers as plain digits, with no units and no thousands separators (the column name carries the unit)\n"
         "- Leave no cell empty without a reason\n"
         "- Wrap the table in ```markdown{table}```"),
        (f"\n\nReturn the answer as one Markdown table with exactly these columns, in order: {cols}. "
         'Dates must read like "Feb 01, 1994" (Mon DD, yyyy); numbers carry no units and no thousands separators, since the units '
         "are in the column names. Do not split the table, and output it directly as ```markdown{table}```."),
        ("\n\nOutput format:\n"
         "1. A single Markdown table (do not split it)\n"
         f"2. Columns, in this exact order and spelling: {cols}\n"
         '3. Dates in the form "Mon DD, yyyy" (for example: Feb 01, 1994)\n'
         "4. Numbers without units or thousands separators; the unit is given in the column name\n"
         "5. Fill every cell; do not omit cells without reason\n\n"
         "Give the table directly, as ```markdown{table}```"),
        (f"\n\nPresent the results as a Markdown table with the columns {cols} (in that order). Requirements:\n\n"
         "- a single table, not split into parts\n"
         "- column names exactly as listed above\n"
         '- dates formatted "Mon DD, yyyy", e.g. Feb 01, 1994\n'
         "- numbers without units or thousands separators (the column names give the units)\n"
         "- every cell filled where the data exists\n"
         "- the table output directly in the form ```markdown{table}```"),
    ]
    return blocks


def without_requirements(question: str) -> str:
    """A wide task's question without the output instructions :meth:`Phrasing.requirements` appended (the question
    alone: what a searcher looks for); a question without them is returned as it is."""
    sentinel = "\x00"
    for block in requirement_blocks(sentinel):
        at = question.rfind(block[:block.index(sentinel)])
        if at >= 0:
            return question[:at]
    return question


class Phrasing:
    """The wording choices of one task generator.

    Args:
        rng: the generator's seeded random stream.
        title: the world's title (questions write it in italics).
    """

    def __init__(self, rng: random.Random, title: str):
        self.rng, self.world = rng, f"*{title}*"

    def pick(self, options: list[str]) -> str:
        """One of ``options`` (non-empty ones)."""
        return self.rng.choice([o for o in options if o])

    def request(self) -> str:
        """A verb phrase that takes the thing asked for as its object (``Compile``, ``I need``)."""
        return self.rng.choice(_REQUESTS)

    def preface(self, p: float = 0.35) -> str:
        """A scenario sentence before the request (``I'm writing a report and need some data.``), or nothing."""
        return self.rng.choice(_PREFACES) + " " if self.rng.random() < p else ""

    def attrs(self, words: list[str], det: str = "") -> str:
        """Attribute words in a varied order, joined: ``its price, screen size and launch date``."""
        words = list(words)
        self.rng.shuffle(words)
        return (det + " " if det else "") + join_words(words)

    def rounding(self, what: list[str]) -> str:
        """A note on rounding computed values (``what``: ``averages``, ``totals``), or nothing."""
        if not what:
            return ""
        w = join_words(what)
        return " " + self.pick([f"Round {w} to two decimals.", f"Give {w} to two decimal places.", f"{w[:1].upper() + w[1:]} should be rounded to 2 decimals."])

    def requirements(self, names: list[str]) -> str:
        """The output instructions, in one of several wordings (:func:`requirement_blocks`); every one asks for one
        Markdown table with ``names`` as its columns in order, dates as "Mon DD, yyyy", numbers without units or
        separators, in a ```markdown fence."""
        return self.rng.choice(requirement_blocks(", ".join(names)))


def capitalized(text: str) -> str:
    """``text`` with its first letter upper-cased (the rest as it is)."""
    return text[:1].upper() + text[1:]


def noun_like(label: str) -> bool:
    """A label that reads as a noun phrase (``segment``, ``type of trip``), not a predicate (``based in``, ``has a spa``)."""
    words = label.split()
    return bool(words) and words[-1] not in ("in", "of", "at", "on", "by", "for", "to", "from", "with") and words[0] not in ("is", "has", "was", "based")


_PREPOSITIONS = frozenset(("of", "by", "per", "in", "on", "for", "with", "at", "from", "to", "after", "before", "since"))


def verb_is(label: str) -> str:
    """The verb agreeing with a label's head noun: ``points are``, ``player rating is``, ``rank by weekly departures
    is``, ``number of docks is``, ``games played with White are``, ``year founded is``."""
    words = label.split()
    head: list[str] = []
    for w in words:
        if w.lower() in _PREPOSITIONS and head:
            break  # the head noun comes before its prepositional phrase
        head.append(w)
    while len(head) > 1 and (head[-1].endswith("ed") or head[-1].lower() in ("here", "there")):
        head.pop()  # a participle or adverb after the noun: "games played", "bikes based here"
    last = head[-1] if head else label
    if last.lower() in ("series", "species", "news", "means"):
        return "is"
    return "are" if last.endswith("s") and not last.endswith(("ss", "us", "is")) and len(last) > 3 else "is"


def plural_event(event: str) -> str:
    """An event verb for several rows: ``was announced`` -> ``were announced``."""
    return "were " + event[4:] if event.startswith("was ") else event


def header_words(name: str) -> str:
    """A column header as words in a sentence: ``Launch price (USD)`` -> ``launch price``."""
    words = re.sub(r" \([^()]*\)$", "", name)
    return words if words[:2].isupper() else words[:1].lower() + words[1:]


def with_article(word: str) -> str:
    """``word`` after ``a`` or ``an``, by its first letter (``an attendance``, ``a segment``)."""
    return ("an " if word[:1].lower() in "aeiou" else "a ") + word
