"""``agenthost migrate``: the A2A task tables made in a real PostgreSQL before any pod starts,
run as the chart's pre-install and pre-upgrade hook Job runs it."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import asyncpg  # type: ignore[import-untyped]
import pytest

from agenthost.adapters.a2a.tasks import TaskStores
from agenthost.app.cli import main
from tests.deploy.chart import CHART, one, render
from tests.deploy.test_read_only import READ_ONLY, UNSHARE
from tests.stores import PostgresServer, free_port, postgres

REPO = CHART.parents[2]

TABLES = {"tasks", "task_versions", "task_events", "push_notification_configs"}


@pytest.fixture(scope="module")
def database() -> Iterator[PostgresServer]:
    """A PostgreSQL of this module's own: its tables start absent."""
    with postgres() as server:
        yield server


def columns(server: PostgresServer) -> dict[str, set[str]]:
    """Every table of the public schema with its columns."""

    async def read() -> dict[str, set[str]]:
        connection = await asyncpg.connect(
            host="127.0.0.1", port=server.port, user="agenthost", database="agenthost"
        )
        try:
            rows = await connection.fetch(
                "SELECT table_name, column_name FROM information_schema.columns "
                "WHERE table_schema = 'public'"
            )
        finally:
            await connection.close()
        found: dict[str, set[str]] = {}
        for row in rows:
            found.setdefault(row["table_name"], set()).add(row["column_name"])
        return found

    return asyncio.run(read())


def run_the_job(url: str, root: Path) -> subprocess.CompletedProcess[str]:
    """The chart's migration Job as its pod runs it: the rendered command and environment
    (the URL from the rendered hook Secret), a read-only file system but for TMPDIR, and no
    agents file (the hook runs before the release's ConfigMap exists)."""
    values = {
        "replicaCount": 2,
        "sessionStore": {"backend": "redis", "redis": {"url": "redis://r:6379/0"}},
        "a2aTaskStore": {"backend": "postgresql", "postgresql": {"url": url}},
    }
    objects = render(values)
    (job,) = one(objects, "Job")["spec"]["template"]["spec"]["containers"]
    env: dict[str, str] = {}
    for variable in job["env"]:
        if "value" in variable:
            env[variable["name"]] = variable["value"]
        else:
            ref = variable["valueFrom"]["secretKeyRef"]
            env[variable["name"]] = one(objects, "Secret", ref["name"])["stringData"][ref["key"]]
    assert job["command"][0] == "agenthost"
    command = [sys.executable, "-P", "-m", "agenthost.app", *job["command"][1:]]
    work, home, tmp = root / "work", root / "home", root / "tmp"
    for folder in (work, home, tmp):
        folder.mkdir()
    read_only = [work, home, REPO]
    if not Path(sys.prefix).is_relative_to(REPO):
        read_only.append(Path(sys.prefix))
    assert env.pop("TMPDIR") == job["volumeMounts"][0]["mountPath"] == "/tmp"
    env |= {
        "TMPDIR": str(tmp),
        "HOME": str(home),
        "READ_ONLY_DIRS": ":".join(map(str, read_only)),
        "PATH": os.environ["PATH"],
    }
    return subprocess.run(
        [*UNSHARE, "sh", "-c", READ_ONLY, "sh", *command],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_migrate_makes_the_tables_serve_would_and_exits(
    database: PostgresServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert columns(database) == {}
    done = run_the_job(database.url, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "tables ready" in done.stdout
    made = columns(database)
    assert set(made) == TABLES
    assert {"id", "context_id", "status", "owner"} <= made["tasks"]

    # Again (every upgrade runs it): nothing changes, nothing fails.
    code, out, err = in_process(database.url, monkeypatch, capsys)
    assert code == 0, err
    assert "tables ready" in out
    assert columns(database) == made

    # A server's start-up on the migrated database finds every table it needs there.
    async def start() -> bool:
        stores = TaskStores(database.url, max_tasks=10, ttl=60.0)
        stores.tasks("echo")
        stores.push_configs("echo")
        try:
            await stores.start()
            return stores.initialized and (await stores.health())["a2a_task_store"] == "up"
        finally:
            await stores.aclose()

    assert asyncio.run(start())
    assert columns(database) == made


def in_process(
    store: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    """``agenthost migrate`` called in this process: exit status, stdout, stderr."""
    monkeypatch.setenv("AGENTHOST_A2A_TASK_STORE", store)
    code = main(["migrate"])
    out, err = capsys.readouterr()
    return code, out, err


def test_an_unreachable_database_fails_the_hook_without_printing_its_password(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"postgresql+asyncpg://agenthost:s3cret-pw@127.0.0.1:{free_port()}/agenthost"
    code, out, err = in_process(url, monkeypatch, capsys)
    assert code == 1
    assert "cannot create the A2A tables in " in err
    assert "agenthost:***@127.0.0.1" in err
    assert "s3cret-pw" not in err + out


@pytest.mark.parametrize(
    ("store", "code", "said"),
    [
        ("memory", 0, "no tables to make"),
        ("mysql://db/agents", 2, "AGENTHOST_A2A_TASK_STORE: unknown A2A task store"),
    ],
    ids=["memory", "unknown"],
)
def test_migrate_says_what_it_did_with_other_stores(
    store: str,
    code: int,
    said: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    done, out, err = in_process(store, monkeypatch, capsys)
    assert done == code
    assert said in (out if code == 0 else err)
