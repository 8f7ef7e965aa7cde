"""``/docs`` (Swagger UI) and ``/redoc`` (ReDoc), served from the installed
``fastapi-offline`` package.

FastAPI's own ``/docs`` page loads Swagger UI from a CDN, so it is blank on a
machine without one. This page is the same Swagger UI, with its script,
stylesheet and icon served by the app itself under ``/docs/``; the page
fetches nothing from another host (no validator badge either).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import fastapi_offline
from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse

DOCS_URL = "/docs"
_STATIC = Path(fastapi_offline.__file__).parent / "static"
# The only files served (by name: no directory listing, no path to walk).
ASSETS = {
    "swagger-ui-bundle.js": "text/javascript",
    "swagger-ui.css": "text/css",
    "favicon.png": "image/png",
}
# The page's files are public like the page: a browser sends no API key for them.
ASSET_PATHS = tuple(f"{DOCS_URL}/{name}" for name in ASSETS)
REDOC_URL = "/redoc"
# ReDoc's page and its one script (its icon is /docs/favicon.png), public too.
REDOC_PATHS = (REDOC_URL, f"{REDOC_URL}/redoc.standalone.js")
# ReDoc's footer shows a logo from cdn.redoc.ly: the policy keeps the browser
# from asking for it (the page is otherwise offline already).
_REDOC_CSP = (
    "default-src 'self'; script-src 'self' blob:; worker-src 'self' blob:; "
    "style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:"
)
# They change only with the package's version.
_CACHE = {"Cache-Control": "public, max-age=86400"}


def add_docs(app: FastAPI) -> None:
    """Serve Swagger UI for ``app``'s OpenAPI document at ``/docs``, offline.

    The app is created with ``docs_url=None`` (and ``redoc_url=None``), so
    that FastAPI's CDN page is not served beside this one.
    """
    if app.openapi_url is None:
        raise ValueError("add_docs needs the app's OpenAPI document (openapi_url is None)")
    openapi_url = app.openapi_url
    parameters = {"validatorUrl": None, **(app.swagger_ui_parameters or {})}

    async def docs(request: Request) -> HTMLResponse:
        root = str(request.scope.get("root_path", "")).rstrip("/")
        return get_swagger_ui_html(
            openapi_url=root + openapi_url,
            title=f"{app.title} - Swagger UI",
            swagger_js_url=f"{root}{DOCS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{DOCS_URL}/swagger-ui.css",
            swagger_favicon_url=f"{root}{DOCS_URL}/favicon.png",
            swagger_ui_parameters=parameters,
        )

    async def redoc(request: Request) -> HTMLResponse:
        root = str(request.scope.get("root_path", "")).rstrip("/")
        page = get_redoc_html(
            openapi_url=root + openapi_url,
            title=f"{app.title} - ReDoc",
            redoc_js_url=root + REDOC_PATHS[1],
            redoc_favicon_url=f"{root}{DOCS_URL}/favicon.png",
            with_google_fonts=False,
        )
        page.headers["Content-Security-Policy"] = _REDOC_CSP
        return page

    app.add_api_route(DOCS_URL, docs, methods=["GET"], include_in_schema=False)
    app.add_api_route(REDOC_URL, redoc, methods=["GET"], include_in_schema=False)
    app.add_api_route(
        REDOC_PATHS[1],
        _asset("redoc.standalone.js", "text/javascript"),
        methods=["GET"],
        include_in_schema=False,
    )
    for name, media_type in ASSETS.items():
        app.add_api_route(
            f"{DOCS_URL}/{name}", _asset(name, media_type), methods=["GET"], include_in_schema=False
        )


def _asset(name: str, media_type: str) -> Callable[[], Awaitable[FileResponse]]:
    path = _STATIC / name

    async def asset() -> FileResponse:
        return FileResponse(path, media_type=media_type, headers=_CACHE)

    return asset
