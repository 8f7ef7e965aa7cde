"""The MCP server: one tool, one resource and one prompt per agent, per caller.

Built on the SDK's low-level ``Server`` rather than ``MCPServer``: its tool
table is fixed, while here every listing and call depends on the request's
principal (an agent limited to other principals is neither listed nor
callable, and calling it is the same error as an unknown tool). The same
server serves streamable HTTP and stdio; over stdio there is no request,
and the caller is the anonymous principal. What it answers is
:class:`~agenthost.adapters.mcp.handlers.Handlers`, one method per request kind.
"""

from __future__ import annotations

import warnings
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPDeprecationWarning

from agenthost.adapters.base import AdapterContext
from agenthost.adapters.mcp.handlers import Handlers, ServerOptions, caller
from agenthost.adapters.mcp.tasks import EXTENSION, TaskParams, UpdateParams

__all__ = ["INSTRUCTIONS", "ServerOptions", "build_server", "caller"]

INSTRUCTIONS = (
    "Each tool is an agent. Send it a message; pass the same session_id on later calls "
    "to continue a conversation (or to answer a question the agent asked)."
)


def build_server(context: AdapterContext, options: ServerOptions) -> Server[Any]:
    """The low-level server whose handlers see only what the caller may use."""
    handlers = Handlers(context, options)
    declared = handlers.declared
    with warnings.catch_warnings():
        # The SDK warns that 2026-07-28 dropped logging/setLevel; earlier clients use it.
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        server = _server(
            get_tool_input_schema=handlers.tool_input_schema,
            on_list_tools=handlers.list_tools,
            on_call_tool=handlers.call_tool,
            on_list_resources=handlers.list_resources,
            on_list_resource_templates=handlers.list_resource_templates,
            on_read_resource=handlers.read_resource,
            on_list_prompts=handlers.list_prompts,
            on_get_prompt=handlers.get_prompt,
            on_completion=handlers.complete,
            on_set_logging_level=handlers.set_logging_level,
            # Subscriptions only where there is something to subscribe to.
            **(
                {
                    "on_subscribe_resource": handlers.subscribe,
                    "on_unsubscribe_resource": handlers.unsubscribe,
                }
                if declared.resources or declared.templates
                else {}
            ),
        )
    if options.tasks is not None:
        server.add_request_handler("tasks/get", TaskParams, handlers.get_task)
        server.add_request_handler("tasks/update", UpdateParams, handlers.update_task)
        server.add_request_handler("tasks/cancel", TaskParams, handlers.cancel_task)
        server.extensions[EXTENSION] = {}
    return server


def _server(**handlers: Any) -> Server[Any]:
    # Untyped keywords: call_tool may answer with a task (a dict) where the SDK's
    # signature wants a result, and on_set_logging_level selects its deprecated overload.
    return Server(
        "agenthost",
        version=_version(),
        instructions=INSTRUCTIONS,
        **handlers,
    )


def _version() -> str:
    try:
        return version("agenthost")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "0"
