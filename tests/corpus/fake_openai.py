"""A scripted OpenAI-compatible chat server for the corpus writer's tests (run as a script: ``python fake_openai.py MODE PORT``).

Modes (what ``POST /v1/chat/completions`` answers, from the draft between the prompt's draft markers):

* ``alter`` — the draft with every digit run changed (``n`` -> ``n + 1`` followed by ``7``) and a sentence with a new
  number: every stated value dropped or unregistered, on every round;
* ``echo`` — the draft inside a ``<think>`` block and a code fence, with a sentence added that states no number;
* ``repair`` — ``alter`` on the first round, ``echo`` once the reply is sent back (more than two messages);
* ``swap`` — the draft with its direction words reversed ("after" <-> "before", "more" <-> "fewer", "largest" <->
  "smallest", "up" <-> "down" ...), every number kept: a reply that states the same values with the meaning reversed.

``GET /v1/models`` lists the model ``fake-writer``; ``GET /count`` gives ``{"chat": requests answered}``;
``GET /health`` is 200 once listening.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "fake-writer"
START, END = "--- draft ---\n", "\n--- end of draft ---"


def draft_of(messages: list[dict]) -> str:
    user = next(m["content"] for m in messages if m["role"] == "user")
    return user[user.index(START) + len(START):user.rindex(END)]


def alter(text: str) -> str:
    return re.sub(r"\d+", lambda m: f"{int(m.group(0)) + 1}7", text) + "\n\nSources put the figure at 98,765."


SWAPS = {"after": "before", "more": "fewer", "higher": "lower", "largest": "smallest", "highest": "lowest", "up": "down",
         "above": "below", "earliest": "latest", "larger": "smaller", "twice": "half", "earlier": "later", "most": "least"}
SWAPS.update({v: k for k, v in list(SWAPS.items())})


def swap(text: str) -> str:
    def one(m: re.Match) -> str:
        w = m.group(0)
        out = SWAPS[w.lower()]
        return out.capitalize() if w[0].isupper() else out
    return re.sub(r"\b(" + "|".join(SWAPS) + r")\b", one, text, flags=re.I)


def echo(text: str) -> str:
    return f"<think>The draft states 42 things.</think>\n```markdown\n{text}\n\nFurther coverage of this story is on the way.\n```"


class Handler(BaseHTTPRequestHandler):
    mode = "echo"
    count = 0
    lock = threading.Lock()

    def log_message(self, *args) -> None:  # quiet
        pass

    def send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.endswith("/models"):
            self.send(200, {"object": "list", "data": [{"id": MODEL, "object": "model", "created": 0, "owned_by": "tests"}]})
        elif self.path == "/count":
            self.send(200, {"chat": Handler.count})
        elif self.path == "/health":
            self.send(200, {"ok": True})
        else:
            self.send(404, {"error": "not found"})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        if not self.path.endswith("/chat/completions"):
            return self.send(404, {"error": "not found"})
        if body.get("model") != MODEL:
            return self.send(404, {"error": {"message": f"model {body.get('model')!r} does not exist", "type": "NotFoundError"}})
        with Handler.lock:
            Handler.count += 1
        messages = body["messages"]
        draft = draft_of(messages)
        mode = Handler.mode
        if mode == "repair":
            mode = "echo" if len(messages) > 2 else "alter"
        text = alter(draft) if mode == "alter" else swap(draft) if mode == "swap" else echo(draft)
        self.send(200, {
            "id": f"chatcmpl-{Handler.count}", "object": "chat.completion", "created": int(time.time()), "model": MODEL,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
        })


if __name__ == "__main__":
    Handler.mode = sys.argv[1]
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), Handler).serve_forever()
