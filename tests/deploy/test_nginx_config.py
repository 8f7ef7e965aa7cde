"""deploy/compose/nginx.conf, checked by the real nginx (``nginx -t``; no engine needed).

The machine's nginx is Debian 12's 1.22, the oldest the file claims and the
one CI's stand-in load-balancer image carries.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
CONF = ROOT / "deploy" / "compose" / "nginx.conf"


def nginx_test(conf_text: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``nginx -t`` of ``conf_text`` under a private prefix (no root, no /var/log)."""
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(nginx).exists():
        pytest.skip("nginx is not installed")
    conf = tmp_path / "nginx.conf"
    conf.write_text(conf_text)
    (tmp_path / "logs").mkdir(exist_ok=True)
    # Debian's nginx.conf includes mime.types and friends; ours includes nothing.
    return subprocess.run(
        [nginx, "-t", "-q", "-p", str(tmp_path), "-c", str(conf), "-e", "stderr",
         "-g", f"pid {tmp_path}/nginx.pid;"],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip


def test_nginx_accepts_the_load_balancers_config(tmp_path: Path) -> None:
    done = nginx_test(CONF.read_text(), tmp_path)
    assert done.returncode == 0, done.stderr


def test_nginx_refuses_a_broken_copy(tmp_path: Path) -> None:
    # The check can fail: a directive nginx 1.22 lacks (an upstream server's
    # `resolve`, 1.27.3) is refused.
    broken = CONF.read_text().replace(
        "http {", "http {\n  upstream u { zone u 64k; server agenthost-replica:8000 resolve; }", 1
    )
    done = nginx_test(broken, tmp_path)
    assert done.returncode != 0


def _directives() -> dict[str, str]:
    text = re.sub(r"#.*", "", CONF.read_text())
    return {m[1]: m[2].strip() for m in re.finditer(r"^\s*([a-z_]+)\s+([^;{]*);", text, re.M)}


def test_replicas_are_resolved_per_request_through_dockers_dns() -> None:
    d = _directives()
    assert d["resolver"].split()[0] == "127.0.0.11"
    valid = int(re.search(r"valid=(\d+)s", d["resolver"])[1])  # type: ignore[index]
    assert valid <= 10
    # A variable in proxy_pass is what makes nginx resolve at request time.
    assert d["set"] == "$replicas agenthost-replica"
    assert d["proxy_pass"] == "http://$replicas:8000"
    # Without `resolve`, an upstream block would pin the addresses found at start.
    assert not re.search(r"^\s*upstream\s", re.sub(r"#.*", "", CONF.read_text()), re.M)
    compose = (ROOT / "compose.scale.yaml").read_text()
    assert "aliases: [agenthost-replica]" in compose


def test_a_dead_replica_costs_a_second_not_a_hang() -> None:
    d = _directives()
    assert d["proxy_connect_timeout"] == "1s"
    assert {"error", "timeout"} <= set(d["proxy_next_upstream"].split())
    assert "non_idempotent" not in d["proxy_next_upstream"]
    assert int(d["proxy_next_upstream_timeout"].rstrip("s")) <= 5


def test_streams_are_not_buffered_nor_cut() -> None:
    d = _directives()
    assert d["proxy_buffering"] == "off"
    assert int(d["proxy_read_timeout"].rstrip("s")) >= 600
    assert int(d["proxy_send_timeout"].rstrip("s")) >= 600
    assert d["proxy_http_version"] == "1.1"
    assert "ip_hash" not in d and "sticky" not in d


def test_the_body_limit_lets_the_app_answer_oversized_bodies() -> None:
    from agenthost.app.settings import Settings

    limit_mb = int(_directives()["client_max_body_size"].rstrip("m"))
    assert limit_mb * 1024 * 1024 > Settings().max_body_bytes
