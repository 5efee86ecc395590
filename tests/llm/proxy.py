"""A fault-injecting HTTP proxy in front of a real server, for the world-model fault tests.

It forwards every request to the upstream vLLM server and, by its settings, answers some with
HTTP errors, delays them past the client's timeout, or drops the connection after a number of
forwarded replies (as if the server had been killed mid-batch).
"""

from __future__ import annotations

import asyncio
import threading

import aiohttp
from aiohttp import web

from worldforge.net import free_port


class FaultProxy:
    def __init__(self, upstream: str, fail_first: int = 0, status: int = 500, die_after: int | None = None, delay_s: float = 0.0):
        self.upstream = upstream.rstrip("/")
        self.fail_first, self.status, self.die_after, self.delay_s = fail_first, status, die_after, delay_s
        self.port = free_port()
        self.seen = 0          # completion requests received
        self.forwarded = 0     # completion replies passed through
        self.injected = 0      # errors answered instead
        self._loop = asyncio.new_event_loop()
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        is_completion = request.path.endswith("/chat/completions")
        if is_completion:
            self.seen += 1
            if self.die_after is not None and self.forwarded >= self.die_after:
                request.transport.close()  # the server is gone: connection dropped
                raise asyncio.CancelledError
            if self.injected < self.fail_first:
                self.injected += 1
                return web.json_response({"error": {"message": "injected fault", "code": self.status}}, status=self.status)
            if self.delay_s:
                await asyncio.sleep(self.delay_s)
        root = self.upstream.removesuffix("/v1")
        async with self._session.request(request.method, root + request.path_qs, data=body, headers={"content-type": request.headers.get("content-type", "application/json")}) as up:
            payload = await up.read()
            if is_completion and up.status == 200:
                self.forwarded += 1
            return web.Response(body=payload, status=up.status, content_type=up.content_type)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)

        async def main():
            self._session = aiohttp.ClientSession()
            app = web.Application()
            app.router.add_route("*", "/{tail:.*}", self._handle)
            self._runner = web.AppRunner(app)
            await self._runner.setup()
            await web.TCPSite(self._runner, "127.0.0.1", self.port).start()
            self._started.set()

        self._loop.run_until_complete(main())
        self._loop.run_forever()

    def __enter__(self) -> FaultProxy:
        self._thread.start()
        self._started.wait(10)
        return self

    def __exit__(self, *exc) -> None:
        async def close():
            await self._runner.cleanup()
            await self._session.close()

        asyncio.run_coroutine_threadsafe(close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
