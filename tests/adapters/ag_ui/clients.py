"""Driving the AG-UI adapter in-process: a RunAgentInput in, the parsed AG-UI events out."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import httpx
from ag_ui.core import BaseEvent, Event, EventType
from asgi_lifespan import LifespanManager
from pydantic import TypeAdapter

from agenthost.agents import Agent
from agenthost.app.server import create_app
from agenthost.app.settings import Settings

EVENTS: TypeAdapter[Any] = TypeAdapter(Event)


def ag_ui_settings(**overrides: object) -> Settings:
    return Settings(adapters=["openai", "ag_ui"], **overrides)  # type: ignore[arg-type]


@asynccontextmanager
async def ag_ui_client(
    agents: Mapping[str, Agent], settings: Settings | None = None
) -> AsyncIterator[httpx.AsyncClient]:
    """An httpx client talking to the app in-process at ``/ag-ui``."""
    app = create_app(settings or ag_ui_settings(), agents)
    async with LifespanManager(app) as manager:
        transport = httpx.ASGITransport(app=manager.app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://localhost/ag-ui"
        ) as client:
            yield client


def run_input(
    messages: list[dict[str, Any]], thread: str | None = None, **more: Any
) -> dict[str, Any]:
    return {
        "threadId": thread or str(uuid.uuid4()),
        "runId": str(uuid.uuid4()),
        "messages": messages,
        **more,
    }


def user(text: str) -> dict[str, Any]:
    return {"id": str(uuid.uuid4()), "role": "user", "content": text}


async def run(
    client: httpx.AsyncClient,
    agent: str,
    body: dict[str, Any],
    headers: dict[str, str] | None = None,
) -> list[BaseEvent]:
    """POST ``body``; every ``data:`` line parsed by the official event types."""
    headers = {"accept": "text/event-stream", **(headers or {})}
    async with client.stream("POST", f"/{agent}", json=body, headers=headers) as response:
        assert response.status_code == 200, await response.aread()
        assert response.headers["content-type"].startswith("text/event-stream")
        events = [
            EVENTS.validate_json(line.removeprefix("data: "))
            async for line in response.aiter_lines()
            if line.startswith("data: ")
        ]
    return events


def types(events: list[BaseEvent]) -> list[EventType]:
    return [e.type for e in events]


def text_of(events: list[BaseEvent]) -> str:
    return "".join(e.delta for e in events if e.type == EventType.TEXT_MESSAGE_CONTENT)  # type: ignore[attr-defined]
