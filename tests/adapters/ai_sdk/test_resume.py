"""Resumable chats (``AGENTHOST_AI_SDK_RESUME=true``) over a socket: a chat's run goes on
when its client drops, ``GET /ai-sdk/{agent}/{chatId}/stream`` replays it from its start
and follows it to its end (204 when the chat has no run going on, for another key too),
and a tool approval asked and answered still runs the tool once."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

from agenthost.agents import ChatAgent, tool
from agenthost.agents.models import FunctionModel, ModelRequest
from agenthost.agents.models.testing import Reply, call
from agenthost.app.server import create_app
from agenthost.app.settings import Settings
from tests.adapters.ai_sdk.test_approvals import asked_message
from tests.adapters.ai_sdk.test_chat import AGENTS, kinds, text, user
from tests.adapters.approvals import RAN, Deleter
from tests.upstream import serve_in_thread

KEYS = {"alice": "alice-key-0123456789", "bob": "bob-key-0123456789ab"}


class Gate:
    """Holds a tool until a test (or another agent's tool) opens it."""

    def __init__(self) -> None:
        self.opened = threading.Event()
        self.waiting = threading.Event()

    async def wait(self) -> str:
        self.waiting.set()
        await asyncio.to_thread(self.opened.wait)  # a cancel of the run ends this at once
        return "released"

    def reset(self) -> None:
        self.opened.clear()
        self.waiting.clear()


GATE = Gate()


@tool
async def wait() -> str:
    """Wait until released."""
    return await GATE.wait()


@tool
def release() -> str:
    """Let the waiting tool go on."""
    GATE.opened.set()
    return "ok"


def _slow(request: ModelRequest) -> Reply:
    if request.messages[-1].role == "tool":
        return "All done."
    return ["Working on it. ", call("wait", "{}")]


def _release(request: ModelRequest) -> Reply:
    if request.messages[-1].role == "tool":
        return "Released."
    return call("release", "{}")


SLOW = ChatAgent("slow", FunctionModel(_slow), tools=(wait,))
RELEASE = ChatAgent("release", FunctionModel(_release), tools=(release,))
DELETER = Deleter()


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    agents = {**AGENTS, "slow": SLOW, "release": RELEASE, "deleter": DELETER.agent}
    settings = Settings(
        adapters=["ai_sdk"],
        playground=False,
        api_keys=[f"{n}:{k}" for n, k in KEYS.items()],
        ai_sdk_resume=True,  # type: ignore[call-arg]
    )
    app = create_app(settings, agents)  # type: ignore[arg-type]
    with serve_in_thread(app, lifespan=True) as base:
        yield f"{base}/ai-sdk"


@pytest.fixture
def gate() -> Iterator[Gate]:
    GATE.reset()
    yield GATE
    GATE.opened.set()  # a run a failed test left waiting ends


def headers(who: str = "alice") -> dict[str, str]:
    return {"Authorization": f"Bearer {KEYS[who]}"}


def body(chat: str, text: str = "do it") -> dict[str, Any]:
    return {"id": chat, "messages": [user(text)], "trigger": "submit-message"}


def chunks_of(lines: Iterator[str]) -> Iterator[Any]:
    for line in lines:
        if not line.startswith("data: "):
            continue
        data = line.removeprefix("data: ")
        if data == "[DONE]":
            return
        yield orjson.loads(data)


def until(chunks: Iterator[Any], kind: str) -> list[Any]:
    """The chunks up to the first of type ``kind``."""
    seen = []
    for chunk in chunks:
        seen.append(chunk)
        if chunk["type"] == kind:
            return seen
    raise AssertionError(f"the stream ended before {kind!r}: {seen}")


def same(chunks: list[Any]) -> list[Any]:
    """The chunks without their part ids (each stream names its text parts anew)."""
    return [{k: v for k, v in c.items() if k != "id"} for c in chunks]


def test_a_dropped_stream_is_replayed_from_its_start_and_followed(url: str, gate: Gate) -> None:
    chat = f"chat-{uuid.uuid4().hex}"
    with httpx.Client(base_url=url, headers=headers(), timeout=30) as c:
        with c.stream("POST", "/slow", json=body(chat)) as first:
            assert first.status_code == 200
            before = until(chunks_of(first.iter_lines()), "tool-input-available")
        # The client is gone; the run goes on, waiting in its tool.
        assert gate.waiting.wait(10)
        with c.stream("GET", f"/slow/{chat}/stream") as again:
            assert again.status_code == 200
            assert again.headers["x-vercel-ai-ui-message-stream"] == "v1"
            assert again.headers["content-type"].startswith("text/event-stream")
            chunks = chunks_of(again.iter_lines())
            replayed = until(chunks, "tool-input-available")
            assert same(replayed) == same(before)
            gate.opened.set()
            rest = list(chunks)
        whole = replayed + rest
        assert whole[0] == {"type": "start", "messageId": before[0]["messageId"]}
        assert kinds(whole) == [
            "start",
            "start-step",
            "text-start",
            "text-end",
            "tool-input-start",
            "tool-input-available",
            "tool-output-available",
            "finish-step",
            "start-step",
            "text-start",
            "text-end",
            "finish-step",
            "finish",
        ]
        assert text(whole) == "Working on it. \n\nAll done."
        # Over: nothing to resume.
        assert _wait_for_204(c, f"/slow/{chat}/stream")


def _wait_for_204(c: httpx.Client, path: str) -> bool:
    """The run's end is settled just after its last chunk: poll briefly for the 204."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        answer = c.get(path)
        if answer.status_code == 204:
            assert answer.content == b""
            return True
        assert answer.status_code == 200
        time.sleep(0.05)
    return False


def test_a_chat_without_a_run_is_204(url: str) -> None:
    with httpx.Client(base_url=url, headers=headers(), timeout=30) as c:
        answer = c.get("/echo/never-seen/stream")
        assert answer.status_code == 204 and answer.content == b""
        # A finished run: nothing to resume either.
        chat = f"chat-{uuid.uuid4().hex}"
        posted = c.post("/echo", json=body(chat, "hello"))
        assert posted.status_code == 200 and "hello" in posted.text
        assert _wait_for_204(c, f"/echo/{chat}/stream")


def test_another_keys_chat_is_not_found(url: str, gate: Gate) -> None:
    chat = f"chat-{uuid.uuid4().hex}"
    with (
        httpx.Client(base_url=url, headers=headers(), timeout=30) as alice,
        httpx.Client(base_url=url, headers=headers("bob"), timeout=30) as bob,
    ):
        with alice.stream("POST", "/slow", json=body(chat)) as first:
            until(chunks_of(first.iter_lines()), "tool-input-available")
        assert gate.waiting.wait(10)
        theirs = bob.get(f"/slow/{chat}/stream")
        assert theirs.status_code == 204
        with alice.stream("GET", f"/slow/{chat}/stream") as mine:
            assert mine.status_code == 200
            until(chunks_of(mine.iter_lines()), "start")
        gate.opened.set()
        assert _wait_for_204(alice, f"/slow/{chat}/stream")
        unauthenticated = httpx.get(f"{url}/slow/{chat}/stream")
        assert unauthenticated.status_code == 401


def test_bad_requests(url: str) -> None:
    with httpx.Client(base_url=url, headers=headers(), timeout=30) as c:
        unknown = c.get("/nobody/chat-1/stream")
        assert unknown.status_code == 404
        assert unknown.json()["error"]["code"] == "agent_not_found"
        long = c.get(f"/echo/{'x' * 300}/stream")
        assert long.status_code == 400
        assert long.json()["error"]["code"] == "invalid_chat_id"
        posted = c.post("/echo", json=body("x" * 300))
        assert posted.status_code == 400
        assert posted.json()["error"]["code"] == "invalid_chat_id"
        wrong = c.post("/echo/chat-1/stream", json=body("chat-1"))
        assert wrong.status_code == 405 and wrong.headers["allow"] == "GET, HEAD"
        untyped = c.post("/echo/chat-1/stream")  # no body, no Content-Type: the same 405
        assert (
            untyped.status_code == 405 and untyped.json()["error"]["code"] == "method_not_allowed"
        )
        # The server keeps serving.
        assert c.get("/echo/chat-1/stream").status_code == 204


def test_a_new_message_stops_the_chats_run_still_going(url: str, gate: Gate) -> None:
    chat = f"chat-{uuid.uuid4().hex}"
    with httpx.Client(base_url=url, headers=headers(), timeout=30) as c:
        with c.stream("POST", "/slow", json=body(chat)) as first:
            until(chunks_of(first.iter_lines()), "tool-input-available")
        assert gate.waiting.wait(10)
        with c.stream("GET", f"/slow/{chat}/stream") as old:
            old_chunks = chunks_of(old.iter_lines())
            until(old_chunks, "tool-input-available")
            with c.stream("POST", "/slow", json=body(chat, "again")) as second:
                new_chunks = chunks_of(second.iter_lines())
                until(new_chunks, "tool-input-available")
                # The old run ends cancelled: its stream ends with the error, no finish.
                [ended] = list(old_chunks)
                assert ended == {"type": "error", "errorText": "the run was cancelled"}
                gate.opened.set()
                assert text(list(new_chunks)) == "\n\nAll done."


def test_an_approval_still_runs_the_tool_once(url: str) -> None:
    chat = f"chat-{uuid.uuid4().hex}"
    with httpx.Client(base_url=url, headers=headers(), timeout=30) as c:
        hello = user("tidy up")
        first = list(
            chunks_of(c.post("/deleter", json=body(chat) | {"messages": [hello]}).iter_lines())
        )
        assert "tool-approval-request" in kinds(first)
        answered = asked_message(first, True)
        messages = [hello, answered]
        request = {"id": chat, "messages": messages, "messageId": answered["id"]}
        second = list(chunks_of(c.post("/deleter", json=request).iter_lines()))
        assert kinds(second)[:2] == ["start", "tool-output-available"]
        assert text(second) == RAN
        assert DELETER.deleted == ["/tmp/notes.txt"]
