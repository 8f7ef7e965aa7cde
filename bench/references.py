"""The reference servers ``protocols.py`` measures agenthost against: each protocol's floor.

    python bench/references.py KIND --port PORT [--grpc-port PORT]

- ``bare``: a bare FastAPI app with ``POST /v1/chat/completions`` (an echo,
  streamed per word through a plain ``StreamingResponse`` when asked) and
  ``POST /v1/responses`` (an echo kept in a bounded dict when ``store``);
- ``a2a``: the a2a-sdk's own server (its JSON-RPC and HTTP+JSON routes, its
  gRPC handler on ``--grpc-port``) with an echo executor and its in-memory
  task store;
- ``mcp``: the MCP SDK's ``MCPServer`` with one ``echo`` tool, stateless
  streamable HTTP;
- ``acp``: acp-sdk's own server with one ``echo`` agent.

All run under uvicorn with the options ``agenthost serve`` ends up with
(uvloop, httptools, log level warning, access log on).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import Any

import orjson
import uvicorn
from fastapi import FastAPI, Request
from starlette.responses import Response, StreamingResponse

HOST = "127.0.0.1"
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
WORDS = re.compile(r"\s*\S+\s*")  # the echo model's chunks: a word and the space after it
STORED_RESPONSES = 10_000  # the bounded dict of the bare /v1/responses


def _prompt(messages: list[dict[str, Any]]) -> str:
    content = messages[-1].get("content", "")
    return content if isinstance(content, str) else ""


def bare_app() -> Any:
    """A FastAPI app answering chat completions and responses with an echo, nothing else."""
    app = FastAPI(title="bare")
    stored: OrderedDict[str, bytes] = OrderedDict()

    def chunk(base: dict[str, Any], delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return b"data: " + orjson.dumps({**base, "choices": [choice]}) + b"\n\n"

    async def events(prompt: str) -> AsyncIterator[bytes]:
        base = {
            "id": "chatcmpl-" + os.urandom(16).hex(),
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": "echo",
        }
        yield chunk(base, {"role": "assistant", "content": ""})
        for word in WORDS.findall(prompt):
            yield chunk(base, {"content": word})
        yield chunk(base, {}, "stop")
        yield b"data: [DONE]\n\n"

    @app.post("/v1/chat/completions")
    async def chat_completions(request: Request) -> Response:
        body = orjson.loads(await request.body())
        prompt = _prompt(body["messages"])
        if body.get("stream"):
            return StreamingResponse(
                events(prompt), media_type="text/event-stream", headers=SSE_HEADERS
            )
        words = len(prompt.split())
        message = {"role": "assistant", "content": prompt, "refusal": None}
        completion = {
            "id": "chatcmpl-" + os.urandom(16).hex(),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "echo"),
            "choices": [
                {"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}
            ],
            "usage": {
                "prompt_tokens": words,
                "completion_tokens": words,
                "total_tokens": 2 * words,
            },
            "system_fingerprint": None,
        }
        return Response(orjson.dumps(completion), media_type="application/json")

    @app.post("/v1/responses")
    async def responses(request: Request) -> Response:
        body = orjson.loads(await request.body())
        text = body["input"] if isinstance(body["input"], str) else ""
        ident = os.urandom(16).hex()
        now = int(time.time())
        words = len(text.split())
        output = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
        response = {
            "id": "resp_" + ident,
            "object": "response",
            "created_at": now,
            "completed_at": now,
            "status": "completed",
            "model": body.get("model", "echo"),
            "store": bool(body.get("store", True)),
            "previous_response_id": body.get("previous_response_id"),
            "output": [
                {
                    "type": "message",
                    "id": "msg_" + ident,
                    "status": "completed",
                    "role": "assistant",
                    "content": [output],
                }
            ],
            "usage": {"input_tokens": words, "output_tokens": words, "total_tokens": 2 * words},
        }
        encoded = orjson.dumps(response)
        if response["store"]:
            stored[response["id"]] = encoded
            if len(stored) > STORED_RESPONSES:
                stored.popitem(last=False)
        return Response(encoded, media_type="application/json")

    return app


def a2a_app(port: int, grpc_port: int) -> Any:
    """The a2a-sdk's server: JSON-RPC at ``/``, HTTP+JSON routes, gRPC on ``grpc_port``."""
    import grpc.aio
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.events import EventQueue
    from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
    from a2a.server.routes import (
        create_agent_card_routes,
        create_jsonrpc_routes,
        create_rest_routes,
    )
    from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
    from a2a.types import (
        AgentCapabilities,
        AgentCard,
        AgentInterface,
        AgentSkill,
        Part,
        Task,
        TaskState,
        TaskStatus,
        a2a_pb2_grpc,
    )
    from starlette.applications import Starlette

    class EchoExecutor(AgentExecutor):
        """A task answering with the text it was sent, as one artifact (what agenthost's
        echo agent sends when its words come faster than its chunk interval)."""

        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            assert context.message is not None and context.task_id and context.context_id
            text = "".join(part.text for part in context.message.parts)
            if context.current_task is None:
                submitted = TaskStatus(state=TaskState.TASK_STATE_SUBMITTED)
                task = Task(
                    id=context.task_id,
                    context_id=context.context_id,
                    status=submitted,
                    history=[context.message],
                )
                await event_queue.enqueue_event(task)
            updater = TaskUpdater(event_queue, context.task_id, context.context_id)
            await updater.start_work()
            await updater.add_artifact(
                [Part(text=text)], artifact_id=str(uuid.uuid4()), name="answer", last_chunk=True
            )
            await updater.complete()

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            raise NotImplementedError

    url = f"http://{HOST}:{port}/"
    interfaces = [
        AgentInterface(url=url, protocol_binding=binding, protocol_version="1.0")
        for binding in ("JSONRPC", "HTTP+JSON")
    ]
    interfaces.append(
        AgentInterface(url=f"{HOST}:{grpc_port}", protocol_binding="GRPC", protocol_version="1.0")
    )
    card = AgentCard(
        name="echo",
        description="Repeats what you say.",
        version="0.1.0",
        supported_interfaces=interfaces,
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="echo", description="Echo.", tags=["echo"])],
    )
    handler = DefaultRequestHandler(EchoExecutor(), InMemoryTaskStore(), card)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        server = grpc.aio.server()
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)  # type: ignore[no-untyped-call]
        server.add_insecure_port(f"{HOST}:{grpc_port}")
        await server.start()
        try:
            yield
        finally:
            await server.stop(1)

    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, "/"),
        *create_rest_routes(handler),
    ]
    return Starlette(routes=routes, lifespan=lifespan)


def mcp_app() -> Any:
    """The MCP SDK's ``MCPServer``: one ``echo`` tool, stateless streamable HTTP at ``/mcp``."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("echo")

    @server.tool(description="Repeats what you say.")
    async def echo(message: str) -> str:
        return message

    return server.streamable_http_app(stateless_http=True)


def acp_app() -> Any:
    """acp-sdk's own server with one ``echo`` agent (the input messages back, as the agent's)."""
    import uvicorn.config

    # acp-sdk 1.0.3's Server class names a type uvicorn 0.54 no longer has; its
    # app does not use it.
    if not hasattr(uvicorn.config, "LoopSetupType"):
        uvicorn.config.LoopSetupType = str  # type: ignore[attr-defined]
    from acp_sdk.models import Message
    from acp_sdk.server import agent, create_app

    @agent(name="echo", description="Repeats what you say.")
    async def echo(input: list[Message]) -> AsyncIterator[Message]:
        for message in input:
            yield Message(role="agent/echo", parts=message.parts)

    return create_app(echo)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=["bare", "a2a", "mcp", "acp"])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--grpc-port", type=int, default=0)
    args = parser.parse_args()
    builders = {
        "bare": bare_app,
        "a2a": lambda: a2a_app(args.port, args.grpc_port),
        "mcp": mcp_app,
        "acp": acp_app,
    }
    app = builders[args.kind]()
    uvicorn.run(
        app,
        host=HOST,
        port=args.port,
        loop="uvloop",
        http="httptools",
        log_level="warning",
        timeout_graceful_shutdown=30,
    )


if __name__ == "__main__":
    main()
