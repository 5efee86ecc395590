"""How a value is said: verb frames for columns, referring expressions for rows, conjugation.

The surface-realisation layer of the corpus's data-to-text pipeline (content selection →
document plan → sentence plan → realisation, after Reiter & Dale, *Building Natural Language
Generation Systems*, 2000). Each column gets a :class:`Frame`: the ways a sentence may state
one of its values about one row, as verb phrases (``launched on {value}``, ``costs {value}``,
``has {value} models``) and, where the label is a plain noun phrase, a copula on the possessive
(``Nova X's screen size is {value}``). A spec's column ``verb`` wins; otherwise the frame is
derived from the column's label, unit and kind, choosing a neutral construction (``has a
<label> of``, a possessive copula) when no verb fits, and never a construction that glues a
label where a noun or verb must go ("its number of models stands at", "was departed on",
"is listed with 11 days for days", "its closes are ..."): a present-tense verb dates an event
("closes on {value}"), a plural noun is counted ("has {value} lifts", "has {value} lifts open"),
a noun and a participle say what was done ("people caught" -> "caught {value} people"), a
lone time unit is logged ("has {value} on record").

Verbs are conjugated for plural subjects with lemminflect (``has`` → ``have``, ``costs`` →
``cost``, ``was`` → ``were``); articles and plurals come from inflect.

:class:`Referent` gives a row's referring expressions: its name on first mention, then a
pronoun or a definite description (``the habitat``), and possessives (``Ares Dome's``,
``its``, ``the resident's``). People (rows named by a person-name column, or tables whose noun
is a person noun) are never "it": they are called by surname or description.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

__all__ = ["ABSENCES", "INTRANSITIVE_VERBS", "ORDINAL_HEADS", "PLACE_VPS", "echoes", "Frame", "Referent", "a_or_an", "base_verb", "conjugate", "fill", "frame_for", "is_absence", "is_plural", "kind_of", "names_a_thing", "is_participle", "is_past",
           "past_tense", "person_table", "plural_noun", "possessive", "present_verb", "singular_noun", "singular_of_plural"]

_PREPS = {"of", "at", "after", "before", "since", "on", "in", "per", "by", "from", "to", "within", "for", "with", "into", "under", "over",
          "during", "across", "through", "until", "between", "among", "throughout"}
_TIME_UNITS = {"day", "days", "hour", "hours", "minute", "minutes", "second", "seconds", "week", "weeks", "month", "months",
               "year", "years", "sol", "sols"}
# verbs that take no object: their date column reads "<row> departed on ...", never "was departed"
INTRANSITIVE_VERBS = {
    "arrived", "departed", "started", "ended", "opened", "closed", "launched", "began", "finished", "expired", "retired", "died", "debuted",
    "premiered", "landed", "docked", "returned", "occurred", "happened", "sailed", "joined", "left", "graduated", "resigned", "peaked", "matured",
    "relocated", "merged", "folded", "emerged", "originated", "failed", "concluded", "commenced", "aired", "shipped", "went",
    "qualified", "competed", "finished", "enlisted", "volunteered", "hatched", "bloomed", "flowered", "erupted"
}
# "<noun> date" -> the event's verb phrase
_NOUN_EVENTS = {
    "launch": "launched", "release": "was released", "start": "started", "end": "ended", "arrival": "arrived",
    "departure": "departed", "completion": "was completed", "delivery": "was delivered", "opening": "opened",
    "closing": "closed", "closure": "closed", "signing": "was signed", "founding": "was founded", "registration": "was registered",
    "publication": "was published", "approval": "was approved", "retirement": "retired", "expiry": "expires",
    "expiration": "expires", "inspection": "was inspected", "installation": "was installed", "commission": "was commissioned",
    "commissioning": "was commissioned", "birth": "was born", "death": "died", "debut": "debuted", "premiere": "premiered",
    "announcement": "was announced", "listing": "was listed", "filing": "was filed", "submission": "was submitted",
    "award": "was awarded", "enrollment": "enrolled", "hire": "was hired", "hiring": "was hired", "grant": "was granted",
    "kickoff": "kicked off", "maturity": "matures", "due": "is due", "deadline": "is due", "graduation": "graduated",
    "ipo": "went public", "acquisition": "was acquired", "construction": "was built", "discovery": "was discovered",
    "inauguration": "was inaugurated", "landing": "landed", "return": "returned", "recall": "was recalled",
    "renewal": "is up for renewal", "last inspection": "was last inspected", "first flight": "first flew",
    "maiden flight": "first flew", "harvest": "was harvested", "vintage": "was produced", "diagnosis": "was diagnosed",
    "treatment": "was treated", "admission": "was admitted", "discharge": "was discharged",
}
_PERSON_NOUNS = {
    "person", "people", "resident", "player", "employee", "author", "artist", "athlete", "driver", "pilot", "member", "customer",
    "patient", "student", "teacher", "doctor", "coach", "manager", "founder", "director", "scientist", "researcher", "astronaut",
    "crew member", "captain", "chef", "winemaker", "brewer", "farmer", "designer", "musician", "singer", "actor", "writer",
    "investor", "ceo", "executive", "official", "volunteer", "participant", "candidate", "referee", "umpire", "keeper",
    "zookeeper", "ranger", "host", "presenter", "producer", "engineer", "analyst", "trader", "broker", "agent", "nurse",
    "surgeon", "physician", "worker", "miner", "colonist", "settler", "passenger", "traveller", "traveler", "guest", "competitor",
    "grandmaster", "streamer", "creator", "podcaster", "juror", "judge", "principal investigator", "curator", "captain",
}
_PARTICIPLES = {"spoken", "known", "worn", "chosen", "driven", "eaten", "broken", "woven", "sold", "built", "made", "grown", "drawn", "won", "lost", "held", "run", "flown", "given", "taken", "shown", "seen",
                "written", "done", "paid", "spent", "brought", "bought", "caught", "kept", "sent", "thrown", "fought", "sung", "ridden"}
_MASS = {"revenue", "income", "profit", "funding", "output", "power", "traffic", "attendance", "turnover", "spending", "debt",
         "investment", "production", "consumption", "throughput", "demand", "supply", "equity", "capital", "rainfall", "footfall",
         "snow", "snowfall", "rain", "precipitation", "wind", "sunshine", "storage"}
_DIMENSIONS = {"size", "length", "height", "width", "diameter", "depth", "span", "wingspan", "thickness", "elevation", "altitude"}
_ADJECTIVE_OF = {"length": "long", "height": "high", "width": "wide", "depth": "deep", "thickness": "thick"}
_TALL = {"plant", "tree", "building", "tower", "person", "player", "statue", "mast", "skyscraper", "palm", "shrub", "crop", "flower"}


@lru_cache(maxsize=1024)
def _superlative(word: str) -> bool:
    """A superlative adjective (``steepest``, ``longest``, ``highest``; never ``forest`` or ``interest``)."""
    from lemminflect import getAllLemmas, getInflection

    lemma = getAllLemmas(word).get("ADJ")
    return bool(lemma) and word in getInflection(lemma[0], "JJS")


ABSENCES = frozenset({"none", "n/a", "-", "\u2014", "\u2013", "nil", "null", "no value", "not applicable", "unknown",
                      "unrated", "untitled", "unranked"})
"""Category values that say a row has nothing ("none", "n/a", "—"): an absence, stated in tables, never a word in a
sentence ("is a none player", "the none joined")."""


def kind_of(frame: "Frame", value: str) -> str | None:
    """What a row is by a category whose frame names its kind ("is {a} {value} beer" with ``Pils``: ``Pils beer``;
    "is {a} {value}" with ``catamaran``: ``catamaran``), or ``None`` when the frame names no kind or is not sure."""
    vp = next((v for v in frame.vps if v.startswith("is {a} {value}")), None) if frame.prose else None
    if vp is None:
        return None
    if not value.strip():  # no value: what follows it ("" or " beer"), which tells that the frame names a kind
        return vp[len("is {a} {value}"):]
    return fill(vp, value).split(" ", 2)[2]  # "is a Pils beer" -> "Pils beer"


@lru_cache(maxsize=8192)
def names_a_thing(value: str) -> bool:
    """Whether a category value is a noun phrase that can stand for what a row is ("a retailer", "a ro-ro ferry", "the
    technician"), by the word class of its last word (lemminflect): a noun that is no adjective. ``indoor``,
    ``seasonal``, ``part-time``, ``hybrid``, ``IPA`` are not: they describe a thing and need its noun ("an indoor
    swimming pool", "the seasonal lifeguard")."""
    words = value.split()
    if not words or not words[-1].isalpha():
        return False
    from lemminflect import getAllLemmas

    pos = getAllLemmas(words[-1].lower())
    return "NOUN" in pos and "ADJ" not in pos


PLACE_VPS = ("is in {value}", "is on {value}", "is from {value}", "is based in {value}", "is held in {value}")
"""The verb phrases that say where a row is (a category's place frame; an organisation's "is based in", an event's
"is held in"): "the 5 runners from Sweden", "a hall of X in Tehran"."""


def echoes(noun: str, verb: str) -> bool:
    """A verb that repeats the noun it would be said of ("observation" / "was observed", "inspection" / "was inspected")."""
    stems = {w[:5] for w in noun.lower().split() if len(w) >= 5}
    return any(w[:5] in stems for w in verb.lower().split() if len(w) >= 5)


def is_absence(value: object) -> bool:
    """Whether a cell's value is an absence (:data:`ABSENCES`, case and surrounding space ignored)."""
    return isinstance(value, str) and value.strip().lower() in ABSENCES


@lru_cache(maxsize=1)
def _inflect_engine():
    import inflect

    return inflect.engine()


@lru_cache(maxsize=8192)
def a_or_an(phrase: str) -> str:
    """``"an hour"``, ``"a unit"``, ``"an 8-core chip"``: the indefinite article (inflect) and the phrase."""
    return _inflect_engine().a(phrase)


@lru_cache(maxsize=8192)
def plural_noun(noun: str) -> str:
    """``spacecraft`` -> ``spacecraft``, ``analysis`` -> ``analyses``, ``phone model`` -> ``phone models`` (inflect)."""
    return _inflect_engine().plural_noun(noun) or noun


_SINGULAR_KEEP = {"data": "data", "media": "media", "indices": "index", "news": "news", "series": "series", "species": "species"}


@lru_cache(maxsize=4096)
def singular_noun(word: str) -> str:
    """``lighthouses`` -> ``lighthouse``, ``categories`` -> ``category``, ``status`` stays (inflect; a few mass and
    Latin plurals are kept)."""
    if word.lower() in _SINGULAR_KEEP:
        return _SINGULAR_KEEP[word.lower()]
    if word.endswith(("ss", "us", "is")):  # already singular: bus, campus, class, analysis (inflect would cut an "s")
        from lemminflect import getAllLemmas

        lemma = (getAllLemmas(word).get("NOUN") or (word,))[0]  # unless lemminflect knows a plural: menus, gurus, kiwis
        return lemma if lemma + "s" == word else word
    return _inflect_engine().singular_noun(word) or word


@lru_cache(maxsize=4096)
def singular_of_plural(word: str) -> str | None:
    """The singular of a plural noun (``films`` -> ``film``, ``itineraries`` -> ``itinerary``); ``None`` for a word
    lemminflect does not read as a plural noun (``series``, ``has``, ``per``)."""
    from lemminflect import getAllLemmas

    noun = getAllLemmas(word).get("NOUN")
    if noun and noun[0] == word and not word.endswith("s"):  # "people": lemminflect keeps it, inflect knows "person"
        sing = _inflect_engine().singular_noun(word)
        return sing if sing and sing != word else None
    return singular_noun(word) if noun and noun[0] != word else None


_THE_PLACES = frozenset({"Netherlands", "United States", "United Kingdom", "Czech Republic", "Philippines", "Bahamas", "Maldives",
                         "United Arab Emirates", "Dominican Republic", "Central African Republic", "Gambia", "Seychelles",
                         "Solomon Islands", "Faroe Islands", "Hague", "Alps", "Dolomites", "Pyrenees", "Andes", "Himalayas"})
"""Place names a sentence gives "the" ("in the Netherlands"): the value is kept verbatim, the article is the sentence's."""

_AFTER_VALUE = re.compile(r"\{value\} ([a-z]+)\b")


@lru_cache(maxsize=4096)
def _one_of(template: str) -> str:
    return _AFTER_VALUE.sub(lambda m: "{value} " + (singular_of_plural(m.group(1)) or m.group(1)), template)


def fill(template: str, value: str) -> str:
    """A frame's phrase with its value: ``template.format(value=value)``, the noun after a count of exactly one made
    singular ("placed {value} films" with ``1``: "placed 1 film", not "placed 1 films"; "1 time", "1 itinerary")."""
    template = _one_of(template) if value == "1" else template
    if value in _THE_PLACES and ("in {value}" in template or "from {value}" in template or "on {value}" in template):
        template = template.replace(" {value}", " the {value}", 1)  # "is in the Netherlands"
    m = re.search(r"\{a\} \{value\} ([a-z][a-z ]*)$", template)
    if m and value.lower().endswith(m.group(1).split()[-1]):
        template = template[: m.start(1) - 1]  # a value that names the thing itself: "is a chairlift", never "a chairlift lift"
    if "{a} {value}" in template:  # "is {a} {value} beer": the article the value takes ("an IPA beer", "a Pils beer")
        art = a_or_an(value).split(" ", 1)[0]
        template = template.replace("{a} {value}", f"{art} {{value}}")
    return template.format(value=value)


@lru_cache(maxsize=4096)
def base_verb(word: str) -> str:
    """``arrived`` -> ``arrive``, ``handles`` -> ``handle``, ``first`` stays (lemminflect's verb lemma, else the word)."""
    from lemminflect import getLemma

    lemma = getLemma(word, upos="VERB")
    return lemma[0] if lemma else word


_IRREGULAR_PLURAL_VERBS = {"is": "are", "was": "were", "has": "have", "does": "do"}


@lru_cache(maxsize=4096)
def conjugate(phrase: str, plural: bool) -> str:
    """A verb phrase written for one subject, conjugated for ``plural`` subjects: ``has 3 models`` ->
    ``have 3 models``, ``costs $399`` -> ``cost $399``, ``was announced`` -> ``were announced``; past tenses and
    modals stay (lemminflect gives the base form of a third-person -s verb)."""
    if not plural or not phrase:
        return phrase
    head, _, rest = phrase.partition(" ")
    if head in _IRREGULAR_PLURAL_VERBS:
        new = _IRREGULAR_PLURAL_VERBS[head]
    elif head.endswith("s") and not head.endswith("ss"):
        from lemminflect import getLemma

        lemma = getLemma(head, upos="VERB")
        new = lemma[0] if lemma else head
    else:
        new = head
    return f"{new} {rest}".strip()


@dataclass(frozen=True)
class Frame:
    """The ways a sentence may state one column's value about one row.

    Attributes:
        vps: verb phrases with ``{value}`` (``launched on {value}``), third person singular; the first is the
            default, the planner picks among them by seed.
        noun: the label as a noun phrase for a possessive copula (``screen size`` -> "its screen size is
            {value}"), or ``None`` when the label is not one (``number of models``, ``days after launch``).
        event: the frame states when something happened (a date with a verb): news leads on it.
    """

    vps: tuple[str, ...]
    noun: str | None = None
    event: bool = False
    plural: bool = False
    """The noun's head is plural ("shifts per month"): its copula is "are"."""
    prose: bool = True
    """The frame is sure enough for running text. A frame the rules are not sure of (a category's bare copula, "its
    island is Mull"; a number with no verb, "its nights are 4"; a date with no event, "has a concert date of") states
    its value only in tables and infoboxes, short and formulaic but correct; a spec's ``verb`` makes any column sure."""


def _label_words(label: str) -> list[str]:
    return label.lower().split()


def _noun_phrase_ok(words: list[str]) -> bool:
    """A label usable as a noun phrase after a possessive: not "number of ...", not starting with a unit,
    not ending with a participle or a preposition."""
    if not words or words[0] in ("number", "no.", "count") or words[0] in _TIME_UNITS or words[-1] in _PREPS:
        return False
    if words[0] in ("year", "date") and len(words) > 1 and words[1].endswith("ed"):
        return False  # "year founded", "date announced"
    if len(words) > 1 and words[-1] in _PARTICIPLES:
        return False
    return not (len(words) > 1 and words[-1].endswith("ed") and words[-1] not in ("speed", "seed", "need", "feed", "bed", "shed", "red"))


def _event_for(label: str, name: str, event: str | None) -> str | None:
    """The verb phrase of a date column's event (``launched``, ``was announced``), or ``None``."""
    words = _label_words(label)
    if event:
        head = event.split()[-1]
        if event.startswith("was ") and head in INTRANSITIVE_VERBS:
            return head  # "was departed" -> "departed"
        return event
    stem = [w for w in words if w not in ("date", "day", "on", "at")]
    key = " ".join(stem)
    if key in _NOUN_EVENTS:
        return _NOUN_EVENTS[key]
    if len(stem) == 1 and present_verb(stem[0]):
        return stem[0]  # "closes": "<row> closes on <date>"
    if 1 <= len(stem) <= 2 and (len(stem) == 1 or stem[0] in ("first", "last")) and is_participle(stem[-1]):
        adv = f"{stem[0]} " if len(stem) == 2 else ""  # "first lit" -> "was first lit", "departed" -> "departed"
        return f"{adv}{stem[-1]}" if stem[-1] in INTRANSITIVE_VERBS else f"was {adv}{stem[-1]}"
    if stem and stem[-1] in _NOUN_EVENTS and len(stem) <= 2:
        return _NOUN_EVENTS[stem[-1]]
    if stem and stem[0] in _NOUN_EVENTS and len(stem) <= 2:
        return _NOUN_EVENTS[stem[0]]
    return None


@lru_cache(maxsize=4096)
def is_participle(word: str) -> bool:
    """A past participle of a verb (lemminflect: ``added``, ``lit``, ``built``, ``sold``; never ``red`` or ``hundred``)."""
    if word in _PARTICIPLES:
        return True
    from lemminflect import getAllLemmas, getInflection

    lemma = getAllLemmas(word).get("VERB")
    return bool(lemma) and (word in getInflection(lemma[0], "VBN") or lemma[0] != word and word in getInflection(lemma[0], "VBD"))


# verbs whose present tense dates a row's event ("closes on 7 May", "opens on 1 December"): a date label that is
# one of them is a verb, never a plural noun ("its closes are ..."); nouns such as "dates" or "records" are not
_PRESENT_EVENTS = {"close", "open", "end", "start", "begin", "finish", "expire", "lapse", "renew", "reopen", "resume", "launch",
                   "return", "arrive", "depart", "retire", "debut", "premiere", "run", "wrap", "conclude", "commence", "mature"}
# participles after which a trailing preposition states where a row is, not what happened to it ("based in Lyon")
_STATES = {"based", "located", "headquartered", "situated", "registered", "listed", "stationed", "housed", "hosted", "made", "built"}


@lru_cache(maxsize=4096)
def present_verb(word: str) -> bool:
    """A third-person present verb that dates an event (``closes``, ``opens``, ``expires``; lemminflect's ``VBZ``):
    as a date column's label it says "<row> closes on <date>"; ``dates``, ``records`` or ``lifts`` are not."""
    from lemminflect import getAllLemmas, getInflection

    lemmas = getAllLemmas(word)
    verb = lemmas.get("VERB")
    if not verb or verb[0] == word or word not in getInflection(verb[0], "VBZ"):
        return False
    return verb[0] in _PRESENT_EVENTS or "NOUN" not in lemmas


@lru_cache(maxsize=4096)
def past_tense(word: str) -> str:
    """The simple past of a participle or verb: ``eaten`` -> ``ate``, ``caught`` -> ``caught``, ``sold`` -> ``sold``
    (lemminflect; the word itself when it knows no verb)."""
    from lemminflect import getInflection, getLemma

    lemma = getLemma(word, upos="VERB")
    past = getInflection(lemma[0], "VBD") if lemma else ()
    return past[0] if past else word


_PAST_ADVERBS = {"first", "last", "once", "officially", "reportedly", "formally", "finally", "originally", "also"}


@lru_cache(maxsize=4096)
def is_past(vp: str) -> bool:
    """Whether a verb phrase is in the simple past (``launched on``, ``was announced``, ``first flew``); ``is due to
    finish``, ``expires``, ``closes``, ``will open`` are not. "It was on <date> that <row> <vp>" needs a past ``vp``."""
    words = [w for w in vp.split() if w not in _PAST_ADVERBS]
    if not words:
        return False
    head = words[0]
    if head in ("was", "were", "had"):
        return True
    if head in ("is", "are", "has", "have", "will", "can", "may", "must", "should", "would", "could"):
        return False
    from lemminflect import getInflection, getLemma

    lemma = getLemma(head, upos="VERB")
    return bool(lemma) and lemma[0] != head and head in getInflection(lemma[0], "VBD")


def frame_for(label: str, kind: str, unit_base: str | None, unit_kind: str | None, *, name: str = "", verb: str | None = None,
              event: str | None = None, of_label: str | None = None, person: bool = False, noun_of_row: str = "",
              role: bool = False, values: tuple[str, ...] = ()) -> Frame:
    """The :class:`Frame` of one column.

    Args:
        label: the column's label (``launch price``).
        kind: its :class:`~worldforge.corpus.vocab.ColumnInfo` kind (``date``, ``number``, ``share``, ``rank``, ``category``, ``text``, ``bool``).
        unit_base: the unit's base (``USD``, ``days``, ``people``) or ``None``.
        unit_kind: ``money``, ``percent``, ``share``, ``time``, ``measure`` or ``None``.
        name: the column identifier (``announced``), for date events.
        verb: the spec's ``verb`` (``launched on {value} | went on sale {value}``): its alternatives are the only verb phrases.
        event: the event verb :mod:`~worldforge.corpus.vocab` derived from the name, if any.
        of_label: for a rank, the label of the ranked column.
        person: the rows are people (ages read "is 41 years old").
        noun_of_row: what a row is (``beer``): a style or genre column reads "is a Pils beer".
        role: the column's values are people's names (a conductor, an owner): its copula is sure ("its conductor is
            Lucas Jimenez").
        values: a category's distinct values (a type whose values are adjectives reads "is an indoor swimming pool").

    Returns:
        The frame; never raises: an unknown label gets a neutral construction.
    """
    fr = _frame_for(label, kind, unit_base, unit_kind, name=name, verb=verb, event=event, of_label=of_label, person=person,
                    noun_of_row=noun_of_row, role=role, values=values)
    if fr.noun and _plural_head(label):
        return Frame(fr.vps, fr.noun, fr.event, True, fr.prose)
    return fr


@lru_cache(maxsize=4096)
def _plural_head(label: str) -> bool:
    """Whether the head noun of a label is plural: the last word before a preposition, past a trailing participle
    ("shifts per month", "goals scored by its players": plural; "screen size": not)."""
    words = _label_words(label)
    head = next((words[:i] for i, w in enumerate(words) if w in _PREPS), words)
    while len(head) > 1 and (head[-1] in _PARTICIPLES or head[-1].endswith("ed")):
        head = head[:-1]
    return bool(head) and _is_plural(head[-1])


def is_plural(word: str) -> bool:
    """Whether a word is a plural noun (``hours``, ``lifts``; ``status``, ``analysis``, ``physics`` are not)."""
    return _is_plural(word)


@lru_cache(maxsize=4096)
def _is_plural(word: str) -> bool:
    """A plural noun (inflect's ``singular_noun`` finds a singular; ``-ss``, ``-us``, ``-is`` words are singular)."""
    if word.endswith(("ss", "us", "is", "ics")) or not word.endswith("s"):
        return False
    sing = _inflect_engine().singular_noun(word)
    return bool(sing) and sing != word  # "series", "species": the same word, read as singular ("its series is Pro")


def _frame_for(label: str, kind: str, unit_base: str | None, unit_kind: str | None, *, name: str = "", verb: str | None = None,
              event: str | None = None, of_label: str | None = None, person: bool = False, noun_of_row: str = "",
              role: bool = False, values: tuple[str, ...] = ()) -> Frame:
    """:func:`frame_for` before the plural check."""
    words = _label_words(label)
    np_ok = _noun_phrase_ok(words)
    simple = np_ok and not any(w in _PREPS for w in words)  # "a screen size of", never "a time on Mars of"
    noun = label if np_ok else None
    art = a_or_an(label) if np_ok else None
    if np_ok and (_plural_head(label) or _postmodified_plural(words)):  # "has shifts per month of", "has a lifts open of"
        art, simple = label, False  # are not English: plural heads get no "has a ... of"
    mass = bool(words) and words[-1] in _MASS and (len(words) == 1 or words[0] in ("total", "combined", "overall"))
    has_a = f"has {label if mass else art} of {{value}}" if simple else None  # "has revenue of", "has total funding of", "has an annual output of"
    if verb:  # the spec's own verbs; the label serves as a noun only when it is a plain noun phrase
        return Frame(tuple(v.strip() for v in verb.split("|") if v.strip()), noun if simple else None, kind == "date")
    if kind == "date":
        ev = _event_for(label, name, event)
        if ev:
            return Frame((f"{ev} on {{value}}",), None, True)
        if words and words[-1] in _PREPS:  # "in service since", "due by"
            return Frame((f"has been {label} {{value}}",) if words[-1] == "since" else (f"is {label} {{value}}",), None)
        if len(words) > 1 and present_verb(words[-1]):  # "season closes": a clause, never "its season closes are"
            return Frame((f"sees its {' '.join(words[:-1])} {base_verb(words[-1])} on {{value}}",), None)
        # no event verb: "has a concert date of", "is dated ... (label)" are label glue, said only in tables
        return Frame((has_a,) if has_a else (), noun, prose=False)
    if kind == "rank":
        by = of_label or re.sub(r"^rank\s*(by|in|within)?\s*", "", label) or "rank"
        return Frame((f"ranks No. {{value}} by {by}", f"sits at No. {{value}} by {by}", f"is ranked No. {{value}} by {by}"), None)
    if kind == "share":
        m = re.match(r"(?:share|percentage|proportion) of (.+)", label)
        if m:
            return Frame((f"accounts for {{value}} of {m.group(1)}", f"takes {{value}} of {m.group(1)}"), None)
        return Frame(tuple(x for x in (has_a, f"holds {art} of {{value}}" if np_ok else None) if x) or (f"is at {{value}} ({label})",), noun)
    if kind in ("category", "text"):
        if words and words[-1] in _PREPS:  # "trained in", "based in": the label and its value make the phrase
            verb = "was" if is_participle(words[0]) and words[0] not in _STATES else "is"
            return Frame((f"{verb} {label} {{value}}",), None)
        known = _category_frame(words, person, noun_of_row, values)
        if known is not None:
            return Frame(known, label)
        # a bare copula ("its island is Mull", "its series is gala") is no sentence a writer would write: tables only,
        # unless the values are people in a role ("its conductor is Lucas Jimenez")
        return Frame((), label, prose=role)
    if kind == "bool":
        return Frame((), None)
    # numbers
    vps: list[str] = []
    head = words[-1] if words else ""
    if unit_kind == "year" or unit_base == "calendar year":
        return _year_frame(words, label, name, event)
    if len(words) >= 2 and (words[-1] in _PARTICIPLES or words[-1].endswith("ed") or len(words) == 2 and _is_plural(words[0])) \
            and is_participle(words[-1]) \
            and not any(w in _PREPS for w in words) and words[0] not in _TIME_UNITS and words[0] not in ("number", "count", "year", "date"):
        # "units sold" -> "sold 106,000 units", "goals scored" -> "scored 14 goals", "people caught" -> "caught 3 people",
        # "water used" (litres) -> "used 40 litres of water"
        part, things = words[-1], " ".join(words[:-1])
        countable = _count_noun(words[-2])
        if unit_base is None and countable:
            obj = f"{{value}} {things}"
        elif unit_base is not None and (not countable or unit_kind in ("measure", "money")) and unit_base.split()[-1] != words[-2]:
            obj = f"{{value}} of {things}"
        elif unit_base is not None:
            obj = "{value}"
        else:
            obj = None
        if obj is not None:
            if part in _STATIVE:  # a state, not an event: "speaks 3 languages", never "spoke" or "has spoken"
                return Frame((f"{_STATIVE[part]} {obj}",), None)
            return Frame((f"{past_tense(part)} {obj}", f"has {part} {obj}"), None)
    if len(words) >= 4 and _is_plural(words[0]) and _count_noun(words[0]) and words[1] not in _PREPS and is_participle(words[1]) \
            and words[2] in _PREPS and (unit_base is None or unit_base.split()[-1] == words[0]):
        # "marathons run in 2036" -> "ran 2 marathons in 2036", "goals scored at home" -> "scored 9 goals at home"
        raw = label.split()
        rest = " ".join(raw[2:] if len(raw) == len(words) else words[2:])  # "in Europe" keeps its case
        return Frame((f"{past_tense(words[1])} {{value}} {words[0]} {rest}",), None)
    if words in (["headcount"], ["employees"], ["staff", "count"], ["workforce"], ["staff", "size"]):  # "employs 1,452 people"
        return Frame(("employs {value}" if unit_base else "employs {value} people",), None)
    if words[:2] == ["number", "of"] and len(words) > 2 and words[2] in ("employees", "staff", "workers"):
        return Frame(("employs {value}" if unit_base else f"employs {{value}} {words[2]}",), None)
    if words[:2] == ["number", "of"] and len(words) > 2:
        things = " ".join(words[2:])
        obj = f"{{value}} {things}" if unit_base is None else "{value}"
        vps = [f"has {obj}"]  # never "counts 2 berths" or "lists 29 sailings": a count is had
        return Frame(tuple(vps), None)
    if words == ["count"]:
        return Frame(("has a count of {value}",), None)
    if words and words[-1] == "count" and len(words) > 1 and unit_base is None:
        things = plural_noun(" ".join(words[:-1]))
        return Frame((f"has {{value}} {things}",), None)
    if len(words) == 2 and words[1] == "age" and unit_base in ("years", "year"):  # "patient age": "is 97 years old"
        return Frame(("is {value} old",), None)
    if words and words[0] == "age":
        rest = " ".join(words[1:])
        old = "{value} old" if unit_base in ("years", "year") else "{value}"
        if rest.startswith("at "):
            aged = "aged {value}"
            return Frame((f"was {old} at the {rest[3:]}", f"was {aged} at the {rest[3:]}", f"was {old} when the {rest[3:]} was taken"
                          if rest[3:] in ("census", "survey", "count") else f"had reached {{value}} of age at the {rest[3:]}"), None)
        return Frame((f"is {old}",) if not rest else (f"is {old} ({label})",), None)
    if words and words[0] in _TIME_UNITS:
        v = "{value}" if unit_base else f"{{value}} {words[0]}"  # "11 days" from the unit, else from the label
        if len(words) == 1:  # "days": a count, never "listed with 11 days for days"
            return Frame((f"has logged {v}", f"has {v} on record") if person else (f"has {v} on record", f"spans {v}"), None)
        rest = " ".join(words[1:])
        if words[1] in ("without", "with", "under", "over"):
            return Frame((f"went {v} {rest}", f"spent {v} {rest}"), None)
        if words[1] == "of":  # "hours of clear sky": had them, never "has put in" (that is labour)
            return Frame((f"has {v} {rest}",), None)
        if words[1] in ("after", "before"):  # "days after launch": what came then the label does not say: tables only
            return Frame((f"came {v} {rest}",), None, prose=False)
        if words[1] == "on":
            return Frame((f"has spent {v} {rest}",), None)
        if words[1] in ("until", "till"):  # "days until next inspection": a count-down the row does not "have": tables only
            return Frame((f"has {v} {rest}",), None, prose=False)
        if words[1] == "per":  # "hours per week": worked, open, flown? the label does not say: tables only
            return Frame((f"has {v} {rest}",), None, prose=False)
        return Frame((f"has {v} {rest}",), None)  # "days to maturity", "days open", "hours daily"
    if len(words) >= 2 and words[0] == "year" and words[1].endswith("ed"):
        part = words[1]
        return Frame((f"{part} in {{value}}" if part in INTRANSITIVE_VERBS else f"was {part} in {{value}}",), None)
    per = words.index("per") if "per" in words else -1
    if unit_kind == "money" and per > 0 and words[per - 1] in ("price", "fare", "fee", "cost", "rent", "rate") and per < len(words) - 1:
        # "price per half litre": "costs €4.60 per half litre"; a person's "rate per word": "charges €0.126 per word"
        vps = [f"{'charges' if person else 'costs'} {{value}} {' '.join(words[per:])}"]
    elif unit_kind == "percent" and label.lower() in ("alcohol by volume", "abv", "alcohol", "alcohol content", "strength"):
        vps = ["is {value} ABV"]
    elif words == ["opening", "hours"] and unit_base is not None:
        vps = ["is open {value}"]
    elif unit_kind == "money" and (words in (["amount"], ["value"], ["grant", "amount"], ["award", "amount"]) or len(words) == 2 and head == "value"
                                   and words[0] in (noun_of_row.lower().split()[-1:] + ["contract", "deal", "order", "market", "total", "sale", "trade"])):
        vps = ["is worth {value}"]  # "has an amount of €474,370" is no sentence
    elif unit_kind == "money" and head in ("price", "fare", "fee", "cost", "rent", "tuition", "msrp"):
        vps = ["costs {value}", "is priced at {value}"] if words == [head] or words[0] in (
            "launch", "list", "retail", "base", "average", "ticket", "unit", "sale", "selling", "menu", "entry", "admission", "shelf") else []
    elif head in ("revenue", "sales", "income", "profit", "turnover", "earnings") and unit_kind == "money":
        vps = [f"reported {label} of {{value}}", f"brought in {{value}} in {label}"]
    elif head in ("shipments", "shipped"):
        vps = ["shipped {value}"]
    elif words[-2:] == ["units", "sold"] or head == "sold":
        vps = ["sold {value}"]
    elif head == "valuation":
        vps = ["is valued at {value}"]
    elif head == "population" and unit_base in ("people", "residents", "inhabitants", None):
        vps = ["is home to {value}" if unit_base else "has a population of {value}"]
    elif head == "capacity" and unit_base in ("people", "seats", "passengers", "beds", "guests", "visitors", "spectators"):
        vps = ["has {value}"] if unit_base == "seats" else ["can hold {value}", "has room for {value}"]  # never "has room for 888 seats"
    elif head in ("altitude", "elevation") and unit_kind == "measure" and len(words) == 1:
        vps = ["stands at an altitude of {value}" if head == "altitude" else "stands at an elevation of {value}"]  # never "measures 284 m"
    elif head in _ADJECTIVE_OF and unit_kind == "measure" and (words == [head] or words[:-1] == noun_of_row.lower().split()[-1:]
                                                             or len(words) == 2 and words[0] in ("overall", "total", "body", "hull", "tower")):
        # the row's own size as an adjective: "is 1.8 km long" (never "the piste has a piste length of"), "is 45 cm tall"
        adj = _ADJECTIVE_OF[head]
        if head == "height":
            adj = "tall" if person or noun_of_row.lower().split()[-1:] and noun_of_row.lower().split()[-1] in _TALL else "high"
        vps = [f"is {{value}} {adj}"]
    elif head in _DIMENSIONS and unit_kind == "measure":
        # "measures 30 m" for the row's own size; "snow depth", "wave height" are not the observation's or storm's size
        # ("total piste length" is the pistes', not the resort's: "has a total piste length of 43.6 km")
        vps = ["measures {value}"] if words == [head] or (len(words) == 2 and words[0] in ("overall", "total", "body", "hull", "tower")) else []
    elif head in ("duration", "runtime") and unit_kind == "time":
        vps = ["lasts {value}", "runs for {value}"]
    elif head in ("score", "rating") and unit_kind is None and len(words) == 1:  # "Metacritic score": "has a Metacritic score of 66"
        vps = ["scores {value}" if head == "score" else "is rated {value}"]
    elif head in ("weight", "mass") and unit_kind == "measure" and len(words) <= 2 and words[0] not in ("payload", "cargo", "load"):
        vps = ["weighs {value}"]
    elif head in ("employees", "staff", "workers", "headcount"):
        vps = ["employs {value}" if unit_base else f"employs {{value}} {'people' if head == 'headcount' else head}"]
    if words and words[0].endswith("est") and len(words) > 1 and _superlative(words[0]) and not vps:
        return Frame((), label)  # "its steepest gradient is 48%", never "has a steepest gradient of 48%"
    if head in ("quantity", "amount", "volume", "total", "figure", "value") and unit_kind not in ("money", "measure") and not vps:
        return Frame((has_a,) if has_a else (), noun, prose=False)  # "has a quantity of 145 plants": tables only
    if head in ORDINAL_HEADS and unit_base is None and not vps:  # "has a finishing position of 12": a place, not an amount
        return Frame((has_a,) if has_a else (), noun, prose=False)
    if words and _is_plural(words[0]) and len(words) > 1 and words[1] in ("this", "last", "next", "each", "so"):
        return Frame((), noun, prose=False)  # "rescues this season": never "has a rescues this season of 0"
    if has_a and not vps:  # a verb when English has one ("weighs 100.5 kg", "is 1.8 km long"), never "has a weight of" beside it  # the neutral construction alone: "is listed with", "shows" and "reports" a value were hedges, not variety
        vps.append(has_a)
    if not vps and unit_base is None and np_ok and (_plural_head(label) or _postmodified_plural(words)):
        # a plural noun counts what the row has: "has 12 lifts", "has 14 shifts per month", "has 13 lifts open",
        # never "its lifts are 12" or "its lifts open is 13"
        return Frame((f"has {{value}} {label}",), None)  # "has 50 points and 16 wins": one "has" for both
    if not vps and unit_base is not None and words and words[-1] == unit_base.lower() and _is_plural(words[-1]) \
            and all(w in ("annual", "yearly", "daily", "weekly", "monthly", "total") or w == words[-1] for w in words):
        # the unit counts the label's own things: "visitors" in visitors -> "has 109,543 visitors", "annual visitors"
        # -> "has 234,063 visitors a year", never "its visitors are 109,543 visitors"
        every = {"annual": " a year", "yearly": " a year", "daily": " a day", "weekly": " a week", "monthly": " a month"}
        return Frame((f"has {{value}}{next((every[w] for w in words if w in every), '')}",), None)
    if not vps and not np_ok:  # no clause fits: the neutral possessive, never "is listed with 11 for <label>"
        return Frame((), f"figure for {label}", prose=False)
    # a number with a noun alone ("its ascent from the valley is 1,260 m") is said in tables only
    return Frame(tuple(vps), noun, prose=bool(vps))


ORDINAL_HEADS = frozenset({"position", "place", "placing", "placement", "finish", "round", "stage", "lap", "heat", "seed", "seeding", "board", "leg", "matchday",
                  "gameweek", "week", "grade", "level", "tier", "floor", "division", "class", "rank", "ranking", "order", "number"})
"""Heads of labels that number a place in an order (a finishing position, a round, a floor): no amount to compare."""

# participles of states, not events: "languages spoken" -> "speaks 3 languages"
_STATIVE = {"spoken": "speaks", "owned": "owns", "held": "holds", "known": "knows", "offered": "offers",
            "stocked": "stocks", "covered": "covers", "employed": "employs"}
_PLACE_HEADS = {"city", "town", "village", "country", "county", "region", "state", "province", "district", "island",
                "municipality", "borough", "canton", "prefecture", "location", "neighbourhood", "neighborhood", "suburb"}
_TYPE_HEADS = {"type", "kind", "class"}
_BY_HEADS = {"manufacturer": "is made by", "maker": "is made by", "builder": "was built by", "architect": "was designed by",
             "designer": "was designed by", "publisher": "is published by", "developer": "was developed by", "operator": "is operated by",
             "breeder": "was bred by", "distributor": "is distributed by", "supplier": "is supplied by", "producer": "is produced by",
             "author": "was written by", "composer": "was composed by", "director": "was directed by", "grower": "is grown by"}
"""Category heads naming who made or runs a row: "is made by {value}"."""
_STYLE_HEADS = {"style", "genre", "category", "variety", "breed", "cuisine", "format"}


@lru_cache(maxsize=1)
def _countries() -> frozenset[str]:
    """Country names (Faker's English address provider)."""
    from faker.providers.address.en_US import Provider

    return frozenset(Provider.countries) | {"United States", "United Kingdom", "Netherlands", "Czech Republic", "Czechia"}


def _category_frame(words: list[str], person: bool, noun_of_row: str, values: tuple[str, ...] = ()) -> tuple[str, ...] | None:
    """The verb phrases a category column is sure of, or ``None``: where a row is ("is in Bayreuth", "is on Mull"; a
    person "is from Austria", "is from Germany" for a nationality among ``values``), what kind it is ("is a retailer" for
    a type of buyer, "is a passenger elevator" for an elevator's type, "is a Pils beer" for a style, "is a senior
    firefighter" for a rank whose ``values`` are kinds of the row: :func:`names_a_thing`)."""
    if not words:
        return None
    head = words[-1]
    if person and words in (["nationality"], ["citizenship"]) and values and all(v in _countries() for v in values):
        return ("is from {value}",)  # a nationality given as a country ("Germany", never "German"): "is from Germany"
    if len(words) <= 2 and head in _PLACE_HEADS and (len(words) == 1 or words[0] in ("home", "host", "headquarters")):
        if person:
            return ("is from {value}",) if head in ("country", "city", "town", "region", "island", "village") else None
        return ("is on {value}",) if head == "island" else ("is in {value}",)
    row = noun_of_row.lower()
    if head in _TYPE_HEADS and (len(words) == 1 or words[:-1] == row.split()[-1:]):
        # the row's noun after the value ("is a passenger elevator", "is an indoor swimming pool", "is a catamaran vessel"),
        # which :func:`fill` drops after a value that ends with it ("is a chairlift", "is a drag lift")
        return (f"is {{a}} {{value}} {row}",) if row else ("is {a} {value}",)
    if len(words) >= 3 and words[0] in _TYPE_HEADS and words[1] == "of":
        return ("is {a} {value}",)  # "type of buyer": its values are kinds of buyer ("is a retailer")
    if head in _STYLE_HEADS and len(words) == 1 and row and not person:
        return (f"is {{a}} {{value}} {row}",)  # "is a Pils beer", "is a womenswear collection"
    if len(words) <= 2 and head in _BY_HEADS and (len(words) == 1 or words[0] in ("original", "main", "lead")) and not person:
        return (f"{_BY_HEADS[head]} {{value}}",)  # "manufacturer": "is made by TK Elevator", never "whose manufacturer is"
    if values and row and all(names_a_thing(v) for v in values) and any(v.lower().split()[-1] == row.split()[-1] for v in values):
        return ("is {a} {value}",)  # a rank of "senior firefighter", "squad boss": a firefighter's kind, a noun of its own
    return None


def _year_frame(words: list[str], label: str, name: str, event: str | None) -> Frame:
    """A calendar year's frame: the event the label names, in the year ("year built" -> "was built in 1994", "year of
    debut" -> "debuted in 2009", "founded" -> "was founded in 1950"); a year with no event is said in tables only."""
    rest = [w for w in words if w not in ("year", "of", "the", "in")]
    ev = _event_for(" ".join(rest), name, event) if rest else None
    if ev is None and rest and is_participle(rest[-1]) and len(rest) <= 2:
        adv = f"{rest[0]} " if len(rest) == 2 else ""
        ev = f"{adv}{rest[-1]}" if rest[-1] in INTRANSITIVE_VERBS else f"was {adv}{rest[-1]}"
    if ev is None:
        return Frame((), label if _noun_phrase_ok(words) else None, prose=False)
    return Frame((f"{ev} in {{value}}",), None)


def _postmodified_plural(words: list[str]) -> bool:
    """A plural noun and an adjective after it (``lifts open``, ``seats available``, ``people injured``): a count."""
    return len(words) == 2 and _is_plural(words[0]) and _postmodifier(words[1])


@lru_cache(maxsize=1024)
def _postmodifier(word: str) -> bool:
    """An adjective or participle that may follow a noun (``open``, ``available``, ``remaining``), not a noun (``volume``)."""
    from lemminflect import getAllLemmas

    lemmas = getAllLemmas(word)
    return word in ("free", "left", "active") or "NOUN" not in lemmas and ("ADJ" in lemmas or "VERB" in lemmas and word.endswith("ing"))


@lru_cache(maxsize=4096)
def _count_noun(word: str) -> bool:
    """A plural count noun (``people``, ``units``, ``fish``): inflect finds a singular for it."""
    return bool(_inflect_engine().singular_noun(word)) and not word.endswith(("ss", "us", "is"))


@dataclass
class Referent:
    """How a page refers to one row: the name first, then pronouns and definite descriptions.

    Attributes:
        name: the row's label (``Ares Dome``).
        noun: what the row is (``habitat``).
        person: a person: never "it"; later mentions use the surname or the description.
        kind_word: a classifying modifier for the description (``medic``: "the medic"), optional.
    """

    name: str
    noun: str
    person: bool = False
    kind_word: str | None = None
    mentions: int = field(default=0)

    def subject(self, rng, first: bool = False) -> str:
        """The subject of the next sentence: the name on the first mention (or when ``first``), then by seed
        a pronoun, the surname (people), the description or the name again."""
        self.mentions += 1
        if first or self.mentions == 1:
            return self.name
        options = [self.name, f"the {self.noun}", f"the {self.noun}"]  # never "this beer": a pointer, not a description
        if self.kind_word:  # "the technician", "the flagship phone model"
            options.append(f"the {self.kind_word}" if self.person else f"the {self.kind_word} {self.noun}")
        if self.person:
            parts = self.name.split()
            if len(parts) > 1 and parts[-1][:1].isupper():
                options += [parts[-1], parts[-1]]
        else:
            options += ["it", "it", "it"]
        return rng.choice(options)

    def possessive(self, subject: str) -> str:
        """The possessive of a subject form (:func:`possessive`)."""
        return possessive(subject)


def possessive(subject: str) -> str:
    """The possessive of a name or subject form: ``it`` -> ``its``, ``Ares Dome`` -> ``Ares Dome's``, ``Davies`` -> ``Davies'``."""
    if subject in ("it", "It"):
        return subject + "s"
    return subject + ("'" if subject.endswith("s") else "'s")


def person_table(noun: str, label_faker: bool) -> bool:
    """Whether a table's rows are people: its naming column is a Faker person name, or its noun is a person noun."""
    return label_faker or noun.lower() in _PERSON_NOUNS or noun.lower().split()[-1] in _PERSON_NOUNS


def is_plural_label(label: str) -> bool:
    """Whether a column label's head noun is plural ("draws", "shifts per month"): it takes "are", not "is"."""
    return _plural_head(label)
