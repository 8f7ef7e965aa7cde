"""The server-sent events of a streamed response, as OpenAI sends them.

Each event has an ``event:`` line naming its type and a ``data:`` line with
the event object (``sequence_number`` counts from 0). Text streams as it is
made; calls of client tools arrive with the run's end and are sent as
``function_call`` items in the standard fragments (added, arguments delta,
arguments done, done).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from typing import TYPE_CHECKING, Any

from agenthost.adapters.openai.errors import OpenAIError, from_exception
from agenthost.adapters.openai.http import sse_event
from agenthost.adapters.openai.items import Item, message_item
from agenthost.agents import RunFinished, RunUpdate, TextDelta

if TYPE_CHECKING:
    from agenthost.adapters.openai.responses import Turn


class _Events:
    """Numbers the events of one stream."""

    def __init__(self) -> None:
        self.sequence = 0

    def __call__(self, type: str, **fields: Any) -> bytes:
        data = {"type": type, "sequence_number": self.sequence, **fields}
        self.sequence += 1
        return sse_event(data, event=type)


async def stream_events(
    turn: Turn, updates: AsyncGenerator[RunUpdate, None]
) -> AsyncIterator[bytes]:
    event = _Events()
    where = {"item_id": turn.message_id, "output_index": 0, "content_index": 0}
    opened = False

    def open_message() -> list[bytes]:
        item = message_item(turn.message_id, None, status="in_progress")
        return [
            event("response.output_item.added", output_index=0, item=item),
            event("response.content_part.added", **where, part=_text("")),
        ]

    try:
        yield event("response.created", response=turn.response(status="in_progress"))
        yield event("response.in_progress", response=turn.response(status="in_progress"))
        async for update in updates:
            if isinstance(update, TextDelta):
                if not opened:
                    opened = True
                    for chunk in open_message():
                        yield chunk
                yield event("response.output_text.delta", **where, delta=update.text, logprobs=[])
            elif isinstance(update, RunFinished):
                response = turn.completed(update.result)
                await turn.save(response)
                output: list[Item] = response["output"]
                for index, item in enumerate(output):
                    if item["type"] == "message":
                        if not opened:
                            for chunk in open_message():
                                yield chunk
                        text = update.result.output
                        yield event("response.output_text.done", **where, text=text, logprobs=[])
                        yield event("response.content_part.done", **where, part=_text(text))
                    else:
                        for chunk in _function_call(event, index, item):
                            yield chunk
                    yield event("response.output_item.done", output_index=index, item=item)
                yield event(f"response.{response['status']}", response=response)
    except Exception as exc:
        error = from_exception(exc)
        yield event("error", code=error.code, message=error.message, param=error.param)
        failed = turn.response(status="failed", error=_failure(error))
        yield event("response.failed", response=failed)
    finally:
        await updates.aclose()


def _function_call(event: _Events, index: int, item: Item) -> list[bytes]:
    where = {"item_id": item["id"], "output_index": index}
    return [
        event(
            "response.output_item.added",
            output_index=index,
            item={**item, "arguments": "", "status": "in_progress"},
        ),
        event("response.function_call_arguments.delta", **where, delta=item["arguments"]),
        event(
            "response.function_call_arguments.done",
            **where,
            name=item["name"],
            arguments=item["arguments"],
        ),
    ]


def _text(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def _failure(error: OpenAIError) -> dict[str, str]:
    """A response's ``error``: its code is one of the few the Responses API defines."""
    code = (
        "rate_limit_exceeded"
        if error.status == 429
        else "invalid_prompt"
        if error.status < 500
        else "server_error"
    )
    return {"code": code, "message": error.message}
