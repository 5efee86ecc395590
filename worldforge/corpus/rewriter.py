"""An LLM rewriter of corpus pages: the prose genres rewritten by a model, accepted only when the check passes.

The generated pages state table cells in template sentences. :func:`rewrite_pages` sends each page of
a prose genre (:data:`PROSE_GENRES`) to an OpenAI-compatible chat endpoint (``vllm serve`` first of
all) with its facts (label and stated text) and its generated draft, asking for the page as its site
would publish it. The reply is read back (:func:`check_reply`):

* every fact's ``value_text`` must occur verbatim in it (else *dropped fact*);
* every number and date it states (digits with their currency, scale word or ``%``; dates in the
  formats of :data:`~worldforge.corpus.quantity.DATE_FORMATS`) must occur in the draft or in a fact
  text, a date may also restate a date of the draft in another format (else *unregistered value*);
* its first paragraph becomes the page's lead and must hold every ``lead`` fact (else *lead fact moved*);
* every derived claim's phrase (:mod:`worldforge.corpus.claims`: a rank, a comparison, a change, a gap) must occur
  verbatim (else *dropped claim*), and every direction word it writes (:data:`~worldforge.corpus.claims.CUE_WORDS`:
  higher/lower, more/fewer, largest/smallest, up/down, before/after, above/below, twice/half ...) must stand in a
  draft sentence with the same word that shares a number, a date or a name with it (else *changed claim*): a reply
  that turns "after" into "before" or "largest" into "smallest" while keeping every number is rejected.

A reply with problems is sent back with them listed, up to ``max_rounds`` requests per page; a page
still failing is kept as generated (rejection sampling), so the corpus never states a value the
tables do not hold. Structured genres (infoboxes, datasets, rankings, timelines, comparisons,
profiles) are read by the scripted oracle through their tables and lists and are never sent.
Replies are cached by (prompt hash, model) in a :class:`~worldforge.llm.cache.KVCache` file
(``<warehouse>/cache/corpus-writer.sqlite`` by default), so a second build sends no request.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field

from worldforge.corpus.claims import cue_counts, cue_words
from worldforge.corpus.generate import Fact, Page
from worldforge.corpus.quantity import parse_date
from worldforge.tally import Tally

__all__ = [
    "PROSE_GENRES", "Problem", "RewriterConfig", "RewriterReport", "changed_cues", "check_reply", "clean_reply", "mentions", "resolve_rewriter", "rewriter_config", "rewrite_corpus_pages",
    "rewrite_pages",
]

PROSE_GENRES = ("news", "press_release", "forum", "rumor")
"""Page types the writer rewrites; every other genre is read through its Markdown tables and lists and kept as generated."""

WRITERS = ("template", "openai")
"""Writer kinds: ``template`` (the generated pages as they are) and ``openai`` (an OpenAI-compatible endpoint)."""

_SYSTEM = (
    "You are a web writer. You receive a draft page of a website and the facts it states. Rewrite the draft as that site "
    "would publish it: natural, varied prose in the site's voice, in Markdown. Rules: write every fact value exactly as "
    "given, character for character (same digits, units, currency signs and date format); keep the values marked "
    "'first paragraph' in the first paragraph; add no other numbers or dates; keep the links. Reply with the page body "
    "only: no title line, no preamble, no code fences."
)
_DRAFT_START, _DRAFT_END = "--- draft ---", "--- end of draft ---"

_MONTH = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?"
          r"|Nov(?:ember)?|Dec(?:ember)?)\.?")
_DATE = re.compile(rf"\b(?:{_MONTH}\s\d{{1,2}},?\s\d{{4}}|\d{{1,2}}\s{_MONTH}\s\d{{4}}|\d{{4}}-\d{{2}}-\d{{2}})(?![\w-])")
_NUMBER = re.compile(r"(?<![\w.])(?:US\$|[A-Z]{0,2}[$€£¥₹₩])?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
                     r"(?:\s?(?:trillion|billion|million|thousand|bn|mn|tn|k)\b|(?:st|nd|rd|th)\b|(?![\w]))(?:\s?%)?")
_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_LIST_MARKER = re.compile(r"^(\s*)\d+[.)](?=\s)", re.M)
_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_FENCE = re.compile(r"^```[\w-]*[ \t]*\n(.*?)\n?```[ \t]*$", re.S)


class RewriterConfig(BaseModel):
    """How pages are rewritten by a model.

    Attributes:
        base_url: the endpoint's API root, e.g. ``http://127.0.0.1:8000/v1`` (default ``WORLDFORGE_VLLM_URL``).
        model: the served model; empty: ``WORLDFORGE_VLLM_MODEL``, else the first one ``GET /models`` lists.
        api_key: the bearer token (vLLM ignores it unless started with ``--api-key``).
        max_rounds: requests per page at most: the first and the repairs after a failed check.
        concurrency: requests in flight at most.
        max_tokens: the most tokens per reply.
        temperature: sampling temperature.
        seed: sampling seed sent with every request.
        timeout_s: seconds per request attempt.
        limit: rewrite at most this many prose pages over all corpora (interleaved by genre); ``None``: all.
        cache_path: the reply cache (SQLite); ``None``: ``<warehouse>/cache/corpus-writer.sqlite``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str = ""
    model: str = ""
    api_key: str = "EMPTY"
    max_rounds: int = Field(2, ge=1)
    concurrency: int = Field(8, ge=1)
    max_tokens: int = Field(1024, ge=16)
    temperature: float = Field(0.7, ge=0)
    seed: int | None = 0
    timeout_s: float = Field(120.0, gt=0)
    limit: int | None = Field(None, ge=0)
    cache_path: str | None = None


def rewriter_config(writer: str = "template", **options) -> RewriterConfig | None:
    """The writer a ``--writer`` name means: ``None`` for ``template`` (pages as generated), a :class:`RewriterConfig` for ``openai``.

    Args:
        writer: ``template`` or ``openai``.
        **options: :class:`RewriterConfig` fields; ``None`` values take the defaults (``base_url``:
            :data:`~worldforge.llm.openai_backend.DEFAULT_BASE_URL`; ``model``: empty, the first one served). The
            edges pass ``WORLDFORGE_VLLM_URL`` and ``WORLDFORGE_VLLM_MODEL``.

    Raises:
        ValueError: an unknown writer, or a bad option (pydantic's validation error is a ``ValueError``).
    """
    if writer not in WRITERS:
        raise ValueError(f"unknown writer {writer!r}; use one of: {', '.join(WRITERS)}")
    if writer == "template":
        return None
    from worldforge.llm.openai_backend import DEFAULT_BASE_URL

    options = {k: v for k, v in options.items() if v is not None}
    options.setdefault("base_url", DEFAULT_BASE_URL)
    return RewriterConfig(**options)


def resolve_rewriter(config: RewriterConfig) -> RewriterConfig:
    """Check the writer's server once (``GET /models``) and settle its model: the config with ``model`` set to the one served.

    Raises:
        BackendError: the server is unreachable, answers with an error, serves no model, or does not serve ``config.model``.
    """
    from worldforge.llm.openai_backend import OpenAIBackend

    backend = OpenAIBackend(base_url=config.base_url, model=config.model, api_key=config.api_key, timeout_s=config.timeout_s, max_retries=2)
    backend.load()
    return config.model_copy(update={"model": backend.model})


@dataclass(frozen=True)
class Problem:
    """One thing a reply got wrong.

    Attributes:
        kind: ``dropped fact``, ``unregistered value``, ``lead fact moved``, ``dropped claim``, ``changed claim`` or ``empty reply``.
        detail: the value concerned, as the reply or the fact writes it.
    """

    kind: str
    detail: str


@dataclass
class RewriterReport:
    """What the writer did: pages in = written by the model + repaired + kept as generated (by reason).

    Attributes:
        inputs: pages in.
        written: pages whose first reply passed the check.
        repaired: pages whose reply passed on a later round.
        kept: ``{reason: pages}`` kept as generated: ``structured genre``, ``beyond the page limit``,
            ``rejected after N rounds: <last problem kind>``, ``request failed``.
        requests: chat requests sent (cache misses).
        cached: replies read from the cache.
        failures: ``{url: reason}`` of the requests that failed (the server's or the client's reason).
    """

    inputs: int = 0
    written: int = 0
    repaired: int = 0
    kept: Counter = field(default_factory=Counter)
    requests: int = 0
    cached: int = 0
    failures: dict[str, str] = field(default_factory=dict)

    @property
    def tally(self) -> Tally:
        """As a :class:`~worldforge.tally.Tally`: kept = written by the model (repaired included), dropped = kept as generated, by reason."""
        return Tally.of(self.inputs, self.written + self.repaired, self.kept, unit="pages", kept_as="written by the model",
                        dropped_as="kept as generated")

    @property
    def balanced(self) -> bool:
        """Pages in = written + repaired + kept as generated."""
        return self.inputs == self.written + self.repaired + sum(self.kept.values())

    def summary(self) -> str:
        """One line, e.g. ``pages in 1,500 = written by the model 120 + repaired 30 + kept as generated 1,350 (structured genre: 900, ...); 310 requests, 0 cached``."""
        reasons = ", ".join(f"{r}: {n:,}" for r, n in sorted(self.kept.items(), key=lambda kv: (-kv[1], kv[0])))
        line = (f"pages in {self.inputs:,} = written by the model {self.written:,} + repaired {self.repaired:,} "
                f"+ kept as generated {sum(self.kept.values()):,}")
        return line + (f" ({reasons})" if reasons else "") + f"; {self.requests:,} requests, {self.cached:,} cached"

    def to_dict(self) -> dict:
        """``{"inputs", "written", "repaired", "kept": {reason: n}, "requests", "cached", "balanced"}``."""
        return {"inputs": self.inputs, "written": self.written, "repaired": self.repaired, "kept": dict(sorted(self.kept.items())),
                "requests": self.requests, "cached": self.cached, "balanced": self.balanced}


# -- reading a reply ------------------------------------------------------------------------------


def clean_reply(text: str) -> str:
    """A reply without ``<think>…</think>`` blocks (an unclosed one: everything after it), without a code fence
    around the page and without a leading ``# title`` line; stripped."""
    text = _THINK.sub("", text)
    if re.search(r"<think>", text, re.I):
        text = re.split(r"<think>", text, flags=re.I)[0]
    text = re.sub(r"^\s*</think>", "", text).strip()  # templates that open the block in the prompt
    if m := _FENCE.match(text):
        text = m.group(1).strip()
    lines = text.split("\n")
    if lines and lines[0].startswith("# "):
        text = "\n".join(lines[1:]).strip()
    return text


def first_paragraph(body: str) -> str:
    """The first paragraph of a Markdown body (up to the first blank line), stripped: a page's lead."""
    return re.split(r"\n\s*\n", body.strip(), maxsplit=1)[0].strip()


def mentions(text: str) -> list[tuple[str, date | None]]:
    """The numbers and dates a Markdown text states, in order, as ``(text, date or None)``.

    Dates: any of :data:`~worldforge.corpus.quantity.DATE_FORMATS` (also full or dotted month
    names). Numbers: digit runs with thousands separators and decimals, with a currency sign
    before (``$``, ``US$``, ``€`` ...) and a scale word (``million``, ``bn`` ...), an ordinal
    suffix or ``%`` after; digits inside words (``S30``, ``mars-2030pedia``), link targets and
    the markers of ordered lists are not mentions.
    """
    text = _LIST_MARKER.sub(r"\1", _LINK_TARGET.sub("]", text))
    found: list[tuple[int, str, date | None]] = []
    spans = []
    for m in _DATE.finditer(text):
        d = parse_date(m.group(0))
        if d is not None:
            found.append((m.start(), m.group(0), d))
            spans.append((m.start(), m.end()))
    for m in _NUMBER.finditer(text):
        if not any(a <= m.start() < b for a, b in spans):
            found.append((m.start(), m.group(0).strip(), None))
    return [(t, d) for _, t, d in sorted(found, key=lambda x: x[0])]


def _standalone(needle: str, haystack: str) -> bool:
    """``needle`` occurs in ``haystack`` not as part of a longer word or number."""
    return re.search(rf"(?<![\w.]){re.escape(needle)}(?![\w]|[.,]\d)", haystack) is not None


def check_reply(body: str, page: Page, draft: str | None = None) -> list[Problem]:
    """What a cleaned reply (:func:`clean_reply`) gets wrong as the body of ``page``; empty when it may replace the draft.

    Args:
        body: the cleaned reply.
        page: the generated page (its facts and, unless ``draft`` is given, its body as the draft).
        draft: the draft the model was given (default the page's article, its ``body_md``).

    Returns:
        Problems in order: empty reply; facts whose text is not verbatim in the reply (``dropped fact``); numbers and
        dates neither in the draft nor in a fact text (``unregistered value``); lead facts not in the first
        paragraph (``lead fact moved``); derived claims not verbatim (``dropped claim``); direction words no draft
        sentence supports (``changed claim``, :func:`changed_cues`).
    """
    if not body.strip():
        return [Problem("empty reply", "")]
    draft = page.body_md if draft is None else draft
    problems = [Problem("dropped fact", f.value_text) for f in _distinct(page.facts) if f.value_text not in body]
    known = [draft] + [f.value_text for f in page.facts]
    dates = {d for t in known for _, d in mentions(t) if d is not None}
    seen = set()
    for text, d in mentions(body):
        if text in seen:
            continue
        seen.add(text)
        if (d is not None and d in dates) or any(_standalone(text, k) for k in known):
            continue
        problems.append(Problem("unregistered value", text))
    lead = first_paragraph(body)
    problems += [Problem("lead fact moved", f.value_text) for f in _distinct(page.facts) if f.section == "lead" and f.value_text in body
                 and f.value_text not in lead]
    problems += [Problem("dropped claim", c.text) for c in page.claims if c.text not in body]
    problems += [Problem("changed claim", w) for w in changed_cues(body, draft)]
    return problems


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_NAME = re.compile(r"(?<=[\w,;:] )[A-Z][\w'’-]*(?: [A-Z0-9][\w'’-]*)*")


def _anchors(sentence: str) -> set[str]:
    """What ties a sentence to the world: the numbers and dates it states and the names inside it (capitalised words
    after its first word)."""
    return {t for t, _ in mentions(sentence)} | set(_NAME.findall(sentence))


def changed_cues(body: str, draft: str) -> list[str]:
    """Direction words of a reply (:data:`~worldforge.corpus.claims.CUE_WORDS`) that no draft sentence supports, in
    order, each once: a sentence's words are supported when a draft sentence that shares a number, a date or a name with
    it holds them in the same order (for a sentence with none of those, when the draft holds each word at all); a swap
    inside one sentence ("pin down when it wrapped up" -> "pin up when it wrapped down") changes the order."""
    drafted = [(cue_words(s_), _anchors(s_)) for s_ in _SENTENCE_END.split(draft) if s_.strip()]
    anywhere = set(cue_counts(draft))
    bad: list[str] = []
    for sent in _SENTENCE_END.split(body):
        cues = cue_words(sent)
        if not cues:
            continue
        anchors = _anchors(sent)
        if not anchors:
            wrong = [w for w in cues if w not in anywhere]
        else:  # the same direction words in the same order as in a draft sentence about the same things
            near = [c for c, a in drafted if anchors & a]
            wrong = [] if any(_subsequence(cues, c) for c in near) else [w for w in cues if not any(w in c for c in near)] or cues[:1]
        bad += [w for w in wrong if w not in bad]
    return bad


def _subsequence(small: list[str], big: list[str]) -> bool:
    it = iter(big)
    return all(w in it for w in small)


def _distinct(facts: list[Fact]) -> list[Fact]:
    """Facts with distinct ``(value_text, section)``, in order."""
    seen, out = set(), []
    for f in facts:
        if (f.value_text, f.section) not in seen:
            seen.add((f.value_text, f.section))
            out.append(f)
    return out


# -- the conversation -----------------------------------------------------------------------------


def prompt_messages(page: Page, label: Callable[[Fact], str] | None = None) -> list[dict]:
    """The first request for a page: the system rules, then the site, genre, title, the facts (``label: text``, lead
    facts marked ``first paragraph``) and the draft between ``--- draft ---`` and ``--- end of draft ---``."""
    name = label or (lambda f: f.column_name.replace("_", " "))
    seen, lines = set(), []
    for f in page.facts:
        item = (name(f), f.value_text, f.section == "lead")
        if item not in seen:
            seen.add(item)
            lines.append(f"- {item[0]}: {item[1]}" + (" (first paragraph)" if item[2] else ""))
    user = (f"Site: {urlparse(page.url).netloc}\nGenre: {page.page_type.replace('_', ' ')}\nTitle: {page.title}\n\n"
            f"Facts (write each value exactly as given):\n" + ("\n".join(lines) or "(none)")
            + ("\n\nComparisons (write each exactly as given):\n" + "\n".join(f"- {t}" for t in dict.fromkeys(c.text for c in page.claims))
               if page.claims else "")
            + f"\n\n{_DRAFT_START}\n{page.body_md}\n{_DRAFT_END}")
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}]


def repair_message(problems: list[Problem]) -> dict:
    """The user turn that sends a failed reply back: its problems, grouped by kind."""
    by_kind: dict[str, list[str]] = {}
    for p in problems:
        by_kind.setdefault(p.kind, []).append(p.detail)
    say = {
        "dropped fact": "These fact values are missing or changed; write each exactly as given",
        "unregistered value": "These numbers or dates are neither facts nor in the draft; remove them",
        "lead fact moved": "These values must be in the first paragraph",
        "dropped claim": "These comparisons are missing or changed; write each exactly as given",
        "changed claim": "These direction words change what the draft says (a rank, a comparison, an order in time); keep the draft's",
        "empty reply": "The reply was empty; write the page",
    }
    lines = [f"- {say[k]}: " + ", ".join(repr(v) for v in vs if v) if any(vs) else f"- {say[k]}." for k, vs in by_kind.items()]
    return {"role": "user", "content": "Your page breaks the rules:\n" + "\n".join(lines) + "\nReply with the corrected page body only."}


def _selected(pages: list[Page], limit: int | None) -> list[int]:
    """Indexes of the prose pages to send: all, or the first ``limit`` taken in turn from each genre."""
    by_genre: dict[str, list[int]] = {}
    for i, p in enumerate(pages):
        if p.page_type in PROSE_GENRES:
            by_genre.setdefault(p.page_type, []).append(i)
    if limit is None:
        return sorted(i for ids in by_genre.values() for i in ids)
    out: list[int] = []
    queues = [list(ids) for ids in by_genre.values()]
    while len(out) < limit and any(queues):
        for q in queues:
            if q and len(out) < limit:
                out.append(q.pop(0))
    return sorted(out)


def rewrite_pages(
    pages: list[Page],
    config: RewriterConfig,
    label: Callable[[Fact], str] | None = None,
    progress: Callable[[int, int], None] | None = None,
    cache_path: str | Path | None = None,
) -> tuple[list[Page], RewriterReport]:
    """Rewrite the prose pages of a corpus with a model, keeping each page only if its reply passes :func:`check_reply`.

    Pages with the same first request (the same title, draft and facts) share one conversation. Each round sends
    the pages still open at once (``config.concurrency`` in flight), replies are cached as they come, and a failed
    reply goes back with its problems until ``config.max_rounds`` requests were made for the page.

    Args:
        pages: the generated pages (any corpora; order is kept).
        config: the endpoint and the limits.
        label: a fact's label in the prompt (default: its column name in words).
        progress: called with ``(pages done, pages in)`` as pages are settled.
        cache_path: the reply cache (overridden by ``config.cache_path``; one of them is required).

    Returns:
        The pages, rewritten ones replaced (same url, title, published date and facts; new lead and body), and the report.

    Raises:
        BackendError: a request had to be sent and the server is unreachable, answers ``GET /models`` with an error,
            or does not serve ``config.model``. Nothing is returned then: callers write nothing.
        ValueError: no cache path.
    """
    from worldforge.llm.base import Completion, Failure, GenerationParams, WorldModelRequest
    from worldforge.llm.cache import KVCache
    from worldforge.llm.openai_backend import OpenAIBackend

    where = config.cache_path or cache_path
    if where is None:
        raise ValueError("the corpus writer needs a cache path")
    report = RewriterReport(inputs=len(pages))
    out = list(pages)
    tell = progress or (lambda _done, _total: None)
    done = 0

    def settle(indexes: list[int], reason: str | None = None) -> None:
        nonlocal done
        if reason is not None:
            report.kept[reason] += len(indexes)
        done += len(indexes)
        tell(done, len(pages))

    chosen = _selected(pages, config.limit)
    chosen_set = set(chosen)
    structured = [i for i, p in enumerate(pages) if p.page_type not in PROSE_GENRES]
    beyond = [i for i, p in enumerate(pages) if p.page_type in PROSE_GENRES and i not in chosen_set]
    if structured:
        settle(structured, "structured genre")
    if beyond:
        settle(beyond, "beyond the page limit")
    if not chosen:
        return out, report

    backend = OpenAIBackend(base_url=config.base_url, model=config.model, api_key=config.api_key, concurrency=config.concurrency,
                            timeout_s=config.timeout_s, max_retries=2)
    if not config.model:
        backend.load()  # the first model served: part of every cache key
    params = GenerationParams(temperature=config.temperature, max_tokens=config.max_tokens, seed=config.seed)
    conversations: dict[str, list[dict]] = {}
    members: dict[str, list[int]] = {}
    for i in chosen:
        messages = prompt_messages(pages[i], label)
        key = WorldModelRequest(id="x", messages=tuple(messages)).key(backend.identity, 1, params)
        conversations.setdefault(key, messages)
        members.setdefault(key, []).append(i)
    cache = KVCache(where, "writer")
    order = {k: n for n, k in enumerate(conversations)}
    try:
        open_ = list(conversations)
        for round_ in range(1, config.max_rounds + 1):
            still: list[str] = []

            def answer(k: str, text: str | None, round_: int = round_, still: list[str] = still) -> None:
                """Settle or send back one conversation as soon as its reply is in (``None``: the request failed)."""
                if text is None:
                    settle(members[k], "request failed")
                    return
                body = clean_reply(text)
                problems = check_reply(body, pages[members[k][0]])
                if not problems:
                    for i in members[k]:
                        # the article is replaced; the site's chrome, which the model never sees, is rendered on read
                        p = pages[i]
                        out[i] = replace(p, body_md=body, lead=first_paragraph(body))
                    if round_ == 1:
                        report.written += len(members[k])
                    else:
                        report.repaired += len(members[k])
                    settle(members[k])
                elif round_ == config.max_rounds:
                    settle(members[k], f"rejected after {round_} round{'s' if round_ > 1 else ''}: {problems[0].kind}")
                else:
                    conversations[k] = conversations[k] + [{"role": "assistant", "content": text}, repair_message(problems)]
                    still.append(k)

            requests = {k: WorldModelRequest(id=k, messages=tuple(conversations[k])) for k in open_}
            keys = {k: r.key(backend.identity, 1, params) for k, r in requests.items()}
            misses = []
            for k, r in requests.items():
                hit = cache.get(keys[k])
                if hit is None:
                    misses.append(r)
                else:
                    report.cached += 1
                    answer(k, str(hit))

            def arrived(req: WorldModelRequest, outcome: list[Completion] | Failure, keys: dict[str, str] = keys) -> None:
                if isinstance(outcome, Failure):
                    for i in members[req.id]:
                        report.failures[pages[i].url] = outcome.reason
                    answer(req.id, None)
                else:
                    cache.put(keys[req.id], outcome[0].text)
                    answer(req.id, outcome[0].text)

            if misses:
                report.requests += len(misses)
                backend.generate(misses, 1, params, on_result=arrived)
            open_ = sorted(still, key=order.__getitem__)
            if not open_:
                break
    finally:
        cache.close()
    return out, report


def rewrite_corpus_pages(
    by_scenario: dict[str | None, list[Page]],
    config: RewriterConfig,
    label: Callable[[Fact], str] | None = None,
    progress: Callable[[int, int], None] | None = None,
    cache_path: str | Path | None = None,
) -> tuple[dict[str | None, list[Page]], RewriterReport]:
    """:func:`rewrite_pages` over several corpora at once (``{scenario or None: pages}``, as
    :func:`~worldforge.corpus.store.write_corpus` takes them); the same arguments, errors and report."""
    flat = [(s, p) for s, ps in by_scenario.items() for p in ps]
    written, report = rewrite_pages([p for _, p in flat], config, label, progress, cache_path)
    out: dict[str | None, list[Page]] = {s: [] for s in by_scenario}
    for (s, _), p in zip(flat, written):
        out[s].append(p)
    return out, report

