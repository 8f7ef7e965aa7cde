"""PostgreSQL stopped and started again under A2A traffic.

Every A2A request that needs the task database gets the protocol's
"unavailable" error while it is down (JSON-RPC -32603, HTTP+JSON 503, both
saying so, with ``kind: unavailable``; gRPC UNAVAILABLE), never the driver's
text; the log says it once, and once more when it is back; then every request
succeeds again, and no turn is stored for a request refused during the outage,
not even one whose run was going when the database went (its turn is kept
only once its task's end is saved: :mod:`agenthost.adapters.a2a.turns`).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from typing import Any

import anyio
import grpc
import grpc.aio
import httpx
import pytest
from a2a.types import GetTaskRequest, a2a_pb2_grpc

from tests.conftest import running
from tests.scale.test_outage import AGENTS, V1, settings
from tests.stores import postgres

pytestmark = pytest.mark.anyio

UNAVAILABLE = "the A2A task store is unavailable, try again shortly"
RAW = ("Errno", "asyncpg", "sqlalchemy", "Connect call failed", "connection", "Traceback")


def message(text: str, context: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER"}
    body["parts"] = [{"text": text}]
    if context is not None:
        body["contextId"] = context
    return body


def rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def outcome(reply: httpx.Response) -> str:
    """``ok``, ``unavailable`` (the protocol's error, checked), or the unexpected answer."""
    text = reply.text
    assert not any(raw in text for raw in RAW), text
    if reply.headers.get("content-type", "").startswith("text/event-stream"):
        events = [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]
        body = next((event for event in events if "error" in event), events[-1])
    else:
        body = reply.json()
    if reply.status_code == 200 and "error" not in body:
        return "ok"
    error = body["error"]
    if reply.status_code == 503:  # HTTP+JSON
        assert error["code"] == 503 and error["message"] == UNAVAILABLE, body
    else:  # JSON-RPC, in a 200
        assert reply.status_code == 200 and error["code"] == -32603, body
        assert error["message"] == UNAVAILABLE, body
        assert error["data"][0]["metadata"] == {"kind": "unavailable", "retryable": True}, body
    return "unavailable"


async def test_postgresql_stopped_and_started_under_a2a_traffic(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    context, cut_context = uuid.uuid4().hex, uuid.uuid4().hex
    seen: list[str] = []  # the recall turns whose clients got an answer
    turns: list[tuple[str, str]] = []  # every recall turn and its outcome
    outcomes: list[tuple[float, str, str]] = []  # (time, request, outcome)

    with postgres() as database:
        values = settings("memory", a2a_task_store=database.url)
        grpc_port = values.protocol("a2a").grpc_port  # type: ignore[attr-defined]
        async with (
            running(AGENTS, values) as (_, client),
            grpc.aio.insecure_channel(f"127.0.0.1:{grpc_port}") as channel,
        ):
            stub = a2a_pb2_grpc.A2AServiceStub(channel)  # type: ignore[no-untyped-call]

            async def grpc_get_task() -> str:
                try:
                    await stub.GetTask(GetTaskRequest(id=task_id, tenant="echo"))
                except grpc.aio.AioRpcError as error:
                    status = (error.code(), error.details())
                    expected = (grpc.StatusCode.UNAVAILABLE, UNAVAILABLE)
                    return "unavailable" if status == expected else repr(status)
                return "ok"

            before = (
                await client.post(
                    "/a2a/echo", json=rpc("SendMessage", {"message": message("before")}), headers=V1
                )
            ).json()
            task_id = before["result"]["task"]["id"]
            requests = {
                "JSON-RPC SendMessage": lambda: client.post(
                    "/a2a/echo", json=rpc("SendMessage", {"message": message("hi")}), headers=V1
                ),
                "JSON-RPC GetTask": lambda: client.post(
                    "/a2a/echo", json=rpc("GetTask", {"id": task_id}), headers=V1
                ),
                "JSON-RPC ListTasks": lambda: client.post(
                    "/a2a/echo", json=rpc("ListTasks", {"pageSize": 1}), headers=V1
                ),
                "JSON-RPC SendStreamingMessage": lambda: client.post(
                    "/a2a/echo",
                    json=rpc("SendStreamingMessage", {"message": message("hi")}),
                    headers={**V1, "accept": "text/event-stream"},
                ),
                "HTTP+JSON message:send": lambda: client.post(
                    "/a2a/echo/message:send", json={"message": message("hi")}, headers=V1
                ),
                "HTTP+JSON GET task": lambda: client.get(f"/a2a/echo/tasks/{task_id}", headers=V1),
            }
            kinds = [*requests, "gRPC GetTask"]
            stop = anyio.Event()

            async def traffic() -> None:
                while not stop.is_set():
                    for name, request in requests.items():
                        outcomes.append((time.monotonic(), name, outcome(await request())))
                    outcomes.append((time.monotonic(), "gRPC GetTask", await grpc_get_task()))
                    await anyio.sleep(0.05)

            async def conversation() -> None:
                turn = 0
                while not stop.is_set():
                    turn += 1
                    text = f"turn{turn}"
                    send = rpc("SendMessage", {"message": message(text, context)})
                    reply = await client.post("/a2a/recall", json=send, headers=V1)
                    turns.append((text, outcome(reply)))
                    if turns[-1][1] == "ok":
                        seen.append(text)
                    await anyio.sleep(0.02)

            cut: list[str] = []  # the outcome of the run the outage cut

            async def cut_short() -> None:
                # Its run sleeps 2 s in the model, started before the database stops:
                # it finishes (and would save its turn) while the database is down.
                send = rpc("SendMessage", {"message": message("nap 2", cut_context)})
                cut.append(outcome(await client.post("/a2a/recall", json=send, headers=V1)))

            with anyio.fail_after(60):
                async with anyio.create_task_group() as group:
                    group.start_soon(traffic)
                    group.start_soon(conversation)
                    await anyio.sleep(1)
                    group.start_soon(cut_short)
                    await anyio.sleep(0.3)
                    database.stop()
                    stopped = time.monotonic()
                    await anyio.sleep(3)
                    database.start()
                    started = time.monotonic()
                    while not any(t > started and o == "ok" for t, _, o in outcomes):
                        assert time.monotonic() - started < 15, (
                            "no success after PostgreSQL came back"
                        )
                        await anyio.sleep(0.1)
                    recovered = min(t for t, _, o in outcomes if t > started and o == "ok")
                    await anyio.sleep(1.5)
                    stop.set()

            final = rpc("SendMessage", {"message": message("final", context)})
            answer = (await client.post("/a2a/recall", json=final, headers=V1)).json()
            history = answer["result"]["task"]["artifacts"][0]["parts"][0]["text"]
            final = rpc("SendMessage", {"message": message("final", cut_context)})
            answer = (await client.post("/a2a/recall", json=final, headers=V1)).json()
            cut_history = answer["result"]["task"]["artifacts"][0]["parts"][0]["text"]

    # The run the outage cut: its client got "unavailable", and its turn is not stored.
    assert cut == ["unavailable"], cut
    assert cut_history == "final", cut_history

    during = [o for t, _, o in outcomes if stopped + 0.5 < t < started]
    after = [(name, o) for t, name, o in outcomes if t > recovered + 0.2]
    assert {o for _, _, o in outcomes} <= {"ok", "unavailable"}, outcomes
    assert during and set(during) == {"unavailable"}, during
    assert after and all(o == "ok" for _, o in after), after
    # Every request kind both failed (cleanly) and succeeded again.
    assert {n for _, n, o in outcomes if o == "unavailable"} == set(kinds)
    assert recovered - started < 5, recovered - started
    # No phantom turn: every request is refused before its run starts once the outage
    # is known, and a run going when PostgreSQL went keeps its turn only if its task's
    # end was saved (then its client got it).
    stored = history.split(" | ")
    assert stored[-1] == "final" and set(seen) <= set(stored), (history, seen)
    phantoms = [turn for turn in stored[:-1] if turn not in seen]
    assert not phantoms, (phantoms, turns)
    # The log: one warning for the outage, one line when it is back (INFO, not captured
    # here), and no line per refused request (there were hundreds).
    warnings = [r for r in caplog.records if r.name != "agenthost.watchdog"]
    down = [r for r in warnings if "A2A task store unreachable" in r.getMessage()]
    assert len(down) == 1, [r.getMessage() for r in warnings]
    assert len(during) > 50, len(during)
    assert len(warnings) <= 10, [r.getMessage()[:200] for r in warnings]
