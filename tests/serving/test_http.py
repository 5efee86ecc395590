"""The JSON replies every worldforge server shares (:class:`worldforge.serving.http.SafeJSONResponse`)."""

import json

from worldforge.serving.http import SafeJSONResponse


def test_json_replies_read_back_as_sent_whatever_their_text():
    """The fast path (orjson) and the fallback (the standard library) both give JSON that reads back as
    the content: non-ASCII as UTF-8, a lone surrogate as its escape, an integer past 64 bits, a number key."""
    page = {"result": [[{"id": "https://x.example/a", "contents": "\"Título\"\n# Café — 12.5 kWh"}]], "score": 1.25, "ok": True, "none": None}
    body = SafeJSONResponse(page).body
    assert json.loads(body) == page and "Título".encode() in body
    assert json.loads(SafeJSONResponse({"a": "x\ud800y"}).body) == {"a": "x\ud800y"}
    assert SafeJSONResponse({"a": "x\ud800y"}).body == b'{"a":"x\\ud800y"}'
    assert json.loads(SafeJSONResponse({"n": 2**70, 1: "k"}).body) == {"n": 2**70, "1": "k"}
