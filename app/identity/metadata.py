"""OAuth 2.0 Protected Resource Metadata (RFC 9728) for the MCP endpoint.

An MCP client (claude.ai's connectors, MCP Inspector, the MCP SDKs' OAuth
support) that gets a 401 from ``/mcp`` reads ``resource_metadata`` from its
``WWW-Authenticate`` header, fetches this document, and learns from it which
authorization server issues tokens for the resource (MCP authorization,
2025-11-25). agenthost names the configured OIDC issuer there; it issues no
tokens itself.
"""

from __future__ import annotations

from collections.abc import Iterable

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.types import Scope

WELL_KNOWN = "/.well-known/oauth-protected-resource"
MCP_PREFIX = "/mcp"
PATHS = (WELL_KNOWN, WELL_KNOWN + MCP_PREFIX)


def base_url(scope: Scope) -> str:
    """The server's URL as the caller reached it (scheme, Host header, proxy prefix)."""
    host = "localhost"
    for name, value in scope["headers"]:
        if name == b"host":
            host = value.decode("latin-1")
            break
    return f"{scope.get('scheme', 'http')}://{host}{scope.get('root_path', '')}"


def metadata_url(scope: Scope, path: str) -> str:
    """The metadata document for the resource ``path`` belongs to (``/mcp`` has its own)."""
    own = path == MCP_PREFIX or path.startswith(MCP_PREFIX + "/")
    return base_url(scope) + WELL_KNOWN + (MCP_PREFIX if own else "")


def build_router(issuer: str, scopes: Iterable[str]) -> APIRouter:
    """The metadata documents: the server's, and the MCP endpoint's."""
    router = APIRouter(include_in_schema=False)
    supported = sorted(set(scopes))

    def document(request: Request, resource: str) -> JSONResponse:
        body: dict[str, object] = {
            "resource": base_url(request.scope) + resource,
            "authorization_servers": [issuer],
            "bearer_methods_supported": ["header"],
            "resource_name": "agenthost",
        }
        if supported:
            # Clients ask for these (the MCP SDK: all of them); an empty list would make
            # them ask for none, which an issuer may refuse.
            body["scopes_supported"] = supported
        return JSONResponse(body, headers={"cache-control": "max-age=3600"})

    @router.get(WELL_KNOWN)
    async def server_metadata(request: Request) -> JSONResponse:
        return document(request, "")

    @router.get(WELL_KNOWN + MCP_PREFIX)
    async def mcp_metadata(request: Request) -> JSONResponse:
        return document(request, MCP_PREFIX)

    return router
