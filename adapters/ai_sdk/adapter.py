"""The Vercel AI SDK's UI message stream over HTTP: ``POST /ai-sdk/{agent}`` with the body
``useChat``'s ``DefaultChatTransport`` sends, answered by the UI message stream (SSE with
``x-vercel-ai-ui-message-stream: v1``). Stateless: the transport sends the whole chat;
only a chat that waits for a tool approval is kept, until answered (``approvals.py``).
With resume on, a chat's run outlives its request and ``GET /ai-sdk/{agent}/{chatId}/stream``
picks its stream up again (``resume.py``).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import APIRouter
from pydantic import ValidationError
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from agenthost.adapters.ai_sdk.approvals import NAMESPACE, ChatSession, claim, not_pending
from agenthost.adapters.ai_sdk.convert import options_of, replies_in, to_run
from agenthost.adapters.ai_sdk.errors import AISDKError, from_exception, from_validation_error
from agenthost.adapters.ai_sdk.resume import MAX_CHAT_ID, PROTOCOL, ChatRuns, valid_chat_id, view
from agenthost.adapters.ai_sdk.resume import NAMESPACE as STREAMS
from agenthost.adapters.ai_sdk.schemas import ChatRequest
from agenthost.adapters.ai_sdk.settings import Settings
from agenthost.adapters.ai_sdk.stream import UIMessageChunks
from agenthost.adapters.base import AdapterContext, RequestRules, principal_of
from agenthost.adapters.body_limits import BodyProblem, load_json, off_loop, refusal
from agenthost.adapters.routing import allowed_methods
from agenthost.adapters.sse import event_stream
from agenthost.agents import SessionKey

CHAT_REQUEST = {
    "type": "object",
    "required": ["messages"],
    "properties": {
        "id": {"type": "string"},
        "messages": {"type": "array", "minItems": 1, "items": {"type": "object"}},
        "trigger": {"type": "string"},
        "messageId": {"type": "string"},
    },
}
"""The body in the OpenAPI document (the route reads and validates it itself)."""

HEADERS = {
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",
    "x-vercel-ai-ui-message-stream": "v1",
}


class AISDKAdapter:
    """Serves every exposed agent to ``useChat``."""

    root_router: APIRouter | None = None

    name = "ai_sdk"
    at_bare_prefix = False
    # The reconnect URL reads no body: a POST there, typed or not, is the router's 405.
    request_rules = RequestRules(bodyless_posts=r"/[^/]+/[^/]+/stream")

    def __init__(self, context: AdapterContext, settings: Settings | None = None) -> None:
        self.context = context
        self.settings = settings or Settings()
        new_memory = context.new_memory
        # The chats waiting for an approval, apart from any protocol's sessions.
        self.approvals = new_memory(NAMESPACE) if new_memory is not None else context.memory
        # Each chat's current run, for a client that resumes its stream.
        streams = new_memory(STREAMS) if new_memory is not None else context.memory
        asking = self.approvals if self.settings.approvals else None
        self.chat_runs = ChatRuns(context, streams, asking)
        context.durable.handle(PROTOCOL, self.chat_runs)
        self._router = self._build_router()

    @property
    def router(self) -> APIRouter:
        return self._router

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        yield

    def error_response(self, status: int, message: str, *, code: str) -> Response:
        return AISDKError(status, message, code=code).response()

    async def chat(self, request: Request, name: str) -> Response:
        principal = principal_of(request)
        agent = self.context.find_agent(principal, name)
        if agent is None:
            raise AISDKError(404, f"agent {name!r} not found", code="agent_not_found")
        body = await read_request(request)
        key = SessionKey(agent.name, body.id, principal) if body.id else None
        resume = None
        if replies := replies_in(body):
            if key is None or not self.settings.approvals:
                raise not_pending(body.id or "", replies[0].call_id)
            resume = await claim(self.approvals, key, replies)
            messages, options = [resume.answers], options_of(body)
        else:
            messages, options = to_run(body)
        session = None
        if key is not None and self.settings.approvals:  # a session to ask in: answers find it
            session = ChatSession(self.approvals, key, resume.history if resume else ())
        message_id = body.message_id or f"msg-{uuid.uuid4().hex}"
        if key is not None and self.settings.resume:
            check_chat_id(key.session)
            run = await self.chat_runs.start(key, message_id, messages, options, resume)
            return event_stream(run, HEADERS)
        updates = agent.run_stream(messages, session=session, options=options)
        chunks = UIMessageChunks(agent.name, message_id, resume)
        return event_stream(chunks.events(updates), HEADERS)

    async def reconnect(self, request: Request, name: str, chat: str) -> Response:
        """The stream of the chat's run going on, from its start; 204 when there is none."""
        principal = principal_of(request)
        agent = self.context.find_agent(principal, name)
        if agent is None:
            raise AISDKError(404, f"agent {name!r} not found", code="agent_not_found")
        check_chat_id(chat)
        record = await self.chat_runs.active(SessionKey(agent.name, chat, principal))
        if record is None:
            return Response(status_code=204)
        return event_stream(view(self.context.durable, record), HEADERS)

    def _build_router(self) -> APIRouter:
        router = APIRouter(tags=["ai-sdk"])

        @router.post(
            "/{agent}",
            summary="useChat: UIMessages in, the UI message stream out",
            openapi_extra={
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": CHAT_REQUEST}},
                }
            },
        )
        async def chat(request: Request, agent: str) -> Response:
            try:
                return await self.chat(request, agent)
            except Exception as exc:
                return from_exception(exc).response()

        @router.get(
            "/{agent}/{chat}/stream",
            summary="reconnectToStream: the chat's run going on, from its start (204: none)",
            responses={204: {"description": "the chat has no run going on"}},
        )
        async def reconnect(request: Request, agent: str, chat: str) -> Response:
            try:
                return await self.reconnect(request, agent, chat)
            except Exception as exc:
                return from_exception(exc).response()

        @router.api_route(
            "/{path:path}",
            methods=["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
            include_in_schema=False,
        )
        async def unknown_route(request: Request, path: str) -> Response:
            own = {**request.scope, "path": f"/{path}", "root_path": ""}
            allowed = allowed_methods(router.routes[:2], own)
            if not allowed:
                message = f"route {request.method} /{path} not found"
                return AISDKError(404, message, code="route_not_found").response()
            message = f"{request.method} is not allowed on {request.url.path}"
            response = AISDKError(405, message, code="method_not_allowed").response()
            response.headers["allow"] = ", ".join(allowed)
            return response

        return router


def check_chat_id(chat: str) -> None:
    if not valid_chat_id(chat):
        message = f"a chat id is 1 to {MAX_CHAT_ID} printable characters"
        raise AISDKError(400, message, code="invalid_chat_id")


async def read_request(request: Request) -> ChatRequest:
    declared = request.headers.get("content-type")
    media = (declared or "application/json").split(";", 1)[0].strip().lower()
    if media != "application/json":
        message = f"the request body must be application/json, not {media!r}"
        raise AISDKError(415, message, code="unsupported_media_type")
    try:
        raw = await request.body()
    except ClientDisconnect:
        raise AISDKError(400, "the request body was cut short", code="incomplete_body") from None
    try:
        return ChatRequest.model_validate(await off_loop(len(raw), load_json, raw))
    except BodyProblem as problem:
        code = "invalid_json" if problem.limit is None else "body_too_complex"
        raise AISDKError(400, refusal(problem), code=code) from None
    except ValidationError as exc:
        raise from_validation_error(exc) from None
