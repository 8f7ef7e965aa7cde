"""A real nginx reverse proxy for the tests, on free ports in a temporary folder.

``nginx_proxy({name: upstream_url}, read_timeout=…)`` runs nginx (Debian
package ``nginx``) as a child process, not a daemon, with one listener per
upstream, and stops it on exit. Only the read time-out differs from the
compose load balancer (``deploy/compose/nginx.conf``): buffering is off the
same way. A test that needs it is skipped, with the reason, only when the
binary is not installed (``.ci/run`` installs it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.stores import _wait_for_port
from tests.upstream import free_port

SERVER = """
  server {{
    listen 127.0.0.1:{port};
    location / {{
      proxy_pass {upstream};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_buffering off;
      proxy_cache off;
      proxy_read_timeout {read_timeout}ms;
    }}
  }}
"""


def _binary() -> str:
    binary = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin")
    if binary is None:
        pytest.skip("nginx is not installed (apt-get install -y nginx)")
    return binary


def _config(
    folder: Path, ports: Mapping[str, int], upstreams: Mapping[str, str], read: float
) -> str:
    temp = "\n".join(
        f"  {kind}_temp_path {folder / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    servers = "".join(
        SERVER.format(port=ports[name], upstream=url.rstrip("/"), read_timeout=int(read * 1000))
        for name, url in upstreams.items()
    )
    user = "user root;\n" if os.geteuid() == 0 else ""  # workers may read the temp folder
    return (
        f"{user}worker_processes 1;\npid {folder / 'nginx.pid'};\nerror_log stderr warn;\n"
        f"events {{ worker_connections 256; }}\n"
        f"http {{\n  access_log off;\n{temp}\n{servers}}}\n"
    )


@contextmanager
def nginx_proxy(upstreams: Mapping[str, str], *, read_timeout: float) -> Iterator[dict[str, str]]:
    """nginx in front of each of ``upstreams`` (name: URL); the proxy's URL for each name."""
    binary = _binary()
    for url in upstreams.values():
        assert urlsplit(url).scheme == "http", url
    ports = {name: free_port() for name in upstreams}
    with tempfile.TemporaryDirectory(prefix="nginx-") as name:
        folder = Path(name)
        config = folder / "nginx.conf"
        config.write_text(_config(folder, ports, upstreams, read_timeout))
        process = subprocess.Popen(
            [binary, "-p", str(folder), "-c", str(config), "-g", "daemon off;"]
        )
        try:
            for port in ports.values():
                _wait_for_port(port, process, "nginx")
            yield {name: f"http://127.0.0.1:{port}" for name, port in ports.items()}
        finally:
            process.terminate()
            process.wait(timeout=30)
