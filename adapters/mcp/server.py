"""The MCP server: one tool, one resource and one prompt per agent, per caller.

Built on the SDK's low-level ``Server`` rather than ``MCPServer``: its tool
table is fixed, while here every listing and call depends on the request's
principal (an agent limited to other principals is neither listed nor
callable, and calling it is the same error as an unknown tool). The same
server serves streamable HTTP and stdio; over stdio there is no request,
and the caller is the anonymous principal.
"""

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.requests import HTTPConnection

from agenthost.adapters.base import AdapterContext, principal_of
from agenthost.adapters.mcp import asking, convert
from agenthost.adapters.mcp.calls import AgentCall
from agenthost.adapters.mcp.cancels import RunningCalls
from agenthost.adapters.mcp.declared import Declared
from agenthost.adapters.mcp.inputs import ToolInput, tool_inputs
from agenthost.adapters.mcp.logs import LogLevels, RunLog
from agenthost.adapters.mcp.tasks import TaskStore, negotiated, serve_tasks, task_required
from agenthost.agents import ANONYMOUS, Agent
from agenthost.agents.observe import incoming

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
    # Stateful HTTP: how many sessions' log levels are kept, and for how long.
    max_sessions: int = 1000
    session_idle_timeout: float = 1800.0
    # MCP tasks (2026-07-28 extension): the calls of clients that declare it.
    tasks: TaskStore | None = field(default_factory=TaskStore)


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

    levels = LogLevels(options.max_sessions, options.session_idle_timeout)
    declared = Declared(context.config)
    inputs = tool_inputs(context.config)

    def input_of(agent: Agent) -> ToolInput:
        return inputs.get(agent.name) or ToolInput()

    if clash := sorted(set(declared.prompts) & set(context.agents)):
        raise ValueError(f"mcp.prompts: {', '.join(clash)} is also an agent's prompt")

    def protocols(agent: Agent) -> Sequence[str]:
        return options.protocols.get(agent.name, ("mcp",))

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        tools = [convert.to_tool(a, input_of(a)) for a in visible(ctx).values()]
        return types.ListToolsResult(tools=tools)

    def agent_call(
        ctx: ServerRequestContext[Any, Any],
        agent: Agent,
        params: types.CallToolRequestParams,
        principal: str,
        *,
        detached: bool = False,
    ) -> AgentCall:
        """A call of ``agent``; detached: a task's run (started or resumed), apart from
        its request, its log muted."""
        log = RunLog(ctx, agent.name, levels)
        return AgentCall(
            agent,
            params,
            ctx,
            context.memory,
            principal,
            options.progress_interval,
            log.mute() if detached else log,
            detached=detached,
            tool_input=input_of(agent),
        )

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult | dict[str, Any]:
        agent = find(ctx, params.name)
        if agent is None:
            raise convert.unknown_tool(params.name)
        principal = caller(ctx)
        tool_input = input_of(agent)
        wants_task = options.tasks is not None and _wants_task(ctx)
        if tool_input.task_support == "required" and not wants_task:
            raise task_required(params.name)
        if options.tasks is not None and wants_task and tool_input.task_support != "forbidden":
            tool_input.parse(params.arguments)  # bad arguments: an error now, no task
            # Answered now with the task; the run goes on without the request.
            quiet = agent_call(ctx, agent, params, principal, detached=True)
            return await options.tasks.start(
                principal, _task_call(params), lambda: _dumped(quiet), after=tool_input.task_after
            )
        call = agent_call(ctx, agent, params, principal)
        # Traced under the client's _meta.traceparent when it sends one.
        with incoming(f"tools/call {params.name}", params.meta or {}, **_call_attributes(params)):
            if options.calls is None or ctx.request_id is None:
                return await call.result()
            with options.calls.running(principal, ctx.request_id):
                return await call.result()
        raise AssertionError("unreachable: a cancelled call raises")  # pragma: no cover

    async def list_resources(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        resources = [convert.to_resource(a) for a in visible(ctx).values()]
        return types.ListResourcesResult(resources=[*resources, *declared.list_resources()])

    async def read_resource(
        ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        name = uri.removeprefix("agent://")
        agent = find(ctx, name) if uri.startswith("agent://") else None
        if agent is None and (contents := declared.read(uri)) is not None:
            return contents
        if agent is None:
            # The spec's error for an unknown resource (SEP-2164 made it -32602 in 2026-07-28).
            code = (
                types.INVALID_PARAMS if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS else -32002
            )
            raise MCPError(code, f"Resource not found: {uri}", {"uri": uri})
        return convert.resource_contents(agent, protocols(agent))

    async def list_resource_templates(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        # Every agent's resource is listed by its own URI; templates come from the config.
        return types.ListResourceTemplatesResult(resource_templates=declared.list_templates())

    async def subscribe(
        ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        # Declared resources never change: a subscription is accepted, no update follows.
        uri = str(params.uri)
        if not declared.has_resource(uri) and not (
            uri.startswith("agent://") and find(ctx, uri.removeprefix("agent://"))
        ):
            raise MCPError(types.INVALID_PARAMS, f"Resource not found: {uri}", {"uri": uri})
        return types.EmptyResult()

    async def unsubscribe(
        ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        return types.EmptyResult()

    async def complete(
        ctx: ServerRequestContext[Any, Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        # Every prompt's one argument is free text: nothing to suggest, but the
        # reference must be a prompt this caller may use, and its argument.
        ref = params.ref
        if isinstance(ref, types.PromptReference):
            argument = params.argument
            if (done := declared.complete(ref.name, argument.name, argument.value)) is not None:
                return types.CompleteResult(completion=done)
        elif declared.has_template(ref.uri):
            # A template's variables are free: nothing to suggest.
            return types.CompleteResult(completion=types.Completion(values=[], has_more=False))
        if not isinstance(ref, types.PromptReference) or find(ctx, ref.name) is None:
            raise MCPError(types.INVALID_PARAMS, "Unknown prompt or resource template")
        if params.argument.name != "message":
            raise MCPError(types.INVALID_PARAMS, f"Unknown argument: {params.argument.name}")
        return types.CompleteResult(completion=types.Completion(values=[], has_more=False))

    async def set_logging_level(
        ctx: ServerRequestContext[Any, Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        levels.set(ctx, params.level)
        return types.EmptyResult()

    async def list_prompts(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        prompts = [convert.to_prompt(a) for a in visible(ctx).values()]
        return types.ListPromptsResult(prompts=[*prompts, *declared.list_prompts()])

    async def get_prompt(
        ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult | types.InputRequiredResult:
        arguments = params.arguments
        if (form := declared.to_elicit(params.name, arguments)) is not None:
            # Arguments the user is asked for when the request lacks them.
            asked = await asking.prompt_arguments(ctx, params, form)
            if isinstance(asked, types.InputRequiredResult):
                return asked
            arguments = asked if asked is not None else arguments
        if (filled := declared.get_prompt(params.name, arguments)) is not None:
            return filled
        agent = find(ctx, params.name)
        if agent is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown prompt: {params.name}")
        return convert.prompt_messages(agent, params.arguments)

    def input_schema(name: str) -> Mapping[str, Any]:
        # For Mcp-Param header checks: the schema the config declares for that
        # name, else the default one (which never reveals which names exist).
        known = inputs.get(name)
        return known.input_schema if known is not None else convert.INPUT_SCHEMA

    with warnings.catch_warnings():
        # The SDK warns that 2026-07-28 dropped logging/setLevel; earlier clients use it.
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        server = _server(
            get_tool_input_schema=input_schema,
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            on_list_resources=list_resources,
            on_list_resource_templates=list_resource_templates,
            on_read_resource=read_resource,
            on_list_prompts=list_prompts,
            on_get_prompt=get_prompt,
            on_completion=complete,
            on_set_logging_level=set_logging_level,
            **(
                {"on_subscribe_resource": subscribe, "on_unsubscribe_resource": unsubscribe}
                if declared.resources or declared.templates
                else {}
            ),
        )

    def resume(
        ctx: ServerRequestContext[Any, Any], principal: str, task_call: dict[str, Any]
    ) -> Callable[[], Awaitable[dict[str, Any]]] | None:
        # A task's call going on with the answers a tasks/update completed (on any replica).
        agent = context.find_agent(principal, str(task_call.get("name")))
        if agent is None:
            return None
        params = types.CallToolRequestParams.model_validate(task_call)
        call = agent_call(ctx, agent, params, principal, detached=True)
        return lambda: _dumped(call)

    if options.tasks is not None:
        serve_tasks(server, options.tasks, caller, resume)
    return server


def _task_call(params: types.CallToolRequestParams) -> dict[str, Any]:
    """What a task keeps of its call, to resume it: the tool and its arguments."""
    return {"name": params.name, "arguments": params.arguments or {}}


def _wants_task(ctx: ServerRequestContext[Any, Any]) -> bool:
    # Only the 2026-07-28 form: the SDK shapes older tools/call results as CallToolResult.
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS and negotiated(ctx)


async def _dumped(call: AgentCall) -> dict[str, Any]:
    result = await call.result()
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)


def _server(**handlers: Any) -> Server[Any]:
    return Server(
        "agenthost",
        version=_version(),
        instructions=INSTRUCTIONS,
        **handlers,
    )


def _call_attributes(params: types.CallToolRequestParams) -> dict[str, str]:
    return {"mcp.method.name": "tools/call", "gen_ai.tool.name": params.name}


def _version() -> str:
    try:
        return version("agenthost")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "0"
