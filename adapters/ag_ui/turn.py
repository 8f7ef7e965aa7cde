"""One AG-UI run, from the request's JSON to the SSE stream of its events (imports the SDK).

The adapter imports this module on its first run (off the event loop:
:func:`agenthost.adapters.deferred.imported`), so that start-up does not
build ``ag-ui-protocol``'s pydantic models.
"""

from __future__ import annotations

from typing import Any

from ag_ui.core import RunAgentInput
from pydantic import ValidationError
from starlette.responses import Response

from agenthost.adapters.ag_ui.convert import to_run
from agenthost.adapters.ag_ui.errors import from_validation_error
from agenthost.adapters.ag_ui.events import AGUIEvents
from agenthost.adapters.base import AdapterContext
from agenthost.adapters.sse import event_stream
from agenthost.agents import Agent, SessionKey
from agenthost.agents.sessions import ManagedSession

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


async def respond(context: AdapterContext, agent: Agent, principal: str, value: Any) -> Response:
    """The run of ``agent`` that the parsed body ``value`` asks for: its events, or a 422
    (:class:`~agenthost.adapters.ag_ui.errors.AGUIError`) for a body that does not validate."""
    try:
        body = RunAgentInput.model_validate(value)
    except ValidationError as exc:
        raise from_validation_error(exc) from None
    session = ManagedSession(context.memory, SessionKey(agent.name, body.thread_id, principal))
    messages, options = to_run(body, await session.load())
    updates = agent.run_stream(messages, session=session, options=options)
    events = AGUIEvents(agent.name, body.thread_id, body.run_id)
    return event_stream(events.events(updates), SSE_HEADERS)
