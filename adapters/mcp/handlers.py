"""What the MCP server answers: one method per request kind, per caller.

:class:`Handlers` holds the server's state (the agents' tool inputs, the
declared prompts and resources, the log levels sessions set, the task
store) and answers each request from the caller's view of the agents: an
agent limited to other principals is neither listed nor callable, and
naming it is the same error as naming nothing. :func:`build_server
<agenthost.adapters.mcp.server.build_server>` registers the methods on the
SDK's low-level ``Server``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.requests import HTTPConnection

from agenthost.adapters.base import AdapterContext, principal_of
from agenthost.adapters.mcp import asking, convert
from agenthost.adapters.mcp.backchannel import client_declares
from agenthost.adapters.mcp.calls import AgentCall
from agenthost.adapters.mcp.cancels import RunningCalls
from agenthost.adapters.mcp.declared import Declared
from agenthost.adapters.mcp.inputs import ToolInput, tool_inputs
from agenthost.adapters.mcp.logs import LogLevels, RunLog
from agenthost.adapters.mcp.specs import check
from agenthost.adapters.mcp.task_runs import DECLARED, TaskRuns, declared_needs
from agenthost.adapters.mcp.tasks import (
    PROTOCOL,
    Run,
    TaskParams,
    TaskStore,
    UpdateParams,
    check_task_request,
    negotiated,
    task_required,
)
from agenthost.agents import ANONYMOUS, Agent
from agenthost.agents.observe import incoming

Context: TypeAlias = ServerRequestContext[Any, Any]


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


def caller(ctx: Context) -> str:
    """The request's principal; stdio (no HTTP request) is the anonymous one."""
    request = ctx.request
    return principal_of(request) if isinstance(request, HTTPConnection) else ANONYMOUS


class Handlers:
    """The MCP requests a caller can make of the host's agents, one method each.

    Every agent is a tool (``tools/*``), a resource (``agent://NAME``) and a
    prompt; the config adds declared prompts, resources and templates. With a
    task store, ``tasks/*`` serve the calls of clients that declare tasks.
    """

    __slots__ = ("context", "declared", "inputs", "levels", "options")

    def __init__(self, context: AdapterContext, options: ServerOptions) -> None:
        self.context = context
        self.options = options
        self.levels = LogLevels(options.max_sessions, options.session_idle_timeout)
        self.declared = Declared(context.config)
        self.inputs = tool_inputs(context.config)
        check(context.config, context.agents)
        tasks = options.tasks
        if tasks is not None and tasks.runs is not None:
            # A task's run goes on (or resumes) on any replica with the agents of this server.
            tasks.runs.handle(PROTOCOL, TaskRuns(context, self.inputs, tasks))

    # tools/*

    def tool_input_schema(self, name: str) -> Mapping[str, Any]:
        """For ``Mcp-Param`` header checks: the schema the config declares for that
        name, else the default one (which never reveals which names exist)."""
        known = self.inputs.get(name)
        return known.input_schema if known is not None else convert.INPUT_SCHEMA

    async def list_tools(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        """``tools/list``: the caller's agents."""
        tools = [convert.to_tool(a, self._input_of(a)) for a in self._visible(ctx).values()]
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        self, ctx: Context, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult | dict[str, Any]:
        """``tools/call``: the agent's run, in the request, or as a task for a client of tasks."""
        agent = self._find(ctx, params.name)
        if agent is None:
            raise convert.unknown_tool(params.name)
        principal = caller(ctx)
        tool_input = self._input_of(agent)
        tasks = self.options.tasks
        wants_task = tasks is not None and _wants_task(ctx)
        if tool_input.task_support == "required" and not wants_task:
            raise task_required(params.name)
        if tasks is not None and wants_task and tool_input.task_support != "forbidden":
            tool_input.parse(params.arguments)  # bad arguments: an error now, no task
            # Answered now with the task; the run goes on without the request.
            quiet = self._agent_call(ctx, agent, params, principal, detached=True)
            return await tasks.start(
                principal,
                _task_call(ctx, params),
                lambda: _dumped(quiet),
                after=tool_input.task_after,
            )
        call = self._agent_call(ctx, agent, params, principal)
        calls = self.options.calls
        # Traced under the client's _meta.traceparent when it sends one.
        with incoming(f"tools/call {params.name}", params.meta or {}, **_call_attributes(params)):
            if calls is None or ctx.request_id is None:
                return await call.result()
            with calls.running(principal, ctx.request_id):
                return await call.result()
        raise AssertionError("unreachable: a cancelled call raises")  # pragma: no cover

    # resources/*

    async def list_resources(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        """``resources/list``: the caller's agents, then the declared resources."""
        resources = [convert.to_resource(a) for a in self._visible(ctx).values()]
        return types.ListResourcesResult(resources=[*resources, *self.declared.list_resources()])

    async def read_resource(
        self, ctx: Context, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        """``resources/read``: an agent's card (``agent://NAME``) or a declared resource."""
        uri = str(params.uri)
        name = uri.removeprefix("agent://")
        agent = self._find(ctx, name) if uri.startswith("agent://") else None
        if agent is None and (contents := self.declared.read(uri)) is not None:
            return contents
        if agent is None:
            # The spec's error for an unknown resource (SEP-2164 made it -32602 in 2026-07-28).
            code = (
                types.INVALID_PARAMS if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS else -32002
            )
            raise MCPError(code, f"Resource not found: {uri}", {"uri": uri})
        return convert.resource_contents(agent, self.options.protocols.get(agent.name, ("mcp",)))

    async def list_resource_templates(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        """``resources/templates/list``: only the config's templates (every agent's
        resource is listed by its own URI)."""
        return types.ListResourceTemplatesResult(resource_templates=self.declared.list_templates())

    async def subscribe(
        self, ctx: Context, params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        """``resources/subscribe``: accepted for a resource the caller may read; declared
        resources never change, so no update follows."""
        uri = str(params.uri)
        if not self.declared.has_resource(uri) and not (
            uri.startswith("agent://") and self._find(ctx, uri.removeprefix("agent://"))
        ):
            raise MCPError(types.INVALID_PARAMS, f"Resource not found: {uri}", {"uri": uri})
        return types.EmptyResult()

    async def unsubscribe(
        self, ctx: Context, params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        """``resources/unsubscribe``: nothing to stop."""
        return types.EmptyResult()

    # prompts/*, completion/complete

    async def list_prompts(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        """``prompts/list``: the caller's agents, then the declared prompts."""
        prompts = [convert.to_prompt(a) for a in self._visible(ctx).values()]
        return types.ListPromptsResult(prompts=[*prompts, *self.declared.list_prompts()])

    async def get_prompt(
        self, ctx: Context, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult | types.InputRequiredResult:
        """``prompts/get``: a declared prompt filled in (its missing arguments asked of
        the user when it says so), or an agent's prompt."""
        arguments = params.arguments
        if (form := self.declared.to_elicit(params.name, arguments)) is not None:
            asked = await asking.prompt_arguments(ctx, params, form)
            if isinstance(asked, types.InputRequiredResult):
                return asked
            arguments = asked if asked is not None else arguments
        if (filled := self.declared.get_prompt(params.name, arguments)) is not None:
            return filled
        agent = self._find(ctx, params.name)
        if agent is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown prompt: {params.name}")
        return convert.prompt_messages(agent, params.arguments)

    async def complete(
        self, ctx: Context, params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        """``completion/complete``: a declared prompt's suggestions; every other prompt's
        one argument and a template's variables are free text, so nothing to suggest,
        but the reference must be a prompt this caller may use, and its argument."""
        ref = params.ref
        if isinstance(ref, types.PromptReference):
            argument = params.argument
            done = self.declared.complete(ref.name, argument.name, argument.value)
            if done is not None:
                return types.CompleteResult(completion=done)
        elif self.declared.has_template(ref.uri):
            return types.CompleteResult(completion=types.Completion(values=[], has_more=False))
        if not isinstance(ref, types.PromptReference) or self._find(ctx, ref.name) is None:
            raise MCPError(types.INVALID_PARAMS, "Unknown prompt or resource template")
        if params.argument.name != "message":
            raise MCPError(types.INVALID_PARAMS, f"Unknown argument: {params.argument.name}")
        return types.CompleteResult(completion=types.Completion(values=[], has_more=False))

    # logging/setLevel (up to 2025-11-25)

    async def set_logging_level(
        self, ctx: Context, params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        """``logging/setLevel``: the least level of this session's (or principal's) messages."""
        self.levels.set(ctx, params.level)
        return types.EmptyResult()

    # tasks/* (served only with a task store)

    async def get_task(self, ctx: Context, params: TaskParams) -> dict[str, Any]:
        """``tasks/get``: the task's status, and its result once it ended."""
        tasks, principal = self._task_request(ctx, params.task_id)
        return await tasks.get(principal, params.task_id)

    async def update_task(self, ctx: Context, params: UpdateParams) -> dict[str, Any]:
        """``tasks/update``: answers to the task's questions; the last one resumes its run."""
        tasks, principal = self._task_request(ctx, params.task_id)
        await tasks.update(
            principal,
            params.task_id,
            params.input_responses,
            lambda call: self._resume(ctx, principal, call),
        )
        return {"resultType": "complete"}

    async def cancel_task(self, ctx: Context, params: TaskParams) -> dict[str, Any]:
        """``tasks/cancel``: stops the task's run (a terminal task is left as it is)."""
        tasks, principal = self._task_request(ctx, params.task_id)
        await tasks.cancel(principal, params.task_id)
        return {"resultType": "complete"}

    # The caller's view, and the calls.

    def _visible(self, ctx: Context) -> Mapping[str, Agent]:
        return self.context.agents_for(caller(ctx))

    def _find(self, ctx: Context, name: str) -> Agent | None:
        return self.context.find_agent(caller(ctx), name)

    def _input_of(self, agent: Agent) -> ToolInput:
        return self.inputs.get(agent.name) or ToolInput()

    def _agent_call(
        self,
        ctx: Context,
        agent: Agent,
        params: types.CallToolRequestParams,
        principal: str,
        *,
        detached: bool = False,
    ) -> AgentCall:
        """A call of ``agent``; detached: a task's run (started or resumed), apart from
        its request, its log muted."""
        log = RunLog(ctx, agent.name, self.levels)
        return AgentCall(
            agent,
            params,
            ctx,
            self.context.memory,
            principal,
            self.options.progress_interval,
            log.mute() if detached else log,
            detached=detached,
            tool_input=self._input_of(agent),
        )

    def _resume(self, ctx: Context, principal: str, task_call: dict[str, Any]) -> Run | None:
        # A task's call going on with the answers a tasks/update completed (on any replica).
        agent = self.context.find_agent(principal, str(task_call.get("name")))
        if agent is None:
            return None
        params = types.CallToolRequestParams.model_validate(task_call)
        call = self._agent_call(ctx, agent, params, principal, detached=True)
        return lambda: _dumped(call)

    def _task_request(self, ctx: Context, task_id: str) -> tuple[TaskStore, str]:
        """The store and the caller of a ``tasks/*`` request this client may make."""
        assert self.options.tasks is not None, "tasks/* is served only with a task store"
        check_task_request(ctx, task_id)
        return self.options.tasks, caller(ctx)


def _task_call(ctx: Context, params: types.CallToolRequestParams) -> dict[str, Any]:
    """What a task keeps of its call, to run it again (on any replica) or resume it:
    the tool, its arguments, the answers a retried call brings (2026-07-28 input
    responses and request state), and how its client can be asked."""
    declared = declared_needs({need: client_declares(ctx, need) for need in DECLARED})
    answers = params.model_dump(
        by_alias=True, mode="json", exclude_none=True, include={"input_responses", "request_state"}
    )
    return {
        "name": params.name,
        "arguments": params.arguments or {},
        **answers,
        "declared": declared,
    }


def _wants_task(ctx: Context) -> bool:
    # Only the 2026-07-28 form: the SDK shapes older tools/call results as CallToolResult.
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS and negotiated(ctx)


async def _dumped(call: AgentCall) -> dict[str, Any]:
    result = await call.result()
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)


def _call_attributes(params: types.CallToolRequestParams) -> dict[str, str]:
    return {"mcp.method.name": "tools/call", "gen_ai.tool.name": params.name}
