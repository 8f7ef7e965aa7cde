"""``http_get``: fetch a web page or API response, only from hosts the config allows.

Off unless the config lists allowed hosts. Entries are host names
(``api.example.com``), wildcards for subdomains (``*.example.com``), IP
addresses or networks (``10.0.0.0/8``). A host is fetched only when it
matches an entry, and only at public addresses: a name that resolves to a
private, loopback, link-local or otherwise non-public address is refused
unless that address (or its network) is listed too, so a listed name cannot
be pointed at internal services. The check happens in the resolver the
connection uses, so a second DNS answer cannot slip past it.

Redirects are followed (at most ``max_redirects``) only to allowed hosts;
bodies over ``max_bytes`` and content types that are not text (``text/*``,
JSON, XML, JavaScript) are refused. Requires the ``tools-http`` extra.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from agenthost.agents.errors import FatalToolError, ToolError
from agenthost.agents.tools.base import BaseTool, ToolOptions

try:
    import aiohttp
    from aiohttp.abc import AbstractResolver, ResolveResult
    from aiohttp.resolver import DefaultResolver
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "http_get needs the tools-http extra: pip install 'agenthost[tools-http]'"
    ) from exc

if TYPE_CHECKING:
    from agenthost.agents.tools.events import ToolHooks

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

DEFAULT_MAX_BYTES = 1_000_000
DEFAULT_TIMEOUT = 20.0
_REDIRECTS = (301, 302, 303, 307, 308)
_TEXT_TYPES = ("application/json", "application/xml", "application/javascript")


class HostPolicy:
    """Which hosts and addresses may be fetched."""

    def __init__(self, allowed: Sequence[str]) -> None:
        if not allowed:
            raise ValueError("http_get needs at least one allowed host")
        self.names: set[str] = set()
        self.suffixes: list[str] = []
        self.networks: list[Network] = []
        for entry in (e.strip().lower() for e in allowed):
            if entry.startswith("*."):
                self.suffixes.append(entry[1:])
            elif (network := _network(entry)) is not None:
                self.networks.append(network)
            elif entry and "/" not in entry and ":" not in entry:
                self.names.add(entry.rstrip("."))
            else:
                raise ValueError(f"not a host name, *.domain, IP address or network: {entry!r}")

    def allows_host(self, host: str) -> bool:
        host = host.lower().rstrip(".")
        address = _address(host)
        if address is not None:
            return self.allows_address(address, listed_only=True)
        return host in self.names or any(host.endswith(s) for s in self.suffixes)

    def allows_address(self, address: Address, *, listed_only: bool = False) -> bool:
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
            address = address.ipv4_mapped
        if any(address in network for network in self.networks):
            return True
        return not listed_only and address.is_global and not address.is_multicast


class _Refused(OSError):
    """A host or address the policy does not allow."""


class _GuardedResolver(AbstractResolver):
    """Resolves names as usual, then refuses any address the policy does not allow."""

    def __init__(self, policy: HostPolicy) -> None:
        self.policy = policy
        self.inner = DefaultResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        results = await self.inner.resolve(host, port, family)
        for result in results:
            address = ipaddress.ip_address(result["host"].split("%", 1)[0])
            if not self.policy.allows_address(address):
                raise _Refused(f"{host} resolves to {address}, a non-public address not allowed")
        return results

    async def close(self) -> None:
        await self.inner.close()


class HTTPGetTool(BaseTool):
    """GET a URL on an allowed host and return its text."""

    def __init__(
        self,
        allowed_hosts: Sequence[str],
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_redirects: int = 5,
        options: ToolOptions | None = None,
        hooks: Sequence[ToolHooks] = (),
        name: str = "http_get",
    ) -> None:
        description = (
            "Fetch a URL with HTTP GET and return the response body as text. "
            f"Only these hosts are allowed: {', '.join(allowed_hosts)}."
        )
        options = options or ToolOptions(timeout=DEFAULT_TIMEOUT)
        super().__init__(name, description, options=options, hooks=hooks)
        self.policy = HostPolicy(allowed_hosts)
        self.max_bytes = max_bytes
        self.max_redirects = max_redirects

    @property
    def parameters(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {"url": {"type": "string", "description": "An http(s) URL."}},
            "required": ["url"],
            "additionalProperties": False,
        }

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        url = arguments.get("url")
        extra = sorted(set(arguments) - {"url"})
        if extra:
            raise ToolError(f"invalid arguments for {self.name}: {extra[0]}: not allowed")
        if not isinstance(url, str) or urlsplit(url).scheme not in ("http", "https"):
            raise ToolError(f"invalid arguments for {self.name}: url: must be an http(s) URL")
        return {"url": url}

    async def invoke(self, arguments: dict[str, Any]) -> str:
        url: str = arguments["url"]
        connector = aiohttp.TCPConnector(resolver=_GuardedResolver(self.policy))
        async with aiohttp.ClientSession(connector=connector, trust_env=False) as session:
            for _ in range(self.max_redirects + 1):
                self._check(url)
                try:
                    async with session.get(url, allow_redirects=False) as response:
                        if response.status in _REDIRECTS and "Location" in response.headers:
                            url = urljoin(url, response.headers["Location"])
                            continue
                        return await self._read(url, response)
                except aiohttp.ClientConnectorError as exc:
                    if isinstance(exc.os_error, _Refused):
                        raise FatalToolError(f"refused: {exc.os_error}") from exc
                    raise ToolError(f"cannot connect to {exc.host}: {exc.os_error}") from exc
        raise FatalToolError(f"more than {self.max_redirects} redirects")

    def _check(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise FatalToolError(f"refused: {url} is not an http(s) URL")
        if not self.policy.allows_host(parts.hostname):
            raise FatalToolError(f"refused: host {parts.hostname} is not allowed")

    async def _read(self, url: str, response: aiohttp.ClientResponse) -> str:
        if response.status >= 400:
            error = FatalToolError if response.status < 500 else ToolError
            raise error(f"GET {url}: HTTP {response.status} {response.reason or ''}".strip())
        kind = response.content_type
        if not (
            kind.startswith("text/") or kind in _TEXT_TYPES or kind.endswith(("+json", "+xml"))
        ):
            raise FatalToolError(f"refused: content type {kind} is not text")
        if (response.content_length or 0) > self.max_bytes:
            raise FatalToolError(f"refused: body larger than {self.max_bytes} bytes")
        body = bytearray()
        async for chunk in response.content.iter_chunked(64 * 1024):
            body += chunk
            if len(body) > self.max_bytes:
                raise FatalToolError(f"refused: body larger than {self.max_bytes} bytes")
        try:
            return body.decode(response.charset or "utf-8", errors="replace")
        except LookupError:  # a charset Python does not know
            return body.decode("utf-8", errors="replace")


def _address(host: str) -> Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def _network(entry: str) -> Network | None:
    try:
        return ipaddress.ip_network(entry, strict=False)
    except ValueError:
        return None
