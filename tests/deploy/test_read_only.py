"""The pod's file system, here: the app serves with only a temporary directory writable.

The chart runs the image with a read-only root file system and an emptyDir at
/tmp. This starts ``agenthost serve`` the way the pod does — the rendered
Deployment's environment, the rendered ConfigMap and API keys Secret as files —
in a mount namespace where the working directory, HOME, the config and keys
folders and the code are read-only mounts, and only TMPDIR is writable.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest

from tests.commands import wait_ready
from tests.deploy.chart import container, env_of, one, render
from tests.upstream import free_port

pytestmark = pytest.mark.slow

REPO = Path(__file__).parents[2]

# Bind-mount each folder onto itself read-only, prove the working directory
# is not writable, then become the server.
READ_ONLY = """
IFS=:
for folder in $READ_ONLY_DIRS; do
  mount --bind "$folder" "$folder" && mount -o remount,bind,ro "$folder" || exit 96
done
unset IFS
if touch "$PWD/.probe" 2>/dev/null || touch "$HOME/.probe" 2>/dev/null; then
  echo "the working directory or HOME is writable" >&2; exit 97
fi
exec "$@"
"""
UNSHARE = ["unshare", "--user", "--map-root-user", "--mount", "--propagation", "private"]


def _pod_files(root: Path) -> tuple[dict[str, str], Path]:
    """The rendered pod's environment, its mounted files laid out under ``root``."""
    objects = render({"apiKeys": {"keys": {"alice": "sk-alice-test-0123456789"}}})
    env = env_of(container(objects))
    config = root / "config"
    keys = root / "keys"
    for folder in (config, keys):
        folder.mkdir()
    (config / "agents.yaml").write_text(one(objects, "ConfigMap")["data"]["agents.yaml"])
    secret = one(objects, "Secret")
    (keys / "api-keys").write_text(secret["stringData"]["api-keys"])
    env["AGENTHOST_CONFIG"] = env["AGENTHOST_CONFIG"].replace("/etc/agenthost/config", str(config))
    env["AGENTHOST_API_KEYS_FILE"] = env["AGENTHOST_API_KEYS_FILE"].replace(
        "/etc/agenthost/keys", str(keys)
    )
    return env, config.parent


@pytest.fixture(scope="module")
def pod(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    if shutil.which("unshare") is None:
        pytest.fail("util-linux's unshare is needed to mount folders read-only")
    root = tmp_path_factory.mktemp("pod")
    env, files = _pod_files(root)
    work, home, tmp = root / "work", root / "home", root / "tmp"
    for folder in (work, home, tmp):
        folder.mkdir()
    port = free_port()
    read_only = [work, home, files / "config", files / "keys", REPO]
    if not Path(sys.prefix).is_relative_to(REPO):
        read_only.append(Path(sys.prefix))
    env |= {
        "AGENTHOST_HOST": "127.0.0.1",  # tests listen on loopback only
        "AGENTHOST_PORT": str(port),
        "AGENTHOST_DRAIN_SECONDS": "0",
        "HOME": str(home),
        "TMPDIR": str(tmp),
        "READ_ONLY_DIRS": ":".join(map(str, read_only)),
        "PATH": os.environ["PATH"],
    }
    command = [
        *UNSHARE,
        "sh",
        "-c",
        READ_ONLY,
        "sh",
        sys.executable,
        "-P",
        "-m",
        "agenthost.app",
        "serve",
    ]
    process = subprocess.Popen(
        command, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    url = f"http://127.0.0.1:{port}"
    try:
        try:
            wait_ready(process, url, timeout=60)
        except RuntimeError as error:
            process.kill()
            output, _ = process.communicate(timeout=30)
            pytest.fail(f"{error}:\n{output}")
        yield url, work
    finally:
        process.terminate()
        output, _ = process.communicate(timeout=60)
        assert "Traceback" not in output, output
        assert process.returncode in (0, -15), output
    assert list(work.iterdir()) == [] and list(home.iterdir()) == []


def test_the_pod_serves_its_agents_from_a_read_only_file_system(pod: tuple[str, Path]) -> None:
    url, _ = pod
    with openai.OpenAI(base_url=f"{url}/v1", api_key="sk-alice-test-0123456789") as client:
        assert [m.id for m in client.models.list().data] == ["echo", "assistant"]
        echoed = client.chat.completions.create(
            model="echo", messages=[{"role": "user", "content": "read-only"}]
        )
        assert echoed.choices[0].message.content == "read-only"
        answer = client.chat.completions.create(
            model="assistant",
            messages=[{"role": "user", "content": "Say hello."}],
            max_tokens=16,
            temperature=0,
        )
        assert (answer.choices[0].message.content or "").strip()
    assert httpx.get(f"{url}/v1/models").status_code == 401  # the Secret's key is required


def test_the_guard_refuses_to_start_with_a_writable_working_directory(tmp_path: Path) -> None:
    # Without the read-only mounts the same command stops before the server starts.
    env = {"READ_ONLY_DIRS": "", "HOME": str(tmp_path), "PATH": os.environ["PATH"]}
    command = [*UNSHARE, "sh", "-c", READ_ONLY, "sh", "true"]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 97 and "writable" in done.stderr
