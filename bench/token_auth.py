"""CPU per request of an OIDC JWT (cached JWKS) against an API key, side by side.

Two measurements, each alternating the credentials round by round (ABAB...)
so drift hits all of them, CPU read with ``time.process_time`` (this process
only: everything runs in it):

- **guard**: ``APIKeyGuard`` alone (app/guards.py) in front of an ASGI app
  that answers 204: what authenticating costs, with every token checked
  afresh (signature and claims) and with the validator remembering the
  tokens it checked (a client sends one token until it expires).
- **app**: the whole agenthost app (``GET /v1/models``, one agent) called as
  ASGI, no HTTP client or server: what a cheap request costs in all.

The issuer is a local HTTP server (a thread) serving a discovery document
and a JWKS with RS256, ES256 and EdDSA keys; the validator fetches them once,
on the first token, and every measured request finds them cached.

    .venv/bin/python bench/token_auth.py [--requests N] [--rounds R]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from asgi_lifespan import LifespanManager
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agenthost.agents import ChatAgent
from agenthost.agents.models import EchoModel
from agenthost.app.guards import APIKeyGuard
from agenthost.app.server import create_app
from agenthost.app.settings import Settings

AUDIENCE = "https://agents.example.test/"
KEY = "key-of-alice-0123456789"
KEYS: dict[str, tuple[Any, Callable[[Any], str]]] = {
    "RS256": (rsa.generate_private_key(public_exponent=65537, key_size=2048), RSAAlgorithm.to_jwk),
    "ES256": (ec.generate_private_key(ec.SECP256R1()), ECAlgorithm.to_jwk),
    "EdDSA": (ed25519.Ed25519PrivateKey.generate(), OKPAlgorithm.to_jwk),
}


def start_issuer() -> str:
    """A discovery document and the keys' public JWKS on a free port; the issuer URL."""
    documents: dict[str, bytes] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = documents.get(self.path)
            self.send_response(200 if body else 404)
            self.send_header("content-type", "application/json")
            self.end_headers()
            self.wfile.write(body or b"{}")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    issuer = f"http://127.0.0.1:{server.server_address[1]}"
    keys = [
        {**json.loads(to_jwk(private.public_key())), "kid": alg, "alg": alg, "use": "sig"}
        for alg, (private, to_jwk) in KEYS.items()
    ]
    documents["/.well-known/openid-configuration"] = json.dumps(
        {"issuer": issuer, "jwks_uri": f"{issuer}/jwks"}
    ).encode()
    documents["/jwks"] = json.dumps({"keys": keys}).encode()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return issuer


def token(issuer: str, alg: str) -> str:
    now = int(time.time())
    claims = {"iss": issuer, "aud": AUDIENCE, "sub": "svc", "iat": now, "exp": now + 3600}
    claims["scope"] = "agents.read"
    return jwt.encode(claims, KEYS[alg][0], algorithm=alg, headers={"kid": alg})


async def no_content(scope: Scope, receive: Receive, send: Send) -> None:
    await send({"type": "http.response.start", "status": 204, "headers": []})
    await send({"type": "http.response.body", "body": b""})


async def call(app: ASGIApp, path: str, credential: str) -> int:
    """One GET through ``app`` as ASGI; its status."""
    status = 0
    scope: Scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(b"host", b"127.0.0.1"), (b"authorization", f"Bearer {credential}".encode())],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    await app(scope, receive, send)
    return status


async def measure(
    app: ASGIApp, path: str, credentials: dict[str, str], requests: int, rounds: int
) -> dict[str, float]:
    """µs of CPU per request, per credential (the least of its rounds: the least disturbed)."""
    for credential in credentials.values():  # warm up, and fetch the keys once
        for _ in range(200):
            assert await call(app, path, credential) in (200, 204)
    best = {name: float("inf") for name in credentials}
    for _ in range(rounds):
        for name, credential in credentials.items():
            start = time.process_time()
            for _ in range(requests):
                await call(app, path, credential)
            spent = (time.process_time() - start) / requests * 1e6
            best[name] = min(best[name], spent)
    return best


def report(title: str, costs: dict[str, float]) -> None:
    key = costs["API key"]
    print(f"\n{title}")
    print(f"{'credential':<14}{'µs CPU/request':>16}{'vs API key':>12}")
    for name, cost in costs.items():
        print(f"{name:<14}{cost:>16.1f}{cost / key:>12.2f}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000, help="per round and credential")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    issuer = start_issuer()
    settings = Settings(
        adapters=["openai"],
        api_keys=[f"alice:{KEY}"],
        oidc_issuer=issuer,
        oidc_audience=AUDIENCE,
        access_log=False,
        metrics=False,
        loop_stall_seconds=0,  # the measuring loop holds the loop on purpose
    )
    credentials = {"API key": KEY} | {f"JWT {alg}": token(issuer, alg) for alg in KEYS}
    for remember, title in ((0, "each token checked afresh"), (4096, "a token seen before")):
        tokens = settings.token_validator()
        assert tokens is not None
        tokens.remember = remember
        guard = APIKeyGuard(
            no_content,
            principals=settings.principals(),
            public=(),
            error_for=lambda *_: None,  # type: ignore[arg-type,return-value]  # never refuses
            tokens=tokens,
        )
        costs = await measure(guard, "/", credentials, args.requests, args.rounds)
        report(f"guard alone, {title}", costs)
    app = create_app(settings, {"echo": ChatAgent("echo", EchoModel())})
    async with LifespanManager(app) as manager:
        costs = await measure(manager.app, "/v1/models", credentials, args.requests, args.rounds)
    report("whole app, GET /v1/models", costs)


if __name__ == "__main__":
    asyncio.run(main())
