"""A scripted policy behind an OpenAI-compatible ``/v1/chat/completions`` endpoint (streaming and not).

Run as ``python -m tests.rl.scripted_policy --script FILE --port P``. The script is JSON:
``[{"question": "...", "calls": [{"name": ..., "arguments": {...}}, ...], "answer": "..."}]`` —
the tool calls the scripted oracle made for a task and its final answer. A request's conversation
is matched to the entry whose question its first user message contains; its ``k``-th assistant turn
(``k`` = assistant messages already in the request) is the entry's ``k``-th tool call, then the
answer as plain text. A conversation no entry matches gets a 400. Tool messages are checked to
answer the previous call (their ``tool_call_id``), so a harness that loses a result fails the test.
"""

from __future__ import annotations

import argparse
import json
import time
import uuid

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse


def _text(content) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


def create_app(script: list[dict]) -> FastAPI:
    app = FastAPI()
    log: list[dict] = []

    @app.get("/health")
    def health() -> dict:
        return {"status": "ok", "conversations": len(script)}

    @app.get("/v1/models")
    def models() -> dict:
        return {"object": "list", "data": [{"id": "scripted-oracle", "object": "model", "owned_by": "worldforge-tests"}]}

    @app.get("/log")
    def requests_seen() -> list[dict]:
        return log

    @app.post("/v1/chat/completions")
    async def complete(request: Request):
        body = await request.json()
        messages = body.get("messages") or []
        first = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
        entry = next((e for e in script if e["question"] in first), None)
        if entry is None:
            return JSONResponse({"error": {"message": "no scripted conversation for this prompt"}}, status_code=400)
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        results = [m for m in messages if m.get("role") == "tool"]
        log.append({"id": entry.get("id"), "turn": turn, "tools": [t["function"]["name"] for t in body.get("tools") or []],
                    "tool_results": len(results), "last_result": _text(results[-1].get("content")) if results else None,
                    "stream": bool(body.get("stream"))})
        if turn and len(results) != turn:
            return JSONResponse({"error": {"message": f"turn {turn} but {len(results)} tool results"}}, status_code=400)
        call_id = None
        if turn < len(entry["calls"]):
            call = entry["calls"][turn]
            call_id = f"call_{turn}_{uuid.uuid4().hex[:8]}"
            message = {"role": "assistant", "content": None,
                       "tool_calls": [{"id": call_id, "type": "function",
                                       "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])}}]}
            finish = "tool_calls"
        else:
            message, finish = {"role": "assistant", "content": entry["answer"]}, "stop"
        rid, created, model = f"chatcmpl-{uuid.uuid4().hex}", int(time.time()), body.get("model", "scripted-oracle")
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if not body.get("stream"):
            return {"id": rid, "object": "chat.completion", "created": created, "model": model,
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage}

        def chunk(delta: dict, finish_reason=None, **extra) -> str:
            payload = {"id": rid, "object": "chat.completion.chunk", "created": created, "model": model,
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}], **extra}
            return f"data: {json.dumps(payload)}\n\n"

        def events():
            if call_id is None:
                yield chunk({"role": "assistant", "content": message["content"]})
            else:
                tc = message["tool_calls"][0]
                yield chunk({"role": "assistant", "content": None,
                             "tool_calls": [{"index": 0, "id": call_id, "type": "function",
                                             "function": {"name": tc["function"]["name"], "arguments": tc["function"]["arguments"]}}]})
            yield chunk({}, finish)
            usage_chunk = {"id": rid, "object": "chat.completion.chunk", "created": created, "model": model, "choices": [], "usage": usage}
            yield f"data: {json.dumps(usage_chunk)}\n\n"
            yield "data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    return app


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--script", required=True)
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    with open(args.script) as f:
        script = json.load(f)
    uvicorn.run(create_app(script), host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
