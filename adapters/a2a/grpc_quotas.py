"""The principals' quotas on the gRPC surface: ``RESOURCE_EXHAUSTED`` past one.

HTTP requests meet the quotas in the app's middleware; gRPC calls never pass
there, so this interceptor asks the app's :data:`~agenthost.adapters.base.CallQuota`
for each call with a valid key. ``SendMessage`` and ``SendStreamingMessage``
start runs (the token budget applies to them); every call counts against the
request rate. The seconds until a retry may pass are in the status message and
in the ``retry-after`` trailing metadata. Run slots (the concurrent-runs quota)
are the HTTP surfaces' only.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

import grpc
import grpc.aio

from agenthost.adapters.base import CallQuota

Handler: TypeAlias = "grpc.RpcMethodHandler[Any, Any]"
RUN_METHODS = frozenset({"SendMessage", "SendStreamingMessage"})


class QuotaChecks(grpc.aio.ServerInterceptor):
    """Refuses a call past its principal's quota with ``RESOURCE_EXHAUSTED``;
    ``principal_of(metadata)`` is the call's principal (None: no valid key)."""

    def __init__(self, quota: CallQuota, principal_of: Callable[[Any], str | None]) -> None:
        self.quota = quota
        self.principal_of = principal_of

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[Handler | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Handler | None:
        handler = await continuation(handler_call_details)
        metadata = handler_call_details.invocation_metadata
        principal = self.principal_of(metadata)
        if handler is None or principal is None:
            return handler  # no such method, or no valid key: refused elsewhere
        method: str = handler_call_details.method
        refusal = await self.quota(principal, method.rpartition("/")[2] in RUN_METHODS)
        if refusal is None:
            return handler
        message, seconds = refusal
        retry = str(max(1, math.ceil(seconds)))
        return _exhausted(handler, f"{message}; retry in {retry} s", retry)


def _exhausted(handler: Handler, message: str, retry: str) -> Handler:
    trailer = (("retry-after", retry),)
    code = grpc.StatusCode.RESOURCE_EXHAUSTED

    async def refuse(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        await context.abort(code, message, trailing_metadata=trailer)

    async def refuse_stream(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        await context.abort(code, message, trailing_metadata=trailer)
        yield  # pragma: no cover - abort raises

    codec = {
        "request_deserializer": handler.request_deserializer,
        "response_serializer": handler.response_serializer,
    }
    if handler.unary_stream:
        return grpc.unary_stream_rpc_method_handler(refuse_stream, **codec)
    return grpc.unary_unary_rpc_method_handler(refuse, **codec)
