"""A2A over gRPC: one ``grpc.aio`` server for every agent.

A call picks its agent by the request's ``tenant`` field (the agent's
name; the card's gRPC interface carries it, so SDK clients set it
themselves). The 0.3 gRPC service has no tenant field: a 0.3 call names its
agent in the ``a2a-tenant`` metadata entry instead (:data:`TENANT_METADATA`;
any call may). A call with neither reaches the default agent.

With API keys on, every call needs ``authorization: Bearer <key>`` (or
``x-api-key: <key>``, as on HTTP) in its metadata (checked by an interceptor
with the app's keys); the call's principal owns its tasks, as on HTTP. A
request whose protobuf does not parse gets ``INVALID_ARGUMENT``, as does one past
the JSON limits (:mod:`agenthost.adapters.a2a.proto_limits`; walked off the
loop); gRPC's own 4 MiB bound caps a message's size.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeAlias

import grpc
import grpc.aio
from a2a.auth.user import User
from a2a.compat.v0_3 import a2a_v0_3_pb2_grpc
from a2a.compat.v0_3.grpc_handler import CompatGrpcHandler
from a2a.server.context import ServerCallContext
from a2a.server.events import Event
from a2a.server.request_handlers import (
    DefaultGrpcServerCallContextBuilder,
    GrpcHandler,
    RequestHandler,
)
from a2a.types import a2a_pb2, a2a_pb2_grpc
from a2a.utils.constants import VERSION_HEADER
from a2a.utils.errors import A2AError

from agenthost.adapters.a2a.errors import TaskStoreUnavailable
from agenthost.adapters.a2a.grpc_quotas import QuotaChecks
from agenthost.adapters.a2a.proto_limits import check_message, may_pass_limits
from agenthost.adapters.a2a.users import PrincipalForKey, PrincipalUser
from agenthost.adapters.base import PrincipalForToken
from agenthost.adapters.body_limits import BodyProblem, current_limits, off_loop
from agenthost.agents import ANONYMOUS
from agenthost.agents.observe import incoming

if TYPE_CHECKING:
    from agenthost.adapters.a2a.adapter import A2AAdapter

GRACE_SECONDS = 5.0
TENANT_METADATA = "a2a-tenant"
"""The metadata entry naming the agent, for calls whose request has no ``tenant`` (0.3)."""
V1_SERVICE = "/lf.a2a.v1.A2AService/"
# Generic in the type stubs only.
Handler: TypeAlias = "grpc.RpcMethodHandler[Any, Any]"


def bearer_key(metadata: Any) -> str | None:
    """The key of an ``authorization: Bearer <key>`` metadata entry, else of ``x-api-key``."""
    scheme, _, token = (_metadata_value(metadata, "authorization") or "").partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return _metadata_value(metadata, "x-api-key") or None


def principal_of_call(metadata: Any, principal_for_key: PrincipalForKey | None) -> str | None:
    """The caller's principal; None when auth is on and the key is missing or wrong."""
    if principal_for_key is None:
        return ANONYMOUS
    key = bearer_key(metadata)
    return principal_for_key(key) if key else None


class _PrincipalContextBuilder(DefaultGrpcServerCallContextBuilder):
    def __init__(self, principal_for_key: PrincipalForKey | None) -> None:
        self.principal_for_key = principal_for_key

    def build_user(self, context: grpc.aio.ServicerContext[Any, Any]) -> User:
        principal = principal_of_call(context.invocation_metadata(), self.principal_for_key)
        # The interceptor has refused calls without a principal already.
        return PrincipalUser(principal or ANONYMOUS)


class _CallChecks(grpc.aio.ServerInterceptor):
    """Refuses, before any work: an A2A version the 1.0 service does not speak
    (``UNIMPLEMENTED``, as the spec maps ``VersionNotSupportedError``), and,
    with keys on, a call without a valid key (``UNAUTHENTICATED``)."""

    def __init__(
        self,
        principal_for_key: PrincipalForKey | None,
        principal_for_token: PrincipalForToken | None = None,
    ) -> None:
        self.principal_for_key = principal_for_key
        self.principal_for_token = principal_for_token

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[Handler | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Handler | None:
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        metadata = handler_call_details.invocation_metadata
        version = _metadata_value(metadata, VERSION_HEADER)
        method: str = handler_call_details.method
        if version and method.startswith(V1_SERVICE) and not _speaks(version):
            message = f"A2A version {version} is not supported: use 1.0 (or 0.3 on a2a.v1)"
            return _refusal(handler, grpc.StatusCode.UNIMPLEMENTED, message)
        if self.principal_for_token is not None and (token := bearer_key(metadata)):
            # Fetches the issuer's keys if need be, so that build_user finds them cached.
            await self.principal_for_token(token)
        if principal_of_call(metadata, self.principal_for_key) is None:
            message = "a valid API key or token is required: send 'authorization: Bearer <it>'"
            return _refusal(handler, grpc.StatusCode.UNAUTHENTICATED, message)
        return _parsing_strictly(handler, method, metadata)


class _Malformed:
    """A request whose bytes did not parse, handed to the call to refuse."""

    def __init__(self, error: Exception) -> None:
        self.error = error


class _Unchecked:
    """A request large enough to pass a JSON limit: walked before the call sees it."""

    def __init__(self, message: Any, size: int) -> None:
        self.message = message
        self.size = size


def _parsing_strictly(handler: Handler, method: str = "", metadata: Any = ()) -> Handler:
    """``handler`` answering ``INVALID_ARGUMENT`` (not ``UNKNOWN``) to a malformed request,
    its work traced (a ``SERVER`` span whose parent is the metadata's ``traceparent``)."""
    deserialize = handler.request_deserializer
    if deserialize is None or handler.request_streaming:
        return handler
    name = method.lstrip("/")
    service, _, rpc = name.rpartition("/")
    carrier = {k: v for k, v in metadata or () if isinstance(v, str)}
    attributes = {"rpc.system": "grpc", "rpc.service": service, "rpc.method": rpc}

    def tolerant(data: bytes) -> Any:
        try:
            request = deserialize(data)
        except Exception as exc:  # a DecodeError, or a recursion limit
            return _Malformed(exc)
        if may_pass_limits(len(data), current_limits()):
            return _Unchecked(request, len(data))
        return request

    async def checked(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        """The request, once within the JSON limits (walked off the loop when large)."""
        if isinstance(request, _Malformed):
            message = f"the request is not a valid protobuf message: {request.error}"
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, message)
        if isinstance(request, _Unchecked):
            try:
                await off_loop(request.size, check_message, request.message, current_limits())
            except BodyProblem as problem:
                message = f"the request is too complex: {problem.message} ({problem.limit})"
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, message)
            return request.message
        return request

    codec = {"request_deserializer": tolerant, "response_serializer": handler.response_serializer}
    if handler.unary_stream:
        stream: Any = handler.unary_stream

        async def unary_stream(request: Any, context: Any) -> AsyncIterator[Any]:
            request = await checked(request, context)
            with incoming(name, carrier, **attributes):
                async for item in stream(request, context):
                    yield item

        return grpc.unary_stream_rpc_method_handler(unary_stream, **codec)
    if handler.unary_unary:
        unary: Any = handler.unary_unary

        async def unary_unary(request: Any, context: Any) -> Any:
            request = await checked(request, context)
            with incoming(name, carrier, **attributes):
                return await unary(request, context)

        return grpc.unary_unary_rpc_method_handler(unary_unary, **codec)
    return handler


def _metadata_value(metadata: Any, name: str) -> str | None:
    for key, value in metadata or ():
        if key.lower() == name.lower():
            return value.decode() if isinstance(value, bytes) else str(value)
    return None


def _speaks(version: str) -> bool:
    major, _, rest = version.strip().partition(".")
    return (major, rest.partition(".")[0]) == ("1", "0")


def _refusal(handler: Handler, code: grpc.StatusCode, message: str) -> Handler:
    async def refuse(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        await context.abort(code, message)

    async def refuse_stream(
        request: Any, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[Any]:
        await context.abort(code, message)
        yield  # pragma: no cover - abort raises

    codec = {
        "request_deserializer": handler.request_deserializer,
        "response_serializer": handler.response_serializer,
    }
    if handler.unary_stream:
        return grpc.unary_stream_rpc_method_handler(refuse_stream, **codec)
    return grpc.unary_unary_rpc_method_handler(refuse, **codec)


class TenantRouter(RequestHandler):
    """Hands each gRPC call to the request handler of the agent its tenant names."""

    def __init__(self, adapter: A2AAdapter) -> None:
        self.adapter = adapter

    async def _handler(self, context: ServerCallContext) -> RequestHandler:
        grpc_context: grpc.aio.ServicerContext[Any, Any] = context.state["grpc_context"]
        named = _metadata_value(grpc_context.invocation_metadata(), TENANT_METADATA)
        name = context.tenant or named or self.adapter.default_agent or ""
        service = self.adapter.service_for(context.user.user_name, name)
        if service is not None:
            return service.handler
        message = (
            f"no agent named {name!r} is served over A2A here"
            if name
            else f"name the agent in the request's tenant field or the {TENANT_METADATA!r} "
            "metadata (no default agent is set)"
        )
        await grpc_context.abort(grpc.StatusCode.NOT_FOUND, message)
        raise AssertionError("unreachable: abort raises")  # pragma: no cover

    async def on_get_task(
        self, params: a2a_pb2.GetTaskRequest, context: ServerCallContext
    ) -> a2a_pb2.Task | None:
        return await (await self._handler(context)).on_get_task(params, context)

    async def on_list_tasks(
        self, params: a2a_pb2.ListTasksRequest, context: ServerCallContext
    ) -> a2a_pb2.ListTasksResponse:
        return await (await self._handler(context)).on_list_tasks(params, context)

    async def on_cancel_task(
        self, params: a2a_pb2.CancelTaskRequest, context: ServerCallContext
    ) -> a2a_pb2.Task | None:
        return await (await self._handler(context)).on_cancel_task(params, context)

    async def on_message_send(
        self, params: a2a_pb2.SendMessageRequest, context: ServerCallContext
    ) -> a2a_pb2.Task | a2a_pb2.Message:
        return await (await self._handler(context)).on_message_send(params, context)

    async def on_message_send_stream(
        self, params: a2a_pb2.SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event]:
        handler = await self._handler(context)
        async for event in handler.on_message_send_stream(params, context):
            yield event

    async def on_subscribe_to_task(
        self, params: a2a_pb2.SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event]:
        handler = await self._handler(context)
        async for event in handler.on_subscribe_to_task(params, context):
            yield event

    async def on_create_task_push_notification_config(
        self, params: a2a_pb2.TaskPushNotificationConfig, context: ServerCallContext
    ) -> a2a_pb2.TaskPushNotificationConfig:
        handler = await self._handler(context)
        return await handler.on_create_task_push_notification_config(params, context)

    async def on_get_task_push_notification_config(
        self, params: a2a_pb2.GetTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> a2a_pb2.TaskPushNotificationConfig:
        handler = await self._handler(context)
        return await handler.on_get_task_push_notification_config(params, context)

    async def on_list_task_push_notification_configs(
        self, params: a2a_pb2.ListTaskPushNotificationConfigsRequest, context: ServerCallContext
    ) -> a2a_pb2.ListTaskPushNotificationConfigsResponse:
        handler = await self._handler(context)
        return await handler.on_list_task_push_notification_configs(params, context)

    async def on_delete_task_push_notification_config(
        self, params: a2a_pb2.DeleteTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> None:
        handler = await self._handler(context)
        await handler.on_delete_task_push_notification_config(params, context)

    async def on_get_extended_agent_card(
        self, params: a2a_pb2.GetExtendedAgentCardRequest, context: ServerCallContext
    ) -> a2a_pb2.AgentCard:
        handler = await self._handler(context)
        return await handler.on_get_extended_agent_card(params, context)


async def _abort_unavailable(error: A2AError, context: grpc.aio.ServicerContext[Any, Any]) -> bool:
    """The task database is down: gRPC's own UNAVAILABLE, which the SDK (knowing no such
    error) would answer UNKNOWN."""
    if not isinstance(error, TaskStoreUnavailable):
        return False
    await context.abort(grpc.StatusCode.UNAVAILABLE, error.message)
    return True


class _Handler(GrpcHandler):
    async def abort_context(
        self, error: A2AError, context: grpc.aio.ServicerContext[Any, Any]
    ) -> None:
        if not await _abort_unavailable(error, context):
            await super().abort_context(error, context)


class _CompatHandler(CompatGrpcHandler):
    async def abort_context(
        self, error: A2AError, context: grpc.aio.ServicerContext[Any, Any]
    ) -> None:
        if not await _abort_unavailable(error, context):
            await super().abort_context(error, context)


class GrpcServer:
    """The adapter's gRPC server, started and stopped with its lifespan."""

    def __init__(self, adapter: A2AAdapter) -> None:
        self.adapter = adapter
        self.port: int | None = None

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[None]:
        options = self.adapter.options
        auth = options.principal_for_key
        quota = self.adapter.context.quota
        checks: list[grpc.aio.ServerInterceptor] = [_CallChecks(auth, options.principal_for_token)]
        if quota is not None:
            checks.append(QuotaChecks(quota, lambda metadata: principal_of_call(metadata, auth)))
        server = grpc.aio.server(interceptors=checks)
        router = TenantRouter(self.adapter)
        builder = _PrincipalContextBuilder(auth)
        # The SDK's generated registration functions carry no types.
        register = a2a_pb2_grpc.add_A2AServiceServicer_to_server
        register_v03 = a2a_v0_3_pb2_grpc.add_A2AServiceServicer_to_server
        register(_Handler(router, builder), server)  # type: ignore[no-untyped-call]
        register_v03(_CompatHandler(router, builder), server)  # type: ignore[no-untyped-call]
        self.port = server.add_insecure_port(f"{options.grpc_host}:{options.grpc_port}")
        await server.start()
        try:
            yield
        finally:
            await server.stop(GRACE_SECONDS)
            self.port = None
