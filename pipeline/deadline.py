"""Model-server requests bounded as a whole, as the sources' are (sources/_http.py).

The openai client's timeout bounds each read: a server that trickles its answer, a byte
now and then, never trips it and holds the digest, notes and similar steps as long as it
likes. This transport gives each request (each of the client's retries) `seconds` for
everything: connecting, the status line and headers, and the whole body. Past it the
request fails as a timeout, which the client retries and the steps count as any other.
"""

from __future__ import annotations

import asyncio

import httpx2
import openai


class Deadline(httpx2.AsyncBaseTransport):
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.inner = httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            async with asyncio.timeout(self.seconds):
                response = await self.inner.handle_async_request(request)
                try:
                    # Raw: the client decodes the body it is given (gzip) as it would this.
                    body = b"".join([chunk async for chunk in response.aiter_raw()])
                finally:
                    await response.aclose()
        except TimeoutError:
            raise httpx2.ReadTimeout(f"no complete response within {self.seconds:g} s",
                                     request=request) from None
        return httpx2.Response(response.status_code, headers=response.headers, content=body,
                               extensions=response.extensions)

    async def aclose(self) -> None:
        await self.inner.aclose()


def client(seconds: float) -> httpx2.AsyncClient:
    """The openai package's own default client (its limits, redirects), through Deadline."""
    return openai.DefaultAsyncHttpxClient(transport=Deadline(seconds))
