"""Chat Completions over aiohttp and orjson, failing with the ``openai`` SDK's errors.

The ``openai`` provider's transport. The SDK's own request path (options,
headers, URL building, httpx2 on top of aiohttp, its SSE decoder) cost about
three quarters of a relayed call's provider CPU (``bench/relay.py``, py-spy);
this sends the same request (the SDK's headers and key, built once) straight
through one ``aiohttp`` session and decodes the answer with orjson. Failures
are the SDK's public exception types, chosen by status code with the table
:data:`STATUS_ERRORS` (as the SDK's client does, and httpx's ``map_exceptions``
maps its transport's errors), so :mod:`agenthost.agents.models.openai_errors`
reads them as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Mapping
from typing import Any

import aiohttp
import httpx2
import openai
import orjson

# The SDK's exception for each status code it names; any other 5xx is an
# InternalServerError, any other 4xx a plain APIStatusError (the SDK's own rule).
STATUS_ERRORS: dict[int, type[openai.APIStatusError]] = {
    400: openai.BadRequestError,
    401: openai.AuthenticationError,
    403: openai.PermissionDeniedError,
    404: openai.NotFoundError,
    409: openai.ConflictError,
    422: openai.UnprocessableEntityError,
    429: openai.RateLimitError,
}


class ChatClient:
    """POSTs to ``{base_url}/chat/completions`` of the SDK client ``sdk``."""

    def __init__(self, sdk: openai.AsyncOpenAI, timeout: float) -> None:
        self._sdk = sdk
        self._url = str(sdk.base_url).rstrip("/") + "/chat/completions"
        headers = {k: v for k, v in sdk.default_headers.items() if isinstance(v, str)}
        self._headers = {**headers, **sdk.auth_headers}
        # Between two reads of the socket, and to connect: what the SDK's timeout meant.
        self._timeout = aiohttp.ClientTimeout(total=None, sock_connect=timeout, sock_read=timeout)
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _client(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        session = self._session
        if session is None or session.closed or self._loop is not loop:
            # One pool per event loop; as many kept-alive connections as are in use
            # (the SDK kept 100, so more concurrent streams reconnected each time).
            connector = aiohttp.TCPConnector(limit=1000, limit_per_host=0, keepalive_timeout=30)
            # The SDK's headers as the session's: a request with none of its own
            # sends them without a per-request merge (aiohttp's ``_prepare_headers``).
            session = aiohttp.ClientSession(
                connector=connector,
                headers=self._headers,
                timeout=self._timeout,
                auto_decompress=True,
            )
            self._session, self._loop = session, loop
        return session

    async def aclose(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None
        await self._sdk.close()

    def _request(self) -> httpx2.Request:
        return httpx2.Request("POST", self._url)

    async def open(
        self, params: Mapping[str, Any], headers: Mapping[str, str] | None = None
    ) -> aiohttp.ClientResponse:
        """Send the request; a response with a 2xx status, or the SDK's error for it."""
        try:
            response = await self._client().post(
                self._url, data=orjson.dumps(params), headers=headers or None
            )
        except TimeoutError as exc:  # aiohttp's time-outs are TimeoutErrors
            raise openai.APITimeoutError(request=self._request()) from exc
        except (aiohttp.ClientError, OSError) as exc:
            raise openai.APIConnectionError(request=self._request()) from exc
        if response.status < 400:
            return response
        try:
            body = await response.read()
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise openai.APIConnectionError(request=self._request()) from exc
        finally:
            response.release()
        answer = httpx2.Response(
            response.status,
            headers=list(response.headers.items()),
            content=body,
            request=self._request(),
        )
        raise status_error(answer)

    async def complete(
        self, params: Mapping[str, Any], headers: Mapping[str, str] | None = None
    ) -> Any:
        """A non-streamed call: the decoded JSON answer."""
        response = await self.open(params, headers)
        try:
            body = await response.read()
        except TimeoutError as exc:
            raise openai.APITimeoutError(request=self._request()) from exc
        except (aiohttp.ClientError, OSError) as exc:
            raise openai.APIConnectionError(request=self._request()) from exc
        finally:
            response.release()
        return orjson.loads(body)

    async def events(self, response: aiohttp.ClientResponse) -> AsyncGenerator[Any, None]:
        """The decoded ``data`` of each SSE event of ``response`` up to ``[DONE]``.

        Comments and events without data are skipped, as the SDK's decoder
        does; an event carrying ``error`` is the SDK's ``APIError``.
        """
        try:
            buffer = b""
            content = response.content
            # readany() itself, not iter_any(): one frame less per read; b"" is the end.
            while data := await content.readany():
                buffer += data
                if b"\r" in buffer:
                    buffer = buffer.replace(b"\r\n", b"\n")
                while (end := buffer.find(b"\n\n")) >= 0:
                    block, buffer = buffer[:end], buffer[end + 2 :]
                    payload = _data(block)
                    if payload is None:
                        continue
                    if payload.startswith(b"[DONE]"):
                        await response.read()  # the rest, so the connection is kept
                        return
                    event = orjson.loads(payload)
                    if isinstance(event, dict) and event.get("error"):
                        raise _stream_error(event["error"], self._request())
                    yield event
        except TimeoutError as exc:
            raise openai.APITimeoutError(request=self._request()) from exc
        except (aiohttp.ClientError, OSError) as exc:
            raise openai.APIConnectionError(request=self._request()) from exc
        finally:
            response.release()


def status_error(response: httpx2.Response) -> openai.APIStatusError:
    """The SDK's exception for an error answer, with the message and body the SDK gives it.

    The message is ``Error code: N``, followed by the answer's ``error.message``
    when it has one; ``body`` is the answer's ``error`` object (or the whole
    decoded answer, or its text when it is not JSON).
    """
    status = response.status_code
    message = f"Error code: {status}"
    text = response.text.strip()
    body: object = text
    try:
        body = orjson.loads(text)
    except orjson.JSONDecodeError:
        pass
    else:
        error = body.get("error", body) if isinstance(body, dict) else None
        detail = error.get("message") if isinstance(error, dict) else None
        if isinstance(detail, str) and detail:
            message += f" - {detail}"
    data = body.get("error", body) if isinstance(body, dict) else body
    default = openai.InternalServerError if status >= 500 else openai.APIStatusError
    return STATUS_ERRORS.get(status, default)(message, response=response, body=data)


def _data(block: bytes) -> bytes | None:
    """The ``data`` of one SSE event (its lines joined), None when it has none."""
    if block.startswith(b"data:") and b"\n" not in block:  # the usual case: one line
        return block[6:] if block[5:6] == b" " else block[5:]
    lines = [
        line[6:] if line[5:6] == b" " else line[5:]
        for line in block.split(b"\n")
        if line.startswith(b"data:")
    ]
    return b"\n".join(lines) if lines else None


def _stream_error(error: object, request: httpx2.Request) -> openai.APIError:
    message = error.get("message") if isinstance(error, dict) else None
    if not message or not isinstance(message, str):
        message = "An error occurred during streaming"
    return openai.APIError(message=message, request=request, body=error)
