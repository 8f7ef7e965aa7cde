import ipaddress
import re
from collections.abc import AsyncIterator, Iterator

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from agenthost.agents import FatalToolError, ToolError
from agenthost.agents.tools.http import HostPolicy, HTTPGetTool
from tests.upstream import serve_in_thread

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def text(request: Request) -> Response:
    return PlainTextResponse("hello from the test server")


async def big(request: Request) -> Response:
    return PlainTextResponse("x" * 5000)


async def streamed_big(request: Request) -> Response:
    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(10):
            yield b"y" * 1000

    return StreamingResponse(chunks(), media_type="text/plain")


async def image(request: Request) -> Response:
    return Response(b"\x89PNG", media_type="image/png")


async def redirect_out(request: Request) -> Response:
    return RedirectResponse("http://elsewhere.example/", status_code=302)


async def redirect_in(request: Request) -> Response:
    return RedirectResponse("/text", status_code=307)


async def missing(request: Request) -> Response:
    return PlainTextResponse("no", status_code=404)


APP = Starlette(
    routes=[
        Route("/text", text),
        Route("/big", big),
        Route("/streamed-big", streamed_big),
        Route("/image", image),
        Route("/redirect-out", redirect_out),
        Route("/redirect-in", redirect_in),
        Route("/missing", missing),
    ]
)


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with serve_in_thread(APP) as url:
        yield url


def get(url: str) -> str:
    return f'{{"url": "{url}"}}'


async def test_an_allowed_host_is_fetched_and_redirects_on_the_list_followed(
    base_url: str,
) -> None:
    http_get = HTTPGetTool(["127.0.0.1"])
    assert await http_get.run(get(f"{base_url}/text")) == "hello from the test server"
    assert await http_get.run(get(f"{base_url}/redirect-in")) == "hello from the test server"


@pytest.mark.parametrize(
    ("allowed", "path", "message"),
    [
        (["example.com"], "/text", "refused: host 127.0.0.1 is not allowed"),
        (["127.0.0.1"], "/redirect-out", "refused: host elsewhere.example is not allowed"),
        (["127.0.0.1"], "/big", "refused: body larger than 1000 bytes"),
        (["127.0.0.1"], "/streamed-big", "refused: body larger than 1000 bytes"),
        (["127.0.0.1"], "/image", "refused: content type image/png is not text"),
        (["127.0.0.1"], "/missing", "HTTP 404 Not Found"),
    ],
)
async def test_refusals_are_fatal_tool_errors(
    base_url: str, allowed: list[str], path: str, message: str
) -> None:
    http_get = HTTPGetTool(allowed, max_bytes=1000)
    with pytest.raises(FatalToolError, match=re.escape(message)):
        await http_get.run(get(f"{base_url}{path}"))


async def test_a_listed_name_may_not_resolve_to_a_loopback_address(base_url: str) -> None:
    port = base_url.rsplit(":", 1)[1]
    http_get = HTTPGetTool(["localhost"])
    with pytest.raises(FatalToolError, match=r"refused: localhost resolves to .*non-public"):
        await http_get.run(get(f"http://localhost:{port}/text"))
    allowed = HTTPGetTool(["localhost", "127.0.0.0/8", "::1"])
    assert await allowed.run(get(f"http://localhost:{port}/text")) == "hello from the test server"


async def test_bad_input_names_the_field() -> None:
    http_get = HTTPGetTool(["example.com"])
    with pytest.raises(ToolError, match="url: must be an http"):
        await http_get.run(get("file:///etc/passwd"))
    with pytest.raises(ToolError, match="method: not allowed"):
        await http_get.run('{"url": "http://example.com", "method": "POST"}')


def test_the_policy() -> None:
    policy = HostPolicy(["api.example.com", "*.example.org", "10.1.0.0/16"])
    assert policy.allows_host("API.example.com")
    assert policy.allows_host("a.b.example.org")
    assert not policy.allows_host("example.org")
    assert not policy.allows_host("evil-example.org")
    assert policy.allows_host("10.1.2.3")
    assert not policy.allows_host("10.2.0.1")
    assert not policy.allows_host("8.8.8.8")  # an IP literal must be listed
    assert policy.allows_address(ipaddress.ip_address("93.184.216.34"))
    assert not policy.allows_address(ipaddress.ip_address("169.254.169.254"))
    assert not policy.allows_address(ipaddress.ip_address("::ffff:127.0.0.1"))
    assert policy.allows_address(ipaddress.ip_address("10.1.9.9"))
    with pytest.raises(ValueError, match="at least one"):
        HostPolicy([])
    with pytest.raises(ValueError, match="not a host name"):
        HostPolicy(["http://example.com/"])
