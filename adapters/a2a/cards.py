"""Agent cards: what each agent says about itself, with URLs a client can use.

URLs come from the configured public base URL, else from the request
(``X-Forwarded-Proto``/``-Host``/``-Prefix`` only when the proxy is
trusted). Every agent lists JSON-RPC, HTTP+JSON and, when it is served,
gRPC, each in A2A 1.0 and (unless ``card_v03`` is off) 0.3: same
endpoints, the SDK answers both; with 0.3 interfaces listed the SDK adds
the 0.3 card fields (``url``, ``preferredTransport``...) that 0.3 clients
read. A gRPC client reaches an agent by the interface's ``tenant``.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from urllib.parse import urlsplit

from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    HTTPAuthSecurityScheme,
    OpenIdConnectSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a.utils.constants import PROTOCOL_VERSION_0_3, PROTOCOL_VERSION_1_0, TransportProtocol
from starlette.requests import HTTPConnection

from agenthost.adapters.a2a.options import A2AOptions
from agenthost.agents import Agent
from agenthost.agents.skills import Skill
from agenthost.agents.tools.reach import callable_tools

BEARER = "bearer"
OIDC = "oidc"
TEXT_MODES = ["text/plain", "application/json"]


def _agenthost_version() -> str:
    try:
        return version("agenthost")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0.0.0"


VERSION = _agenthost_version()


def origin(connection: HTTPConnection, options: A2AOptions) -> str:
    """The server's public base URL, without a trailing slash."""
    if options.public_url:
        return options.public_url.rstrip("/")
    headers = connection.headers
    if options.trust_forwarded and "x-forwarded-host" in headers:
        scheme = _first(headers.get("x-forwarded-proto")) or connection.url.scheme
        host = _first(headers["x-forwarded-host"])
        prefix = _first(headers.get("x-forwarded-prefix")).rstrip("/")
        return f"{scheme}://{host}{prefix}"
    return f"{connection.url.scheme}://{connection.url.netloc}"


def _first(value: str | None) -> str:
    return (value or "").split(",")[0].strip()


def grpc_target(base: str, options: A2AOptions) -> str | None:
    """``host:port`` of the gRPC server as clients reach it (None: gRPC off)."""
    if not options.grpc_port:
        return None
    if options.grpc_public_host:
        return options.grpc_public_host
    host = urlsplit(base).hostname or options.grpc_host
    return f"{host}:{options.grpc_port}"


def agent_url(base: str, options: A2AOptions, agent: str) -> str:
    return f"{base}{options.prefix}/{agent}"


def build_card(
    agent: Agent,
    base: str,
    options: A2AOptions,
    *,
    grpc_v03: bool,
    skills: Sequence[Skill] = (),
    extensions: Sequence[AgentExtension] = (),
) -> AgentCard:
    """The card of ``agent`` as served from ``base``.

    ``grpc_v03``: list the 0.3 gRPC interface (its calls name the agent in
    the ``a2a-tenant`` metadata, or reach the default agent). ``skills``:
    the config's; without them, one skill made from the description.
    ``extensions``: the A2A extensions the agent supports (Agent Stack's).
    """
    url = agent_url(base, options, agent.name)
    versions = (
        (PROTOCOL_VERSION_1_0, PROTOCOL_VERSION_0_3)
        if options.card_v03
        else (PROTOCOL_VERSION_1_0,)
    )
    interfaces = [
        AgentInterface(url=url, protocol_binding=binding, protocol_version=protocol)
        for protocol in versions
        for binding in (TransportProtocol.JSONRPC, TransportProtocol.HTTP_JSON)
    ]
    if target := grpc_target(base, options):
        interfaces.insert(
            2,
            AgentInterface(
                url=target,
                protocol_binding=TransportProtocol.GRPC,
                protocol_version=PROTOCOL_VERSION_1_0,
                tenant=agent.name,
            ),
        )
        if grpc_v03 and options.card_v03:
            interfaces.append(
                AgentInterface(
                    url=target,
                    protocol_binding=TransportProtocol.GRPC,
                    protocol_version=PROTOCOL_VERSION_0_3,
                )
            )
    description = agent.description or f"The {agent.name} agent."
    card = AgentCard(
        name=agent.name,
        description=description,
        version=VERSION,
        provider=AgentProvider(organization="agenthost", url=base),
        supported_interfaces=interfaces,
        capabilities=AgentCapabilities(
            streaming=True,
            push_notifications=True,
            extensions=list(extensions),
            # With auth on, a caller who presents a key or token gets the extended card.
            extended_agent_card=options.auth,
        ),
        default_input_modes=TEXT_MODES,
        default_output_modes=TEXT_MODES,
        skills=[
            AgentSkill(
                id=skill.id,
                name=skill.name,
                description=skill.description,
                tags=list(skill.tags) or [agent.name],  # the spec wants at least one
                examples=list(skill.examples),
            )
            for skill in skills
        ]
        or [
            AgentSkill(id=agent.name, name=agent.name, description=description, tags=["agenthost"])
        ],
    )
    if options.auth:
        add_security(card, options.token_issuer)
    return card


TOOL_SKILL = "tool:"
"""The id prefix of a skill the extended card makes of one of the agent's tools."""


def extend_card(card: AgentCard, agent: Agent) -> AgentCard:
    """The extended card an authenticated caller gets: the public ``card`` plus one
    skill per tool the agent's model may call (id ``tool:NAME``, the tool's
    description) — what the agent can reach, which anonymous readers are not told.
    Tools found at run time (an MCP toolset's) are not listed, nor tools the agent's
    model cannot call (the embedded model calls only those its ``tool_choice`` forces)."""
    extended = AgentCard()
    extended.CopyFrom(card)
    tools = callable_tools(agent, found_at_run_time=False)
    extended.skills.extend(
        AgentSkill(
            id=TOOL_SKILL + tool.name,
            name=tool.name,
            description=tool.description or f"The {tool.name} tool.",
            tags=["tool", agent.name],
        )
        for tool in tools
    )
    return extended


def add_security(card: AgentCard, issuer: str | None) -> None:
    """What the card's caller must send: a bearer (an API key, or with ``issuer`` an
    access token of that OpenID Connect issuer, which the card names)."""
    what = "An agenthost API key" + (" or an OIDC access token of the issuer" if issuer else "")
    card.security_schemes[BEARER].CopyFrom(
        SecurityScheme(
            http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="Bearer", description=what)
        )
    )
    card.security_requirements.append(SecurityRequirement(schemes={BEARER: StringList()}))
    if issuer:
        discovery = issuer.rstrip("/") + "/.well-known/openid-configuration"
        card.security_schemes[OIDC].CopyFrom(
            SecurityScheme(
                open_id_connect_security_scheme=OpenIdConnectSecurityScheme(
                    open_id_connect_url=discovery,
                    description="Access tokens of this issuer, sent as 'Authorization: Bearer'.",
                )
            )
        )
        # Either one (requirements are alternatives).
        card.security_requirements.append(SecurityRequirement(schemes={OIDC: StringList()}))
