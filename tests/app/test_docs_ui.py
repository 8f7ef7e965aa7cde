"""``/docs`` works offline: the page and everything it loads come from the app."""

import re

import httpx
import pytest

from agenthost.agents import Agent, ChatAgent
from agenthost.agents.models import EchoModel
from agenthost.app.docs_ui import ASSET_PATHS
from agenthost.app.server import create_app
from agenthost.app.settings import Settings
from tests.conftest import running

pytestmark = pytest.mark.anyio

CDN_HOSTS = ("cdn.jsdelivr.net", "unpkg.com", "cdnjs.cloudflare.com", "fonts.googleapis.com")


def echo() -> dict[str, Agent]:
    return {"echo": ChatAgent("echo", EchoModel())}


async def test_the_docs_page_loads_only_the_apps_own_files() -> None:
    async with running(echo()) as (_, client):
        page = await client.get("/docs")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert "://" not in page.text  # no other host, not even the validator badge's
        assert '"validatorUrl": null' in page.text
        loaded = re.findall(r'(?:src|href)="([^"]+)"', page.text)
        assert sorted(loaded) == sorted(ASSET_PATHS)
        assert "url: '/openapi.json'" in page.text
        assert (await client.get("/openapi.json")).json()["info"]["title"] == "agenthost"
        for path in loaded:
            asset = await client.get(path)
            assert asset.status_code == 200, path
            assert asset.headers["cache-control"] == "public, max-age=86400"
            if not path.endswith(".png"):
                assert not any(host in asset.text for host in CDN_HOSTS), path
        script = await client.get("/docs/swagger-ui-bundle.js")
        assert script.headers["content-type"].startswith("text/javascript")
        assert "SwaggerUIBundle" in script.text


async def test_only_the_named_files_are_served_and_fastapis_cdn_pages_are_gone() -> None:
    async with running(echo()) as (_, client):
        assert (await client.get("/docs/redoc.standalone.js")).status_code == 404
        assert (await client.get("/docs/swagger-ui-bundle.js.map")).status_code == 404


async def test_redoc_loads_only_the_apps_own_files() -> None:
    async with running(echo()) as (_, client):
        page = await client.get("/redoc")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert "://" not in page.text  # no Google fonts, no CDN
        loaded = re.findall(r'(?:src|href)="([^"]+)"', page.text)
        assert sorted(loaded) == ["/docs/favicon.png", "/redoc/redoc.standalone.js"]
        assert 'spec-url="/openapi.json"' in page.text
        # Its footer's logo is on cdn.redoc.ly: the policy stops the browser fetching it.
        assert "img-src 'self' data:" in page.headers["content-security-policy"]
        script = await client.get("/redoc/redoc.standalone.js")
        assert script.status_code == 200
        assert script.headers["content-type"].startswith("text/javascript")


async def test_the_docs_page_follows_the_root_path() -> None:
    # Behind a proxy that mounts the app under a prefix (uvicorn --root-path).
    app = create_app(Settings(), echo())
    transport = httpx.ASGITransport(app=app, root_path="/agents")
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        page = await client.get("/agents/docs")
    assert page.status_code == 200
    assert "url: '/agents/openapi.json'" in page.text
    assert '"/agents/docs/swagger-ui-bundle.js"' in page.text
