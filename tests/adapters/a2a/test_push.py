"""Push notifications: configs are managed per task and updates reach the webhook."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from a2a.client import Client
from a2a.types import (
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    SendMessageConfiguration,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a.utils.errors import InvalidParamsError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.adapters.a2a.support import (
    a2a_settings,
    collect,
    final_task,
    in_process,
    paced_agent,
    sdk_client,
    user_message,
)
from tests.upstream import serve_in_thread

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

AGENTS = {"paced": paced_agent(words=6, delay=0.02)}


class Webhook:
    """Records what is POSTed to it; ``/broken`` always fails."""

    def __init__(self) -> None:
        self.received: list[tuple[str | None, dict[str, Any]]] = []
        self.done = threading.Event()

        async def hook(request: Request) -> Response:
            body = await request.json()
            self.received.append((request.headers.get("x-a2a-notification-token"), body))
            if (
                body.get("statusUpdate", {}).get("status", {}).get("state")
                == "TASK_STATE_COMPLETED"
            ):
                self.done.set()
            return Response(status_code=204)

        async def broken(request: Request) -> Response:
            return Response(status_code=500)

        self.app = Starlette(
            routes=[
                Route("/hook", hook, methods=["POST"]),
                Route("/broken", broken, methods=["POST"]),
            ]
        )


@pytest.fixture
def webhook() -> Iterator[tuple[Webhook, str]]:
    hook = Webhook()
    with serve_in_thread(hook.app) as url:
        yield hook, url


def push_config(url: str, id: str = "") -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(url=url, token="secret-token", id=id)


async def send_with_push(client: Client, url: str) -> Task:
    """Runs a task whose updates go to ``url``; the finished task."""
    request = user_message("go")
    request.configuration.CopyFrom(
        SendMessageConfiguration(task_push_notification_config=push_config(url))
    )
    return final_task(await collect(client, request))


async def test_updates_are_posted_to_the_webhook_with_its_token(
    webhook: tuple[Webhook, str],
) -> None:
    hook, url = webhook
    async with (
        in_process(AGENTS) as http,
        await sdk_client(
            "http://localhost/a2a/paced", "JSONRPC", http=http, streaming=False
        ) as client,
    ):
        task = await send_with_push(client, f"{url}/hook")
        for _ in range(100):
            if hook.done.is_set():
                break
            await anyio.sleep(0.05)
        assert hook.done.is_set(), f"no completed update reached the webhook: {hook.received}"
    assert {token for token, _ in hook.received} == {"secret-token"}
    task_ids = {
        next(iter(body.values()))["taskId"] for _, body in hook.received if "task" not in body
    }
    assert task_ids == {task.id}


async def test_configs_are_set_read_listed_and_deleted_and_a_failing_hook_fails_nothing(
    webhook: tuple[Webhook, str],
) -> None:
    _, url = webhook
    async with (
        in_process(AGENTS) as http,
        await sdk_client(
            "http://localhost/a2a/paced", "JSONRPC", http=http, streaming=False
        ) as client,
    ):
        task = await send_with_push(client, f"{url}/broken")
        assert task.status.state == TaskState.TASK_STATE_COMPLETED  # despite the failing hook
        config = push_config(f"{url}/hook", id="second")
        config.task_id = task.id
        created = await client.create_task_push_notification_config(config)
        assert created.url == f"{url}/hook"
        got = await client.get_task_push_notification_config(
            GetTaskPushNotificationConfigRequest(task_id=task.id, id="second")
        )
        assert got.token == "secret-token"
        listed = await client.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task.id)
        )
        assert "second" in {c.id for c in listed.configs}
        await client.delete_task_push_notification_config(
            DeleteTaskPushNotificationConfigRequest(task_id=task.id, id="second")
        )
        listed = await client.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task.id)
        )
        assert "second" not in {c.id for c in listed.configs}
        refused = push_config("ftp://example.com/hook")
        refused.task_id = task.id
        with pytest.raises(InvalidParamsError):
            await client.create_task_push_notification_config(refused)


async def test_by_default_webhooks_into_private_networks_are_refused() -> None:
    async with in_process(AGENTS, a2a_settings(a2a_push_private_networks=False)) as http:
        client = await sdk_client(
            "http://localhost/a2a/paced", "JSONRPC", http=http, streaming=False
        )
        async with client:
            task = final_task(await collect(client, user_message("go")))
            config = push_config("http://127.0.0.1:9/hook")
            config.task_id = task.id
            with pytest.raises(InvalidParamsError):
                await client.create_task_push_notification_config(config)
