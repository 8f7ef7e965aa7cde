"""The MCP server: one tool, one resource and one prompt per agent, per caller.

Built on the SDK's low-level ``Server`` rather than ``MCPServer``: its tool
table is fixed, while here every listing and call depends on the request's
principal (an agent limited to other principals is neither listed nor
callable, and calling it is the same error as an unknown tool). The same
server serves streamable HTTP and stdio; over stdio there is no request,
and the caller is the anonymous principal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from starlette.requests import HTTPConnection

from agenthost.adapters.base import AdapterContext, principal_of
from agenthost.adapters.mcp import convert
from agenthost.adapters.mcp.calls import AgentCall
from agenthost.adapters.mcp.cancels import RunningCalls
from agenthost.agents import ANONYMOUS, Agent

INSTRUCTIONS = (
    "Each tool is an agent. Send it a message; pass the same session_id on later calls "
    "to continue a conversation (or to answer a question the agent asked)."
)


@dataclass(frozen=True, slots=True)
class ServerOptions:
    """How the tools behave, whatever the transport."""

    progress_interval: float = 0.1
    # Agent name → the protocols it is served on, for its resource.
    protocols: Mapping[str, Sequence[str]] = field(default_factory=dict)
    # Stateless HTTP: the running calls a cancel notification can name.
    calls: RunningCalls | None = None


def caller(ctx: ServerRequestContext[Any, Any]) -> str:
    """The request's principal; stdio (no HTTP request) is the anonymous one."""
    request = ctx.request
    return principal_of(request) if isinstance(request, HTTPConnection) else ANONYMOUS


def build_server(context: AdapterContext, options: ServerOptions) -> Server[Any]:
    """The low-level server whose handlers see only what the caller may use."""

    def visible(ctx: ServerRequestContext[Any, Any]) -> Mapping[str, Agent]:
        return context.agents_for(caller(ctx))

    def find(ctx: ServerRequestContext[Any, Any], name: str) -> Agent | None:
        return context.find_agent(caller(ctx), name)

    def protocols(agent: Agent) -> Sequence[str]:
        return options.protocols.get(agent.name, ("mcp",))

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[convert.to_tool(a) for a in visible(ctx).values()])

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        agent = find(ctx, params.name)
        if agent is None:
            raise convert.unknown_tool(params.name)
        principal = caller(ctx)
        call = AgentCall(agent, params, ctx, context.memory, principal, options.progress_interval)
        if options.calls is None or ctx.request_id is None:
            return await call.result()
        with options.calls.running(principal, ctx.request_id):
            return await call.result()
        raise AssertionError("unreachable: a cancelled call raises")  # pragma: no cover

    async def list_resources(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        resources = [convert.to_resource(a) for a in visible(ctx).values()]
        return types.ListResourcesResult(resources=resources)

    async def read_resource(
        ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        name = uri.removeprefix("agent://")
        agent = find(ctx, name) if uri.startswith("agent://") else None
        if agent is None:
            # The spec's error for an unknown resource.
            raise MCPError(-32002, f"Resource not found: {uri}", {"uri": uri})
        return convert.resource_contents(agent, protocols(agent))

    async def list_prompts(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[convert.to_prompt(a) for a in visible(ctx).values()]
        )

    async def get_prompt(
        ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        agent = find(ctx, params.name)
        if agent is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown prompt: {params.name}")
        return convert.prompt_messages(agent, params.arguments)

    return Server(
        "agenthost",
        version=_version(),
        instructions=INSTRUCTIONS,
        # Same schema for every tool; never reveals which names exist.
        get_tool_input_schema=lambda name: convert.INPUT_SCHEMA,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


def _version() -> str:
    try:
        return version("agenthost")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "0"
