"""OIDC bearer tokens on every surface, from a real OpenID provider (npm oidc-provider).

One agenthost (uvicorn in a thread, gRPC on) and one provider serve the module;
tests needing other settings run an app in-process. Tokens come from real
grants (client credentials; authorization code + PKCE through the MCP SDK's
OAuth client) and go through each protocol's official client; tokens with one
defect each, signed as the issuer would (the tests made its keys), are refused
with 401 on every HTTP surface and UNAUTHENTICATED on gRPC. The key rotation
test restarts the provider, so it comes last.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, urljoin, urlsplit

import anyio
import grpc
import httpx
import httpx2
import jwt
import pytest
from a2a.types import TaskState
from asgi_lifespan import LifespanManager
from cryptography.hazmat.primitives import serialization
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from openai import AuthenticationError, OpenAI

from agenthost.agents import ChatAgent
from agenthost.agents.models import EchoModel
from agenthost.app.identity import InvalidToken, looks_like_jwt
from agenthost.app.identity.keys import IssuerKeys
from agenthost.app.identity.tokens import TokenValidator
from agenthost.app.server import create_app
from agenthost.app.settings import Settings
from tests.adapters.a2a.support import (
    V1,
    collect,
    final_task,
    in_process,
    rpc,
    sdk_client,
    user_message,
)
from tests.app.identity.provider import CLIENT, OpenIDProvider, SigningKey, need_node
from tests.upstream import free_port, serve_in_thread

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

AUDIENCE = "https://agents.example.test/"
KEY = "key-of-alice-0123456789"
REDIRECT = "http://localhost:3030/callback"
AGENTS = {"t": ChatAgent("t", EchoModel()), "writers": ChatAgent("writers", EchoModel())}
ALLOW = {"writers": frozenset({"alice", "scope:agents.write"})}
SURFACES = {
    "openai": (
        "/v1/chat/completions",
        {"model": "t", "messages": [{"role": "user", "content": "hi"}]},
    ),
    "anthropic": (
        "/v1/messages",
        {"model": "t", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]},
    ),
    "a2a": ("/a2a/t", {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}),
    "mcp": ("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    "acp": ("/acp/runs", {"agent_name": "t", "input": [{"parts": [{"content": "hi"}]}]}),
    "ag_ui": ("/ag-ui/t", {"threadId": "t1", "runId": "r1", "messages": []}),
    "ai_sdk": ("/ai-sdk/t", {"messages": []}),
}


@pytest.fixture(scope="module")
def signing_key() -> SigningKey:
    return SigningKey("k1")


@pytest.fixture(scope="module")
def provider(
    signing_key: SigningKey, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[OpenIDProvider]:
    need_node()
    provider = OpenIDProvider(tmp_path_factory.mktemp("oidc"))
    provider.start(signing_key, SigningKey("k-ec", "ES256"), SigningKey("k-ed", "EdDSA"))
    try:
        yield provider
    finally:
        provider.stop()


def settings_for(provider: OpenIDProvider, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "adapters": ["openai", "anthropic", "a2a", "mcp", "acp", "ag_ui", "ai_sdk"],
        "api_keys": [f"alice:{KEY}"],
        "oidc_issuer": provider.issuer,
        "oidc_audience": AUDIENCE,
        "oidc_jwks_refetch_seconds": 0.2,
        "access_log": False,
        **overrides,
    }
    return Settings(**values)


@pytest.fixture(scope="module")
def grpc_port() -> int:
    return free_port()


@pytest.fixture(scope="module")
def server(provider: OpenIDProvider, grpc_port: int) -> Iterator[str]:
    settings = settings_for(
        provider, a2a_grpc_port=grpc_port, a2a_grpc_public_host=f"127.0.0.1:{grpc_port}"
    )
    with serve_in_thread(create_app(settings, AGENTS, allow=ALLOW), lifespan=True) as url:
        yield url


def claims(provider: OpenIDProvider, **changes: Any) -> dict[str, Any]:
    now = int(time.time())
    values = {"iss": provider.issuer, "aud": AUDIENCE, "sub": "svc", "iat": now, "exp": now + 300}
    values.update(changes)
    return {k: v for k, v in values.items() if v is not None}


def _b64(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def _hs256(payload: dict[str, Any], secret: bytes) -> str:
    """The key-confusion attack: HS256 with the issuer's public key as the secret (PyJWT
    refuses to make one, so it is made by hand)."""
    signing_input = f"{_b64({'alg': 'HS256', 'typ': 'JWT', 'kid': 'k1'})}.{_b64(payload)}"
    mac = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"


def defects(provider: OpenIDProvider, key: SigningKey) -> dict[str, str]:
    """Tokens each wrong in one way, all else as the issuer makes them."""
    good = key.sign(claims(provider))
    header, payload, signature = good.split(".")
    forged_payload = _b64(claims(provider, sub="admin"))
    public_pem = key.private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return {
        "expired": key.sign(
            claims(provider, iat=int(time.time()) - 600, exp=int(time.time()) - 120)
        ),
        "not yet valid": key.sign(claims(provider, nbf=int(time.time()) + 600)),
        "no exp": key.sign(claims(provider, exp=None)),
        "wrong audience": key.sign(claims(provider, aud="https://elsewhere.test/")),
        "wrong issuer": key.sign(claims(provider, iss="http://127.0.0.1:1/evil")),
        "tampered": f"{header}.{forged_payload}.{signature}",
        "foreign key": SigningKey("k1").sign(claims(provider)),  # same kid, another key
        "unknown kid": SigningKey("k9").sign(claims(provider)),
        "alg none": f"{_b64({'alg': 'none', 'typ': 'JWT', 'kid': 'k1'})}.{payload}.",
        "HS256 with the public key": _hs256(claims(provider), secret=public_pem),
    }


def test_a_client_credentials_token_works_on_every_surface(
    server: str, provider: OpenIDProvider
) -> None:
    token = provider.token(AUDIENCE)
    # Each client closed: one left to the garbage collector warns of its pooled socket
    # in whichever later test the collection runs.
    with OpenAI(base_url=f"{server}/v1", api_key=token, max_retries=0) as openai:
        answer = openai.chat.completions.create(
            model="t", messages=[{"role": "user", "content": "hello"}]
        )
    assert answer.choices[0].message.content == "hello"
    acp = httpx.post(
        f"{server}/acp/runs",
        json={"agent_name": "t", "input": [{"parts": [{"content": "over acp"}]}]},
        headers={"authorization": f"Bearer {token}"},
    )
    assert acp.status_code == 200, acp.text
    assert acp.json()["output"][0]["parts"][0]["content"] == "over acp"
    for alg in ("es256", "eddsa"):  # the issuer's other keys
        other = provider.token(AUDIENCE, f"agents.read {alg}")
        assert jwt.get_unverified_header(other)["alg"] == {"es256": "ES256"}.get(alg, "EdDSA")
        with OpenAI(base_url=f"{server}/v1", api_key=other, max_retries=0) as client:
            assert [m.id for m in client.models.list()] == ["t"]
    with (
        OpenAI(base_url=f"{server}/v1", api_key="not-a-token", max_retries=0) as refused,
        pytest.raises(AuthenticationError),
    ):
        refused.models.list()


async def test_the_mcp_and_a2a_clients_use_the_token(server: str, provider: OpenIDProvider) -> None:
    token = provider.token(AUDIENCE)
    headers = {"authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(f"{server}/mcp", http_client=http)) as mcp,
    ):
        result = await mcp.call_tool("t", {"message": "over mcp"})
        assert "over mcp" in str(result.content)
    for binding in ("JSONRPC", "GRPC"):
        async with await sdk_client(
            f"{server}/a2a/t", binding, key=token, streaming=False
        ) as client:
            task = final_task(await collect(client, user_message(f"over {binding}")))
            assert task.status.state == TaskState.TASK_STATE_COMPLETED


def test_defective_tokens_are_refused_with_401_on_every_surface(
    server: str, provider: OpenIDProvider, signing_key: SigningKey
) -> None:
    for defect, token in defects(provider, signing_key).items():
        for surface, (path, body) in SURFACES.items():
            sent = httpx.post(
                f"{server}{path}",
                json=body,
                headers={
                    "authorization": f"Bearer {token}",
                    "accept": "application/json, text/event-stream",
                    "anthropic-version": "2023-06-01",
                },
            )
            assert sent.status_code == 401, (defect, surface, sent.text)
            challenge = sent.headers["www-authenticate"]
            assert challenge.startswith('Bearer error="invalid_token"'), (defect, surface)
            assert "resource_metadata=" in challenge


async def test_defective_tokens_are_unauthenticated_on_grpc(
    server: str, provider: OpenIDProvider, signing_key: SigningKey
) -> None:
    for defect, token in defects(provider, signing_key).items():
        async with await sdk_client(f"{server}/a2a/t", "GRPC", key=token) as client:
            with pytest.raises(Exception) as caught:  # noqa: PT011 - the SDK wraps the gRPC error
                await collect(client, user_message("hi"))
        cause = caught.value.__cause__
        assert isinstance(cause, grpc.aio.AioRpcError), defect
        assert cause.code() == grpc.StatusCode.UNAUTHENTICATED, defect


def test_keys_and_tokens_work_together_and_scopes_open_agents(
    server: str, provider: OpenIDProvider
) -> None:
    def models(credential: str) -> list[str]:
        answer = httpx.get(f"{server}/v1/models", headers={"authorization": f"Bearer {credential}"})
        assert answer.status_code == 200, answer.text
        return sorted(m["id"] for m in answer.json()["data"])

    assert models(KEY) == ["t", "writers"]  # alice's key is allowed by name
    assert models(provider.token(AUDIENCE, "agents.read")) == ["t"]
    assert models(provider.token(AUDIENCE, "agents.read agents.write")) == ["t", "writers"]
    # A token for another resource (RFC 8707) is not for this server.
    other = provider.token("https://elsewhere.test/")
    refused = httpx.get(f"{server}/v1/models", headers={"authorization": f"Bearer {other}"})
    assert refused.status_code == 401


def test_mcp_finds_the_authorization_server_from_the_401(
    server: str, provider: OpenIDProvider
) -> None:
    refused = httpx.post(
        f"{server}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"accept": "application/json, text/event-stream"},
    )
    assert refused.status_code == 401
    challenge = refused.headers["www-authenticate"]
    metadata_url = f"{server}/.well-known/oauth-protected-resource/mcp"
    assert challenge == f'Bearer resource_metadata="{metadata_url}"'  # no credential: no error
    document = httpx.get(metadata_url)  # public
    assert document.status_code == 200
    assert document.json() == {
        "resource": f"{server}/mcp",
        "authorization_servers": [provider.issuer],
        "scopes_supported": ["agents.write"],
        "bearer_methods_supported": ["header"],
        "resource_name": "agenthost",
    }
    root = httpx.get(f"{server}/.well-known/oauth-protected-resource").json()
    assert root["resource"] == server
    discovery = httpx.get(f"{root['authorization_servers'][0]}/.well-known/openid-configuration")
    assert discovery.json()["issuer"] == provider.issuer


class MemoryTokens:
    """The MCP SDK's token storage, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


async def test_the_mcp_sdk_finds_the_issuer_from_the_401_and_gets_its_own_token(
    provider: OpenIDProvider,
) -> None:
    """The MCP SDK's OAuth client: 401 → resource metadata → the issuer's metadata → a
    client-credentials token for the /mcp resource (RFC 8707) → the tool call."""
    mcp_url = "http://localhost/mcp"  # the app in-process: its resource is this URL
    # The SDK asks for the scopes the resource metadata lists (else all the issuer's).
    settings = settings_for(
        provider, adapters=["mcp"], oidc_audience=mcp_url, oidc_required_scopes=["agents.read"]
    )
    app = create_app(settings, AGENTS)
    client_id, secret = CLIENT
    storage = MemoryTokens()
    auth = ClientCredentialsOAuthProvider(
        mcp_url, storage, client_id, secret, scope="agents.read", issuer=provider.issuer
    )
    async with LifespanManager(app) as manager:
        mounts = {"http://localhost": httpx2.ASGITransport(app=manager.app)}
        async with (
            httpx2.AsyncClient(mounts=mounts, auth=auth, timeout=30) as http,
            Client(streamable_http_client(mcp_url, http_client=http)) as mcp,
        ):
            result = await mcp.call_tool("t", {"message": "found my way"})
            assert "found my way" in str(result.content)
    assert storage.tokens is not None
    claims = jwt.decode(storage.tokens.access_token, options={"verify_signature": False})
    assert claims["aud"] == mcp_url and claims["iss"] == provider.issuer


class Browser:
    """Plays the user in a browser: signs in as ``user`` on the provider's development
    forms, consents, and hands the redirect's code to the MCP SDK's OAuth client."""

    def __init__(self, user: str) -> None:
        self.user = user
        self.result: AuthorizationCodeResult | None = None

    async def open(self, url: str) -> None:
        async with httpx.AsyncClient() as browser:
            answer = await browser.get(url)
            for _ in range(10):
                location = answer.headers.get("location", "")
                if location.startswith(REDIRECT):
                    query = dict(parse_qsl(urlsplit(location).query))
                    assert "code" in query, location
                    self.result = AuthorizationCodeResult(
                        code=query["code"], state=query.get("state"), iss=query.get("iss")
                    )
                    return
                if location:
                    answer = await browser.get(urljoin(str(answer.url), location))
                    continue
                # A form: the login one first, then the consent one.
                action = str(answer.url)
                form = {"prompt": "login", "login": self.user, "password": "x"}
                if 'name="prompt" value="consent"' in answer.text:
                    form = {"prompt": "consent"}
                answer = await browser.post(action, data=form)
            raise AssertionError(f"no redirect to the client: {answer.status_code} {answer.text}")

    async def callback(self) -> AuthorizationCodeResult:
        assert self.result is not None
        return self.result


async def test_a_connector_signs_a_user_in_with_authorization_code_and_pkce(
    provider: OpenIDProvider,
) -> None:
    """The MCP SDK's OAuthClientProvider as a connector: 401 → metadata → the issuer's
    login and consent (authorization code + PKCE, resource = /mcp) → the tool, as the user."""
    mcp_url = "http://localhost/mcp"
    settings = settings_for(
        provider, adapters=["mcp"], oidc_audience=mcp_url, oidc_required_scopes=["agents.read"]
    )
    app = create_app(settings, AGENTS)
    storage = MemoryTokens()
    storage.client = OAuthClientInformationFull(
        client_id="mcp-connector",
        redirect_uris=[REDIRECT],
        grant_types=["authorization_code"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    browser = Browser("carol")
    auth = OAuthClientProvider(
        mcp_url,
        OAuthClientMetadata(
            redirect_uris=[REDIRECT],
            grant_types=["authorization_code"],
            token_endpoint_auth_method="none",
            scope="openid agents.read",
        ),
        storage,
        redirect_handler=browser.open,
        callback_handler=browser.callback,
    )
    async with LifespanManager(app) as manager:
        mounts = {"http://localhost": httpx2.ASGITransport(app=manager.app)}
        async with (
            httpx2.AsyncClient(mounts=mounts, auth=auth, timeout=30) as http,
            Client(streamable_http_client(mcp_url, http_client=http)) as mcp,
        ):
            result = await mcp.call_tool("t", {"message": "signed in"})
            assert "signed in" in str(result.content)
    assert storage.tokens is not None
    claims = jwt.decode(storage.tokens.access_token, options={"verify_signature": False})
    assert claims["sub"] == "carol" and claims["aud"] == mcp_url


async def test_a_token_without_a_required_scope_gets_403_insufficient_scope(
    provider: OpenIDProvider,
) -> None:
    settings = settings_for(provider, oidc_required_scopes=["mcp"], adapters=["openai", "mcp"])
    async with in_process(AGENTS, settings) as http:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        accept = {"accept": "application/json, text/event-stream"}
        lacking = provider.token(AUDIENCE, "agents.read")
        refused = await http.post(
            "/mcp/", json=body, headers={**accept, "authorization": f"Bearer {lacking}"}
        )
        assert refused.status_code == 403
        challenge = refused.headers["www-authenticate"]
        assert challenge.startswith('Bearer error="insufficient_scope", scope="mcp"')
        holding = provider.token(AUDIENCE, "agents.read mcp")
        models = await http.get("/v1/models", headers={"authorization": f"Bearer {holding}"})
        assert models.status_code == 200


async def test_a_tenant_claim_keeps_one_subject_in_two_tenants_apart(
    provider: OpenIDProvider, signing_key: SigningKey
) -> None:
    settings = settings_for(provider, adapters=["openai", "a2a"], oidc_tenant_claim="org")

    def bearer(**changes: Any) -> dict[str, str]:
        return {"authorization": f"Bearer {signing_key.sign(claims(provider, **changes))}"}

    async with in_process(AGENTS, settings) as http:
        made = await http.post(
            "/v1/responses", json={"model": "t", "input": "secret"}, headers=bearer(org="t1")
        )
        assert made.status_code == 200, made.text
        url = f"/v1/responses/{made.json()['id']}"
        assert (await http.get(url, headers=bearer(org="t1"))).status_code == 200
        assert (await http.get(url, headers=bearer(org="t2"))).status_code == 404
        assert (await http.get(url, headers=bearer())).status_code == 404  # no tenant
        # A2A: a task of t1 is unknown to the same subject in t2, whatever tenant it names.
        message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
        send = rpc(
            "SendMessage", {"message": message, "configuration": {"returnImmediately": False}}
        )
        sent = await http.post("/a2a/t", json=send, headers={**V1, **bearer(org="t1")})
        task = sent.json()["result"]["task"]["id"]
        for tenant, found in (("t1", True), ("t2", False)):
            get = rpc("GetTask", {"id": task, "tenant": "t1"})
            got = await http.post("/a2a/t", json=get, headers={**V1, **bearer(org=tenant)})
            assert ("result" in got.json()) is found, got.text
            listed = await http.post(
                "/a2a/t", json=rpc("ListTasks", {}), headers={**V1, **bearer(org=tenant)}
            )
            assert (task in listed.text) is found, listed.text
        for bad in ("t1/x", "", 7, "t" * 65):
            assert (await http.get("/v1/models", headers=bearer(org=bad))).status_code == 401


async def test_opaque_tokens_are_checked_by_introspection(provider: OpenIDProvider) -> None:
    client_id, secret = CLIENT
    settings = settings_for(
        provider,
        adapters=["openai"],
        oidc_introspection_url=f"{provider.issuer}/token/introspection",
        oidc_client_id=client_id,
        oidc_client_secret=secret,
    )
    app = create_app(settings, AGENTS)
    introspector = app.state.host.tokens.introspector
    async with LifespanManager(app) as manager:
        transport = httpx.ASGITransport(app=manager.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:

            async def status(token: str) -> int:
                headers = {"authorization": f"Bearer {token}"}
                return (await http.get("/v1/models", headers=headers)).status_code

            opaque = provider.token(AUDIENCE, "agents.read opaque")
            assert not looks_like_jwt(opaque)
            assert await status(opaque) == 200
            assert introspector.requests == 1
            assert await status(opaque) == 200
            assert introspector.requests == 1  # remembered
            assert await status(provider.token("https://elsewhere.test/", "opaque")) == 401
            assert await status("an-opaque-token-the-issuer-never-made") == 401
            asked = introspector.requests
            assert await status("an-opaque-token-the-issuer-never-made") == 401
            assert introspector.requests == asked  # the refusal is remembered too
            assert await status(KEY) == 200  # a key is never sent to the issuer
            assert await status(provider.token(AUDIENCE)) == 200  # a JWT is checked here
            assert introspector.requests == asked


async def test_a_browser_client_can_read_the_challenge(provider: OpenIDProvider) -> None:
    origin = "https://inspector.example.test"
    settings = settings_for(provider, adapters=["mcp"], cors_origins=[origin])
    async with LifespanManager(create_app(settings, AGENTS)) as manager:
        transport = httpx.ASGITransport(app=manager.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
            refused = await http.post(
                "/mcp/",
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                headers={"origin": origin, "accept": "application/json, text/event-stream"},
            )
    assert refused.status_code == 401
    assert "www-authenticate" in refused.headers["access-control-expose-headers"].lower()
    assert "resource_metadata=" in refused.headers["www-authenticate"]


async def test_public_paths_stay_public_behind_a_proxy_prefix(provider: OpenIDProvider) -> None:
    app = create_app(settings_for(provider, adapters=["openai"]), AGENTS)
    async with LifespanManager(app) as manager:
        transport = httpx.ASGITransport(app=manager.app, root_path="/agents")
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
            assert (await http.get("/agents/healthz")).status_code == 200
            assert (await http.get("/agents/openapi.json")).status_code == 200
            assert (await http.get("/agents/v1/models")).status_code == 401


async def test_the_keys_are_fetched_at_start(provider: OpenIDProvider) -> None:
    app = create_app(settings_for(provider, adapters=["openai"]), AGENTS)
    keys = app.state.host.tokens.keys
    async with LifespanManager(app):
        with anyio.fail_after(10):
            while not keys.fetches:  # noqa: ASYNC110 - the start-up task sets no event
                await anyio.sleep(0.01)
    assert sorted(keys.keys) == ["k-ec", "k-ed", "k1"]


async def test_unknown_key_ids_fetch_the_keys_at_most_once_per_interval(
    provider: OpenIDProvider,
) -> None:
    keys = IssuerKeys(provider.issuer, refetch_seconds=60)
    assert await keys.key("k1") is not None
    for _ in range(20):
        assert await keys.key("made-up") is None
    assert keys.fetches == 1


def test_the_agent_card_declares_keys_and_the_issuer(server: str, provider: OpenIDProvider) -> None:
    card = httpx.get(f"{server}/a2a/t/.well-known/agent-card.json").json()  # public
    schemes = card["securitySchemes"]
    assert schemes["bearer"]["httpAuthSecurityScheme"]["scheme"] == "Bearer"
    discovery = f"{provider.issuer}/.well-known/openid-configuration"
    assert schemes["oidc"]["openIdConnectSecurityScheme"]["openIdConnectUrl"] == discovery
    assert schemes["oidc"]["type"] == "openIdConnect"  # the 0.3 card's shape too
    assert card["securityRequirements"] == [
        {"schemes": {"bearer": {}}},
        {"schemes": {"oidc": {}}},
    ]


async def test_a_remembered_token_still_expires(
    provider: OpenIDProvider, signing_key: SigningKey
) -> None:
    tokens = TokenValidator(IssuerKeys(provider.issuer), audience=AUDIENCE, skew_seconds=0)
    token = signing_key.sign(claims(provider, exp=int(time.time()) + 2))  # valid 1-2 s
    assert (await tokens.validate(token)).principal == "oidc:svc"
    assert (await tokens.validate(token)).principal == "oidc:svc"  # remembered
    await anyio.sleep(
        max(0.0, jwt.decode(token, options={"verify_signature": False})["exp"] - time.time()) + 0.1
    )
    with pytest.raises(InvalidToken, match="expired"):
        await tokens.validate(token)


def test_a_rotated_key_is_picked_up_without_a_restart(
    server: str, provider: OpenIDProvider
) -> None:
    def status(token: str) -> int:
        return httpx.get(
            f"{server}/v1/models", headers={"authorization": f"Bearer {token}"}
        ).status_code

    before = provider.token(AUDIENCE)
    assert status(before) == 200
    provider.restart(SigningKey("k2"))
    time.sleep(0.3)  # past the refetch floor
    after = provider.token(AUDIENCE)
    assert jwt.get_unverified_header(after)["kid"] == "k2"
    assert status(after) == 200
    assert status(before) == 401  # k1 is gone from the issuer's keys
