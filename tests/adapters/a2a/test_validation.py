"""A large A2A request's required fields are checked off the loop, by the SDK's own check."""

from __future__ import annotations

import pytest
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.types import a2a_pb2
from a2a.utils.errors import InvalidParamsError
from google.protobuf.json_format import ParseDict

from agenthost.adapters.a2a.validation import checked, unchecked
from agenthost.adapters.body_limits import BodyLimits, current_limits, use_limits

pytestmark = pytest.mark.anyio


def test_the_methods_below_the_sdks_check_are_found() -> None:
    for method in (
        DefaultRequestHandler.on_message_send,
        DefaultRequestHandler.on_message_send_stream,
    ):
        below = unchecked(method)
        assert below is not None, method
        assert below is not method
        assert unchecked(below) is None  # one check, and nothing below it checks again


async def test_a_large_request_is_checked_here_and_a_small_one_by_the_sdk() -> None:
    method = DefaultRequestHandler.on_message_send
    message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"data": [0.5] * 20_000}]}
    large = ParseDict({"message": message}, a2a_pb2.SendMessageRequest())
    assert await checked(method, large) is unchecked(method)
    small = ParseDict(
        {"message": {**message, "parts": [{"text": "x"}]}}, a2a_pb2.SendMessageRequest()
    )
    assert await checked(method, small) is method
    missing = ParseDict({"message": {**message, "messageId": ""}}, a2a_pb2.SendMessageRequest())
    with pytest.raises(InvalidParamsError):
        await checked(method, missing)


async def test_every_request_goes_the_sdks_way_with_a_high_threshold() -> None:
    before = current_limits()
    use_limits(BodyLimits(offload_bytes=1 << 30))
    try:
        method = DefaultRequestHandler.on_message_send
        message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"data": [0.5] * 20_000}]}
        large = ParseDict({"message": message}, a2a_pb2.SendMessageRequest())
        assert await checked(method, large) is method
    finally:
        use_limits(before)
