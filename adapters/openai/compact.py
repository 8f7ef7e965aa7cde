"""``POST /responses/compact``: a conversation summarised by its agent into one item.

The conversation is the chain ending with ``previous_response_id`` (the
caller's own stored responses: another API key's is not found), then the
``input`` items. The agent named by ``model`` summarises it in one run
without a session: its own model and instructions, with the ``summarize``
memory strategy's summarising instructions added, the transcript as one
user message (``instructions`` and system items as its ``system:`` lines),
and no tool call (``tool_choice: none``). The answer is the SDK's
``CompactedResponse``: the conversation's user messages as they were, then
one compaction item holding the summary (:mod:`.compaction`); the next
request carries them as input in place of the history. Nothing is stored
here: the compacted items are the client's to send (a response that takes
them as input stores them, under its principal, as any input).

What the summary says is the agent's model's: an OpenAI-compatible upstream
or the local model writes one (as good as that model); ``echo`` repeats its
input, so its "summary" is the transcript itself; a scripted or function
model answers as it always does.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from starlette.requests import Request
from starlette.responses import Response

from agenthost.adapters.disconnect import unless_disconnected
from agenthost.adapters.openai.compaction import compaction_item
from agenthost.adapters.openai.convert_responses import input_items, to_usage
from agenthost.adapters.openai.errors import OpenAIError
from agenthost.adapters.openai.http import find_agent, json_response, read_body
from agenthost.adapters.openai.items import Item, new_id, to_messages
from agenthost.adapters.openai.references import resolve
from agenthost.adapters.openai.schemas import CompactRequest, ResponseRequest
from agenthost.adapters.openai.turns import StoredItems, Stores
from agenthost.agents import Agent, Message, ModelSettings, RunOptions
from agenthost.agents.history import SUMMARIZE_INSTRUCTIONS, transcript_text

SUMMARIZING = RunOptions(
    instructions=SUMMARIZE_INSTRUCTIONS,
    model_settings=ModelSettings(temperature=0, tool_choice="none"),
    can_ask=False,
)
"""What a summarising run adds to the agent's own options."""


async def compact_conversation(
    request: Request, agents: Mapping[str, Agent], stores: Stores, principal: str
) -> Response:
    """The ``response.compaction`` object of the conversation ``request`` names."""
    body = await read_body(request, CompactRequest)
    agent = find_agent(agents, body.model)
    history: list[Item] = []
    if body.previous_response_id:
        history = await stores.responses.transcript(principal, body.previous_response_id)
    instructions, raw = _input(body)
    conversation = [*history, *await resolve(raw, StoredItems(stores, principal, history))]
    if not conversation:
        raise OpenAIError(
            400,
            "nothing to compact: send input items, a previous_response_id, or both",
            param="input",
            code="invalid_value",
        )
    messages = [*(Message.system(text) for text in instructions), *to_messages(conversation)]
    run = agent.run([Message.user(transcript_text(messages))], options=SUMMARIZING)
    result = await unless_disconnected(request.receive, run)
    kept = [item for item in conversation if item["type"] == "message" and item["role"] == "user"]
    return json_response(
        {
            "id": new_id("resp"),
            "object": "response.compaction",
            "created_at": int(time.time()),
            "output": [*kept, compaction_item(new_id("cmp"), result.output.strip())],
            "usage": to_usage(result.usage),
        }
    )


def _input(body: CompactRequest) -> tuple[list[str], list[Item]]:
    """The request's instructions (``instructions``, system and developer items) and its
    other input items, as a response's input is read."""
    if not body.input:
        return ([body.instructions] if body.instructions else []), []
    # Validated already (as a CompactRequest): the same fields a response's input has.
    as_response = ResponseRequest.model_construct(
        model=body.model, input=body.input, instructions=body.instructions
    )
    return input_items(as_response)
