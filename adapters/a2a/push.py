"""Push notifications: which webhook URLs are accepted, and the sender.

Only http(s) URLs are accepted. Unless private networks are allowed, a URL
whose host resolves to a loopback, private, link-local or cloud-metadata
address is refused too (the SDK's policy), so a client cannot make the
server POST into its own network. A webhook that fails is logged; the
task goes on. When traced, each POST carries the trace (``traceparent``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

import httpx
from a2a.server.tasks import BasePushNotificationSender, PushNotificationConfigStore
from a2a.utils.push_url_validator import validate_push_notification_url

from agenthost.agents.observe import outgoing

PushURLValidator = Callable[[str], Awaitable[bool]]
TIMEOUT = httpx.Timeout(10.0, connect=5.0)


async def http_url(url: str) -> bool:
    """An absolute http(s) URL with a host."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


async def _with_trace(request: httpx.Request) -> None:
    request.headers.update(outgoing())


class FirstUseTransport(httpx.AsyncBaseTransport):
    """httpx's own transport, made on the first request.

    Making it imports httpcore (and trio, when installed) and loads the CA
    certificates: a few hundred milliseconds of start-up for a server that may
    never post to a webhook.
    """

    def __init__(self) -> None:
        self._transport: httpx.AsyncHTTPTransport | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._transport is None:
            self._transport = httpx.AsyncHTTPTransport()
        return await self._transport.handle_async_request(request)

    async def aclose(self) -> None:
        if self._transport is not None:
            await self._transport.aclose()


def new_client() -> httpx.AsyncClient:
    """The client posting to webhooks: bounded in time, the trace context sent along."""
    return httpx.AsyncClient(
        timeout=TIMEOUT, event_hooks={"request": [_with_trace]}, transport=FirstUseTransport()
    )


def url_validator(*, private_networks: bool) -> PushURLValidator:
    return http_url if private_networks else validate_push_notification_url


def build_sender(
    client: httpx.AsyncClient, store: PushNotificationConfigStore, validator: PushURLValidator
) -> BasePushNotificationSender:
    return BasePushNotificationSender(client, store, push_url_validator=validator)
