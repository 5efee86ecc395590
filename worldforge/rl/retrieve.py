"""The Search-R1 / verl retrieval-server protocol over a fictional world: ``POST /retrieve``.

Search-R1 (``PeterGriffinJin/Search-R1``, ``search_r1/search/retrieval_server.py``) trains an
agent against a local retrieval server; verl's Search-R1-like tool
(``volcengine/verl``, ``verl/tools/utils/search_r1_like_utils.py``) calls the same endpoint.
This module serves that protocol from a world's simulated web, so either can train in a
fictional world unchanged — point ``retrieval_service_url`` at ``http://HOST:PORT/retrieve``.

Request (JSON, as the reference's ``QueryRequest``)::

    {"queries": ["...", ...], "topk": 3, "return_scores": true}

``queries`` is a non-empty list of non-blank strings (at most :data:`MAX_BATCH`, each at most
:data:`~worldforge.simenv.env.MAX_QUERY_CHARS` characters); ``topk`` is optional (default
:data:`DEFAULT_TOPK`, the reference's ``--topk`` default) and at most the server's ``topk_max``;
``return_scores`` defaults to ``false``, as in the reference. Two optional fields are
worldforge's own (reference clients never send them): ``session_id`` (whose session answers,
see below) and ``task_id`` (attach a task to a new session: leakage control, which matters in
``snippet`` mode; a wide task's ``instance_id`` or a deep question's id, :mod:`worldforge.tasks.deep`).
Search-R1 grades its own rollouts (exact match against a row's ``golden_answers``): a deep
question, whose answer is one name, number or date, is that kind of row.

Response (status 200)::

    return_scores true:  {"result": [[{"document": {"id": URL, "contents": "\\"Title\\"\\nTEXT"}, "score": 12.3}, ...], ...]}
    return_scores false: {"result": [[{"id": URL, "contents": "\\"Title\\"\\nTEXT"}, ...], ...]}

one list per query, in the order of ``queries``; a query without hits has ``[]`` (the
reference's BM25 retriever answers ``[]`` too). ``id`` is the page's URL; ``contents`` follows
the reference corpus format (``'"' + title + '"\\n' + text``, Search-R1's README), so verl's
``_passages2string`` shows ``Doc 1 (Title: "...")`` and the text. ``score`` is the page's BM25
score (tantivy) for the query, a float; results come best first.

**Contents.** ``contents="page"`` (the default): the text is the page as ``web_extractor``
returns it (:func:`~worldforge.corpus.generate.page_markdown`: ``# title``, date, Markdown body),
so an agent that can only retrieve reads every fact and link the page states — the tasks stay
answerable through retrieval alone, as Search-R1 corpora hold whole passages.
``contents="snippet"``: the text is the search snippet (what ``web_search`` shows), for agents
that must work from snippets; snippet-level perturbations and leakage control act only there.

**Sessions and turns.** Every request is answered by a
:class:`~worldforge.simenv.env.SearchEnv` session through
:meth:`~worldforge.simenv.env.SearchEnv.search_page` — the same search, perturbations and
leakage control as ``web_search``. A request without ``session_id`` is answered by the server's
one default session; with one, by that session (created on first use, at most ``max_sessions``
kept by an evicting episode service, :class:`~worldforge.serving.episodes.EpisodeService`, that logs
nothing: the least recently used session that is not answering is dropped to make room). The session id of the decisions is ``retrieve:<session_id>``
(``retrieve:default``); its **turn** counts the requests it has answered (1, 2, ...; a request
refused by a transient error counts too, so the client's retry is a new turn with fresh
decisions); a query's **slot** is its position in ``queries``. Every perturbation decision is
seeded by ``(seed, session id, turn, kind, slot)``: the same seed and the same sequence of
requests give the same responses (concurrent requests to one session are answered one at a
time, in arrival order).

**Perturbations.** ``empty_results`` answers ``[]`` for the query; ``stale_ranking`` shuffles a
query's hits (their BM25 scores stay attached to them); ``pagination`` cuts a query's hits to
the page size (the protocol has no pages: only page 1 is returned); ``snippet_withhold``
shortens snippets (``snippet`` mode). A fired ``transient_error`` refuses the whole request with
a status verl's client retries (it retries 500, 502, 503, 504; 4xx are not retried): 503 for
``http_5xx`` and ``rate_limit`` (with ``Retry-After: 1``), 504 for ``timeout``, and
``{"error": ...}``. ``partial_batch`` does not apply: the protocol has no per-query error.

**Errors** (``{"error": "..."}``): a body that is not UTF-8 JSON or not an object (400); a field
missing or of the wrong type, ``topk`` out of range, too many or blank queries, an unknown
``task_id`` (422); a body over :data:`~worldforge.serving.http.MAX_BODY_BYTES` (413); a new
session while all ``max_sessions`` are answering a request (503, retried by verl's client).
``GET /health`` answers ``{"status": "ok", "world", "contents", "topk_max", "sessions"}``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Literal

from fastapi import FastAPI, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.concurrency import run_in_threadpool

from worldforge.corpus.generate import page_markdown
from worldforge.errors import WorldforgeError, validation_problems
from worldforge.rl.env import parse_perturbations, world_tasks
from worldforge.runtime import apply_settings, relaxed_gc, return_large_blocks
from worldforge.serving.episodes import EpisodeService, UnknownTarget
from worldforge.serving.http import MAX_BODY_BYTES, BodyLimit, RequestError, SafeJSONResponse, error, json_errors, parse_body
from worldforge.serving.sessions import Session as RegistryEntry
from worldforge.serving.sessions import SessionLimit
from worldforge.simenv.env import MAX_QUERY_CHARS, Observation, SearchEnv, SearchResult
from worldforge.simenv.perturbations import PerturbationConfig
from worldforge.warehouse.layout import Warehouse, WarehouseLike

__all__ = ["CONTENTS", "DEFAULT_PORT", "DEFAULT_TOPK", "MAX_BATCH", "TOPK_MAX", "RetrieveRequest", "Retriever", "TransientError",
           "create_retrieve_app", "serve_retrieve"]

DEFAULT_TOPK = 3
"""``topk`` when a request gives none (Search-R1 ``retrieval_server.py``: ``--topk`` defaults to 3)."""
TOPK_MAX = 50
"""The default largest ``topk`` a request may ask for (``--topk-max``); more is a 422."""
MAX_BATCH = 256
"""Queries one request may batch; more is a 422."""
DEFAULT_PORT = 8000
"""The port Search-R1's server listens on, and verl's example ``retrieval_service_url`` names."""
CONTENTS = ("page", "snippet")
"""What a document's ``contents`` holds after its ``"Title"`` line: the page's Markdown or the search snippet."""

_STATUS = {"http_5xx": 503, "rate_limit": 503, "timeout": 504}


class RetrieveRequest(BaseModel):
    """The body of ``POST /retrieve`` (Search-R1's ``QueryRequest``, plus two optional fields of worldforge's own).

    Attributes:
        queries: the queries, answered in order (non-empty, non-blank, at most :data:`MAX_BATCH`).
        topk: documents per query (default :data:`DEFAULT_TOPK`; at most the server's ``topk_max``).
        return_scores: ``true``: ``{"document", "score"}`` items; ``false`` (the reference's default): bare documents.
        session_id: the session that answers (default: the server's default session).
        task_id: a task of the world attached to a new session (leakage control); checked always, ignored for a
            session that exists already (the default one included: give a new ``session_id`` with it).
    """

    model_config = ConfigDict(extra="ignore", strict=True)

    queries: list[str] = Field(min_length=1, max_length=MAX_BATCH)
    topk: int | None = None
    return_scores: bool = False
    session_id: str | None = Field(None, min_length=1, max_length=200)
    task_id: str | None = Field(None, min_length=1, max_length=500)


class TransientError(RequestError):
    """A ``transient_error`` perturbation fired: the request is refused with a status verl's client retries."""

    def __init__(self, status: int, message: str, kind: str):
        super().__init__(status, message)
        self.kind = kind


class Retriever:
    """The sessions behind ``/retrieve`` and the protocol's answer (see the module docstring).

    Args:
        world: the world (``<warehouse>/<world>.duckdb`` with its corpus and index built).
        warehouse: the warehouse, or its folder.
        perturbations: the schema of every session (:func:`~worldforge.rl.env.parse_perturbations` input).
        seed: seeds every perturbation decision.
        scenario: search this scenario's corpus instead of the world's.
        contents: ``page`` (default) or ``snippet``, see :data:`CONTENTS`.
        topk_max: the largest ``topk`` accepted.
        max_sessions: sessions kept (the least recently used one not answering is dropped first).

    Raises:
        WarehouseError: the world's corpus is missing.
        WorldforgeError: no such world, invalid perturbations, an unknown scenario or ``contents``, ``topk_max`` below 1.
    """

    def __init__(self, world: str, warehouse: WarehouseLike, perturbations: str | dict | PerturbationConfig | None = None,
                 seed: int = 0, scenario: str | None = None, contents: Literal["page", "snippet"] = "page", topk_max: int = TOPK_MAX,
                 max_sessions: int = 10_000):
        if contents not in CONTENTS:
            raise WorldforgeError(f"contents must be one of {', '.join(CONTENTS)}, not {contents!r}")
        if topk_max < 1:
            raise WorldforgeError(f"topk_max must be at least 1, not {topk_max}")
        self.world, self.warehouse, self.seed, self.scenario = world, Warehouse.of(warehouse), seed, scenario
        self.perturbations = parse_perturbations(perturbations)
        self.contents, self.topk_max = contents, topk_max
        self.episodes = EpisodeService(self.warehouse, agent="retrieve", max_sessions=max_sessions, evict=True, record=False)
        """The sessions (never logged: the protocol has no session end, see the module docstring)."""
        try:
            probe = self._new("default", None)  # fail now, with a clear error, if the world cannot be searched
        except UnknownTarget as exc:
            raise WorldforgeError(str(exc)) from None
        self.episodes.add(probe, "default")

    def _new(self, session_id: str, task_id: str | None) -> SearchEnv:
        return self.episodes.environment(self.world, task=task_id, scenario=self.scenario, seed=self.seed, perturbations=self.perturbations,
                                         session_id=f"retrieve:{session_id}", task_scenario=False)  # the server's corpus, whatever the task's

    def __len__(self) -> int:
        """Sessions open."""
        return len(self.episodes)

    def session(self, session_id: str | None = None, task_id: str | None = None) -> tuple[SearchEnv, threading.Lock]:
        """The session ``session_id`` (default: the default session) and its lock, created on first use.

        Raises:
            RequestError: ``task_id`` names no task of the world (422); the world has no tasks (422);
                a new session is needed while all ``max_sessions`` are answering (503).
        """
        entry = self._acquire(session_id, task_id)
        self.episodes.release(entry)
        return entry.value, entry.lock

    def _acquire(self, session_id: str | None, task_id: str | None) -> RegistryEntry[SearchEnv]:
        """:meth:`session`, marked in use until released (it cannot be evicted meanwhile)."""
        key = session_id or "default"
        if task_id is not None:  # checked even when the session exists (where it is then ignored)
            try:
                known = task_id in world_tasks(self.world, self.warehouse, "both")
            except WorldforgeError as exc:
                raise RequestError(422, str(exc)) from None
            if not known:
                raise RequestError(422, f"world {self.world!r} has no task {task_id!r}")

        def make() -> SearchEnv:
            try:
                return self._new(key, task_id)
            except WorldforgeError as exc:
                raise RequestError(422, str(exc)) from None

        try:
            return self.episodes.acquire(key, make)  # an evicted session is closed as any other (nothing logged: record is off)
        except SessionLimit:
            raise RequestError(503, f"all {self.episodes.registry.max_sessions} sessions are answering; retry") from None

    def request(self, body: Any) -> RetrieveRequest:
        """A request body (parsed JSON) checked against the protocol.

        Raises:
            RequestError: not an object (400); a missing or mistyped field, blank or too long
                queries, ``topk`` below 1 or above ``topk_max`` (422).
        """
        if not isinstance(body, dict):
            raise RequestError(400, "the body must be a JSON object {\"queries\": [...], \"topk\": k, \"return_scores\": bool}")
        try:
            req = RetrieveRequest.model_validate(body)
        except ValidationError as exc:
            problems = validation_problems(exc, root="body")
            raise RequestError(422, f"invalid request: {problems}") from None
        if any(not q.strip() for q in req.queries):
            raise RequestError(422, "invalid request: every query must be a non-blank string")
        if any(len(q) > MAX_QUERY_CHARS for q in req.queries):
            raise RequestError(422, f"invalid request: a query may have at most {MAX_QUERY_CHARS} characters")
        if req.topk is not None and not 1 <= req.topk <= self.topk_max:
            raise RequestError(422, f"invalid request: topk must be between 1 and {self.topk_max} (got {req.topk})")
        return req

    def document(self, env: SearchEnv, r: SearchResult) -> dict[str, str]:
        """One result as a Search-R1 document ``{"id": url, "contents": '"title"\\n' + text}``."""
        text = page_markdown(env.corpus.pages[r.url]) if self.contents == "page" else r.snippet
        return {"id": r.url, "contents": f'"{r.title}"\n{text}'}

    def retrieve(self, req: RetrieveRequest) -> dict[str, list]:
        """Answer one request: ``{"result": [per query: documents or {"document", "score"} items]}``.

        Counts one turn of the answering session.

        Raises:
            TransientError: a ``transient_error`` perturbation fired (503 or 504).
            RequestError: an unknown ``task_id`` (422).
        """
        entry = self._acquire(req.session_id, req.task_id)
        env, topk = entry.value, req.topk or DEFAULT_TOPK
        try:  # in use (never evicted) until answered
            with entry.lock:
                env.turn += 1
                obs = Observation("", "web_search")
                refused = env.transient_error(obs)  # the session's own transient-error decision (a tool-level error)
                if refused:
                    kind = next((f["detail"] for f in obs.fired if f["kind"] == "transient_error"), "http_5xx")
                    raise TransientError(_STATUS.get(kind, 503), refused.removeprefix("Error: "), kind)
                result: list[list] = []
                for slot, query in enumerate(req.queries):
                    page = env.search_page(query, 1, slot, obs, k=topk)
                    docs = [(self.document(env, r), float(r.score)) for r in page.results[:topk]]
                    result.append([{"document": d, "score": s} for d, s in docs] if req.return_scores else [d for d, _ in docs])
        finally:
            self.episodes.release(entry)
        return {"result": result}


def create_retrieve_app(world: str, warehouse: WarehouseLike, perturbations: str | dict | PerturbationConfig | None = None,
                        seed: int = 0, scenario: str | None = None, contents: Literal["page", "snippet"] = "page",
                        topk_max: int = TOPK_MAX, max_sessions: int = 10_000) -> FastAPI:
    """The Search-R1 / verl retrieval server of one world: ``POST /retrieve``, ``GET /health``.

    The protocol, the sessions, the perturbations and the errors are described in the module
    docstring (:mod:`worldforge.rl.retrieve`); the arguments are :class:`Retriever`'s.

    Raises:
        WarehouseError: the world or its corpus is missing (checked here, before anything listens).
        WorldforgeError: invalid perturbations, scenario, ``contents`` or ``topk_max``.
    """
    retriever = Retriever(world, warehouse, perturbations, seed, scenario, contents, topk_max, max_sessions)
    app = FastAPI(title=f"worldforge retrieval server ({world})")
    app.state.retriever = retriever
    app.add_middleware(BodyLimit, limit=MAX_BODY_BYTES)

    @app.exception_handler(RequestError)
    async def refused(request: Request, exc: RequestError) -> Response:
        response = error(exc.status, exc.message)
        if isinstance(exc, TransientError) and exc.kind == "rate_limit":
            response.headers["Retry-After"] = "1"
        return response

    json_errors(app)

    @app.get("/health")
    def health() -> dict:
        return {"status": "ok", "world": world, "contents": contents, "topk_max": topk_max, "sessions": len(retriever)}

    def answer(raw: bytes) -> dict:
        return retriever.retrieve(retriever.request(parse_body(raw)))

    @app.post("/retrieve")
    async def retrieve(request: Request) -> Response:
        raw = await request.body()  # BodyLimit raises RequestError(413) past MAX_BODY_BYTES
        return SafeJSONResponse(await run_in_threadpool(answer, raw))

    return app


def serve_retrieve(world: str, warehouse: WarehouseLike, host: str | None = None, port: int | None = None,
                   perturbations: str | dict | PerturbationConfig | None = None, seed: int = 0, scenario: str | None = None,
                   contents: Literal["page", "snippet"] = "page", topk_max: int = TOPK_MAX,
                   on_ready: Callable[[str], None] | None = None) -> None:
    """Serve :func:`create_retrieve_app` with uvicorn until interrupted (``worldforge serve retrieve``).

    Args:
        world, warehouse, perturbations, seed, scenario, contents, topk_max: as :func:`create_retrieve_app`.
        host, port: where to listen (default ``WORLDFORGE_HOST``, loopback, and :data:`DEFAULT_PORT`).
        on_ready: called with the ``/retrieve`` URL once the app is built, before serving.

    Raises:
        WarehouseError: the world or its corpus is missing (before anything listens).
        WorldforgeError: invalid perturbations, scenario, ``contents`` or ``topk_max``.
    """
    import uvicorn

    settings = apply_settings()
    host, port = host or settings.host, port or DEFAULT_PORT
    api = create_retrieve_app(world, warehouse, perturbations, seed, scenario, contents, topk_max)
    if on_ready is not None:
        on_ready(f"http://{host}:{port}/retrieve")
    return_large_blocks()  # freed large blocks go back to the OS at once (see worldforge.runtime)
    with relaxed_gc():  # the collector walks the open world's objects: see worldforge.runtime
        uvicorn.run(api, host=host, port=port, log_level="warning")
