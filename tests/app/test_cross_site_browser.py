"""A page on another loopback port cannot run an agent with a body it sends untyped,
in headless Chromium (Debian's chromium + chromium-driver, driven by Selenium).

``fetch(url, {mode: "no-cors", body: new Blob([...])})`` needs no CORS
preflight and sends the body with no ``Content-Type`` (a Blob typed
``application/json`` too: no-cors drops the type). A page on any
``http://localhost:PORT`` is an allowed Origin, so only the type check
stands between it and the agents: every surface must answer 415, and the
agent must never run. The server records what Chromium really sent.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.responses import HTMLResponse
from starlette.types import Message, Receive, Scope, Send

from agenthost.agents import ChatAgent
from agenthost.agents.models import FunctionModel, ModelRequest
from agenthost.app.server import create_app
from agenthost.app.settings import Settings
from tests.upstream import serve_in_thread

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (CHROMIUM and CHROMEDRIVER),
        reason="needs chromium and chromedriver (apt-get install chromium chromium-driver)",
    ),
]

A2A_03 = {
    "kind": "message",
    "messageId": "m",
    "role": "user",
    "parts": [{"kind": "text", "text": "hi"}],
}
# Each surface's request that runs the agent (A2A as a client without a version header
# sends it: a browser cannot add A2A-Version to a no-cors request).
RUNS: dict[str, Any] = {
    "/v1/chat/completions": {"model": "counter", "messages": [{"role": "user", "content": "hi"}]},
    "/v1/responses": {"model": "counter", "input": "hi"},
    "/a2a/counter": {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "message/send",
        "params": {"message": A2A_03},
    },
    "/a2a/counter/v1/message:send": {
        "message": {"messageId": "m", "role": "ROLE_USER", "content": [{"text": "hi"}]}
    },
    "/acp/runs": {"agent_name": "counter", "input": [{"parts": [{"content": "hi"}]}]},
    "/mcp": {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "counter", "arguments": {"message": "hi"}},
    },
}
BLOB_TYPES = ["", "application/json", "text/plain"]

ATTACK = """
const [base, runs, types, done] = arguments;
const sent = [];
for (const [path, body] of Object.entries(runs)) {
  for (const type of types) {
    try {
      const answer = await fetch(base + path, {
        method: "POST",
        mode: "no-cors",
        headers: {"Accept": "application/json, text/event-stream"},
        body: new Blob([JSON.stringify(body)], {type}),
      });
      sent.push([path, type, answer.type]);
    } catch (error) {
      sent.push([path, type, String(error)]);
    }
  }
}
done(sent);
"""


class Counter:
    def __init__(self) -> None:
        self.runs = 0

    def __call__(self, request: ModelRequest) -> str:
        self.runs += 1
        return "ran"


class Recorder:
    """What reached the server: method, path, headers, and the status answered."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: list[dict[str, Any]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        entry: dict[str, Any] = {"method": scope["method"], "path": scope["path"]}
        entry |= {"headers": headers, "status": None}
        self.seen.append(entry)

        async def status(message: Message) -> None:
            if message["type"] == "http.response.start":
                entry["status"] = message["status"]
            await send(message)

        await self.app(scope, receive, status)


async def page(scope: Scope, receive: Receive, send: Send) -> None:
    """The other site: an empty page on another loopback port."""
    if scope["type"] == "http":
        await HTMLResponse("<!doctype html><title>elsewhere</title>")(scope, receive, send)


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, Counter, Recorder]]:
    counter = Counter()
    agents = {"counter": ChatAgent("counter", FunctionModel(counter), description="Counts.")}
    settings = Settings(adapters=["openai", "a2a", "mcp", "acp"])
    recorder = Recorder(create_app(settings, agents))
    with serve_in_thread(recorder, lifespan=True) as url:
        yield url.replace("127.0.0.1", "localhost"), counter, recorder


@pytest.fixture(scope="module")
def elsewhere() -> Iterator[str]:
    with serve_in_thread(page) as url:
        yield url.replace("127.0.0.1", "localhost")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="agenthost-chromium-")
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(CHROMEDRIVER))
    driver.set_script_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def test_an_untyped_no_cors_post_from_another_port_runs_no_agent(
    browser: Any, served: tuple[str, Counter, Recorder], elsewhere: str
) -> None:
    base, counter, recorder = served
    browser.get(elsewhere + "/")
    sent = browser.execute_async_script(ATTACK, base, RUNS, BLOB_TYPES)
    # Every fetch left the page (an opaque answer: the page cannot read it).
    assert [answer for _, _, answer in sent] == ["opaque"] * len(RUNS) * len(BLOB_TYPES), sent
    posts = [e for e in recorder.seen if e["method"] == "POST"]
    assert len(posts) == len(RUNS) * len(BLOB_TYPES), json.dumps(posts, indent=1)
    for post in posts:
        headers = post["headers"]
        # What made it an attack: a body, an allowed Origin, and (but for text/plain) no type.
        assert int(headers["content-length"]) > 0 and headers["origin"] == elsewhere, post
        assert headers.get("content-type") in (None, "text/plain"), post
        assert post["status"] == 415, post
    untyped = [p for p in posts if "content-type" not in p["headers"]]
    assert len(untyped) == 2 * len(RUNS)  # the Blob's application/json was dropped
    assert counter.runs == 0
