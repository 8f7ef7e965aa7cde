"""Serve agenthost's app under one HTTP protocol variant, for ``http_limits.py``.

    python bench/serve_variant.py VARIANT CONFIG --port PORT

- ``uvicorn``: uvicorn's default httptools protocol, no limits (before issue 12);
- ``agenthost``: what ``agenthost serve`` runs (``app.serving.build_server``);
- ``h11``: uvicorn's h11 protocol with ``h11_max_incomplete_event_size`` as the
  head limit (h11 has no head time-out or header count of its own).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import uvicorn

from agenthost.app.server import create_app
from agenthost.app.serving import build_server
from agenthost.app.settings import Settings


def main(variant: str, port: int, config: Path) -> None:
    settings = Settings(config=config, port=port, log_level="warning", access_log=False)
    app = create_app(settings)
    if variant == "agenthost":
        build_server(settings, app).run()
        return
    options = {"h11": {"http": "h11", "h11_max_incomplete_event_size": settings.max_header_bytes}}
    uvicorn.run(
        app,
        host=settings.host,
        port=port,
        log_level="warning",
        access_log=False,
        **options.get(variant, {"http": "httptools"}),  # type: ignore[arg-type]
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variant", choices=["uvicorn", "agenthost", "h11"])
    parser.add_argument("config", type=Path)
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    main(args.variant, args.port, args.config)
