"""An oracle OpenAI-compatible server for evaluation tests: a perfect world model, and a judge.

The world oracle knows the gold next observation of every AgentWorldBench record it was given and
answers a chat completion with it when the request's messages are exactly those the reference
evaluation (QwenLM/Qwen-AgentWorld ``eval/eval.py``, ``infer``) builds for that record. The judge
oracle scores a judge request by comparing its simulated and ground-truth blocks. Together they let
a test run an evaluation pipeline end to end and know which numbers it must print.

The message construction is written here from the reference's description, not copied from it.
"""

from __future__ import annotations

import json
import re
import socket
import threading
from collections.abc import Iterable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from worldforge.net import free_port

OBSERVATION_HEADER = "**Environment Observation:**"
DIMENSIONS = ("format", "factuality", "consistency", "realism", "quality")
WRONG = "wrong"  # the observation a corrupted record is answered with
MODES = ("world", "judge")
VERDICTS = ("best", "match")


def load_records(source: str | Path | Iterable[Mapping]) -> list[dict]:
    """Records from a folder (every ``*_test.jsonl``, sorted by name, lines in order: the reference's order) or a list."""
    if isinstance(source, (str, Path)):
        return [json.loads(line) for f in sorted(Path(source).glob("*_test.jsonl")) for line in f.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [dict(r) for r in source]


def reference_messages(record: Mapping) -> list[dict]:
    """The chat messages the reference ``infer`` sends for a record.

    A system message with ``system_str`` (only when it is non-empty), then the turns before the
    current one as user (action prompt) / assistant (observation as stored) pairs, then the
    current action prompt as the last user message. ``turn_idx`` is 1-based.
    """
    t = record["turn_idx"] - 1
    prompts, responses = record.get("prompt", []), record.get("response", [])
    messages = [{"role": "system", "content": record["system_str"]}] if record.get("system_str") else []
    for p, r in zip(prompts[:t], responses[:t]):
        messages += [{"role": "user", "content": p}, {"role": "assistant", "content": r}]
    return messages + [{"role": "user", "content": prompts[t]}]


def gold_observation(record: Mapping) -> str:
    """``response[turn_idx - 1]`` without a leading ``**Environment Observation:**`` header, whitespace stripped ("" if absent)."""
    responses, t = record.get("response", []), record["turn_idx"] - 1
    text = (responses[t] if t < len(responses) else "").strip()
    return text[len(OBSERVATION_HEADER):].strip() if text.startswith(OBSERVATION_HEADER) else text


def world_reply(observation: str) -> str:
    """A world model's answer: a thinking block, then the observation in ``<predicted_observation>`` tags."""
    return f"<think>\nThe action is the one recorded; the environment answers as it did.\n</think>\n<predicted_observation>\n{observation}\n</predicted_observation>"


def judge_reply(score: int, same: bool) -> str:
    """A judge's answer in the reference's format: reasoning, then a json block in ``<final_evaluation>`` tags."""
    payload = {"strengths": ["identical to the ground truth"] if same else [],
               "weaknesses": [] if same else ["differs from the ground truth"],
               "scores": {d: score for d in DIMENSIONS}}
    reasoning = "The simulated observation matches the ground truth." if same else "The simulated observation differs from the ground truth."
    return f"{reasoning}\n\n<final_evaluation>\n```json\n{json.dumps(payload, indent=2)}\n```\n</final_evaluation>"


def _text(content: object) -> str:
    """A message content as text (content parts joined)."""
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, Mapping))
    return "" if content is None else str(content)


def message_key(messages: Iterable[Mapping]) -> str:
    """A hashable form of a message list: roles and text contents."""
    return json.dumps([[m.get("role"), _text(m.get("content"))] for m in messages], ensure_ascii=False)


_FENCE = re.compile(r"^(`{3,})(.*)$")


def _label_at(lines: list[str], i: int, keyword: str) -> bool:
    """Whether ``lines[i]`` labels a block: it holds the keyword (any case), ends with a colon (``**...:**`` too),
    and the next non-blank line is a fence."""
    line = lines[i].strip()
    if keyword not in line.lower() or not line.rstrip("*").rstrip().endswith(":"):
        return False
    nxt = next((x for x in lines[i + 1:] if x.strip()), "")
    return bool(_FENCE.match(nxt.strip()))


def _fenced_block(lines: list[str], start: int) -> tuple[str, int] | None:
    """The content of the first fenced block opening at or after ``lines[start]``, and the index after its closing fence.

    A block opened with N backticks closes at a bare fence of at least N backticks. Inside it, a
    fence with an info string (```` ```json ````) opens a nested block that the next bare fence
    closes, so an observation holding fenced code keeps its whole text (a nested block opened by a
    bare fence cannot be told from the closing fence: the block ends there).
    """
    for i in range(start, len(lines)):
        m = _FENCE.match(lines[i].strip())
        if not m:
            continue
        width, depth = len(m.group(1)), 0
        for j in range(i + 1, len(lines)):
            inner = _FENCE.match(lines[j].strip())
            if not inner:
                continue
            if inner.group(2).strip():
                depth += 1
            elif depth:
                depth -= 1
            elif len(inner.group(1)) >= width:
                return "\n".join(lines[i + 1:j]), j + 1
        return None
    return None


def judge_blocks(text: str) -> tuple[str, str] | None:
    """``(simulated, ground truth)`` of a judge request's user message, or None.

    The first fenced block after a line holding "simulated", then the first fenced block after a
    later line holding "ground truth" (any case; a label line ends with a colon and is followed by
    a fence, so the word in the context or in an action does not count): the reference's "**World Model Output (Simulated):**" /
    "**Ground Truth (Real Output):**" and worldforge's "**Simulated observation (world model):**" /
    "**Ground Truth observation (real environment):**" alike.
    """
    lines = text.splitlines()
    for i in range(len(lines)):
        if not _label_at(lines, i, "simulated"):
            continue
        sim = _fenced_block(lines, i + 1)
        if sim is None:
            return None
        for k in range(sim[1], len(lines)):
            if _label_at(lines, k, "ground truth"):
                gt = _fenced_block(lines, k + 1)
                return None if gt is None else (sim[0], gt[0])
        return None
    return None


class OracleServer:
    """An OpenAI-compatible HTTP server on 127.0.0.1 (a free port, a thread of the test process) with scripted answers.

    ``GET /v1/models`` lists one model; ``POST /v1/chat/completions`` answers a ``chat.completion``
    with usage counted in whitespace tokens. Use it as a context manager; on exit the server
    stops and its thread is joined.

    Modes:
        ``world``: built from ``records`` (a folder of ``*_test.jsonl`` AgentWorldBench files or a
            list of record dicts). A request whose messages are exactly the reference's messages
            for a record (:func:`reference_messages`) is answered with that record's gold
            observation (:func:`gold_observation`) in ``<predicted_observation>`` tags, after a
            ``<think>`` block; the records whose ids (compared as strings) are in ``corrupt`` are
            answered ``"wrong"``. Records whose message lists coincide (no model can tell them
            apart) are answered in load order, cycling: the order the reference's ``infer`` asks in.
            A request matching no record gets HTTP 404 and is counted in ``unmatched``.
        ``judge``: reads the simulated and ground-truth fenced blocks of the last user message
            (:func:`judge_blocks`; the reference's template and worldforge's) and answers in the
            reference's ``<final_evaluation>`` json format. Verdict ``best``: 5 on every dimension;
            ``match``: 5 on every dimension when the blocks are equal after stripping whitespace,
            else 1. A request without both blocks gets HTTP 400 and is counted in ``unreadable``.

    Attributes:
        requests: the message list of every completion request received, in arrival order.
        answered: world mode, the id of the record each answered request was matched to.
        blocks: judge mode, the ``(simulated, ground truth)`` pair of each judged request.
    """

    def __init__(self, mode: str, *, records: str | Path | Iterable[Mapping] | None = None, corrupt: Iterable[str] = (),
                 verdict: str = "best", model: str | None = None):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
        if verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, not {verdict!r}")
        if mode == "world" and records is None:
            raise ValueError("the world oracle needs records (a folder or a list of dicts)")
        self.mode, self.verdict, self.model = mode, verdict, model or f"oracle-{mode}"
        self.corrupt = {str(c) for c in corrupt}
        self.requests: list[list[dict]] = []
        self.answered: list[str] = []
        self.blocks: list[tuple[str, str]] = []
        self.unmatched = 0
        self.unreadable = 0
        self._answers: dict[str, list[tuple[str, str]]] = {}
        self._cursor: dict[str, int] = {}
        for rec in load_records(records) if mode == "world" else []:
            rid = str(rec.get("id"))
            answer = WRONG if rid in self.corrupt else gold_observation(rec)
            self._answers.setdefault(message_key(reference_messages(rec)), []).append((rid, answer))
        self._lock = threading.Lock()
        self.port = free_port()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = 10  # seconds an idle keep-alive connection is held: server_close() never waits longer

            def setup(self):
                super().setup()
                # headers and body go out in two writes: without this, Nagle's algorithm and the client's delayed ACK hold each reply ~40 ms
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def log_message(self, *args):
                pass

            def do_GET(self):
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": outer.model, "object": "model", "created": 0, "owned_by": "oracle"}]})
                else:
                    self._send(404, _error(f"no route {self.path}", "not_found_error", 404))

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, _error(f"no route {self.path}", "not_found_error", 404))
                    return
                try:
                    request = json.loads(body)
                    messages = request["messages"]
                    if not (isinstance(messages, list) and all(isinstance(m, dict) for m in messages)):
                        raise TypeError("messages is not a list of objects")
                except (ValueError, KeyError, TypeError):
                    self._send(400, _error("the body is not a chat completion request", "invalid_request_error", 400))
                    return
                status, payload = outer._complete(request.get("model") or outer.model, messages)
                self._send(status, payload)

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client went away
                    self.close_connection = True

        class Server(ThreadingHTTPServer):
            daemon_threads = False  # server_close() joins every handler thread
            block_on_close = True

        self._server = Server(("127.0.0.1", self.port), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def ambiguous(self) -> int:
        """World mode: message lists shared by records with different answers."""
        return sum(len({a for _, a in v}) > 1 for v in self._answers.values())

    def _complete(self, model: str, messages: list) -> tuple[int, dict]:
        """``(status, body)`` for one chat completion request."""
        with self._lock:
            self.requests.append(messages)
            if self.mode == "world":
                key = message_key(messages)
                options = self._answers.get(key)
                if not options:
                    self.unmatched += 1
                    return 404, _error("no record has these messages", "not_found_error", 404)
                n = self._cursor.get(key, 0)
                self._cursor[key] = n + 1
                rid, observation = options[n % len(options)]
                self.answered.append(rid)
                content = world_reply(observation)
            else:
                user = next((m.get("content") for m in reversed(messages) if m.get("role") == "user"), None)
                found = judge_blocks(user) if isinstance(user, str) else None
                if found is None:
                    self.unreadable += 1
                    return 400, _error("no simulated and ground-truth blocks in the judge request", "invalid_request_error", 400)
                self.blocks.append(found)
                same = found[0].strip() == found[1].strip()
                content = judge_reply(5 if self.verdict == "best" or same else 1, same)
        prompt_tokens = sum(len(_text(m.get("content")).split()) for m in messages)
        completion_tokens = len(content.split())
        return 200, {
            "id": f"chatcmpl-oracle-{len(self.requests)}", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop", "logprobs": None}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens},
        }

    def __enter__(self) -> OracleServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)
        assert not self._thread.is_alive()


def _error(message: str, kind: str, code: int) -> dict:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}
