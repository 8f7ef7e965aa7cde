"""Quotas on two real agenthost replicas over one real Redis: one rate, one budget.

A burst alternating between the replicas is held to one principal's rate
(not twice it); the ``Retry-After`` it gets, honoured, lets the next request
in. A token budget spent through one replica stops that principal on both,
and still after a replica restarts; another principal runs on. Runs in
progress on either replica count against one runs-at-once quota.
"""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import openai
import pytest
from redis.asyncio import Redis

from agenthost.app.quota_store import Ask, RedisQuotaStore
from tests.app.test_quotas import refusals
from tests.app.test_server import ECHO_CONFIG
from tests.scale.test_replicas import Replica, replicas
from tests.stores import RedisServer, redis  # noqa: F401 (fixture)

pytestmark = pytest.mark.slow

KEYS = {
    "alice": "alice-key-0123456789",
    "bob": "bob-key-0123456789ab",
    "carol": "carol-key-0123456789",
    "dave": "dave-key-01234567890",
}
QUOTAS = (
    "default: {requests_per_minute: 60}\n"
    "principals:\n  alice: {tokens_per_day: 10}\n  dave: {concurrent_runs: 2}\n"
)
CONFIG = ECHO_CONFIG + "  - {name: recall, import: 'tests.scale.replica_agents:recall'}\n"


def auth(name: str) -> dict[str, str]:
    return {"authorization": f"Bearer {KEYS[name]}"}


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory, redis: RedisServer) -> Iterator[list[Replica]]:  # noqa: F811
    folder = tmp_path_factory.mktemp("quotas")
    quotas = folder / "quotas.yaml"
    quotas.write_text(QUOTAS)
    with replicas(
        folder,
        2,
        config=CONFIG,
        AGENTHOST_ADAPTERS="openai",
        AGENTHOST_ACCESS_LOG="false",
        AGENTHOST_SESSION_STORE=redis.url,
        AGENTHOST_API_KEYS=",".join(f"{name}:{key}" for name, key in KEYS.items()),
        AGENTHOST_QUOTAS_FILE=str(quotas),
    ) as started:
        yield started


def test_a_burst_across_two_replicas_is_held_to_one_rate(pair: list[Replica]) -> None:
    urls = itertools.cycle(replica.url for replica in pair)
    passed, start = 0, time.monotonic()
    with httpx.Client(timeout=10) as client:
        for _ in range(200):
            answer = client.get(f"{next(urls)}/v1/models", headers=auth("carol"))
            if answer.status_code != 200:
                break
            passed += 1
        elapsed = time.monotonic() - start
        assert answer.status_code == 429, answer.text
        # 60 at once, then one a second: each replica alone would have let 60 through.
        assert 60 <= passed <= 60 + elapsed + 1
        assert answer.json()["error"]["code"] == "rate_limit_exceeded"
        assert answer.headers["retry-after"] == "1"
        other = pair[(passed + 1) % 2].url  # not the replica that refused
        for _ in range(3):  # refused there too (unless the next second came: one passes)
            answer = client.get(f"{other}/v1/models", headers=auth("carol"))
            if answer.status_code == 429:
                break
        assert answer.status_code == 429
        time.sleep(int(answer.headers["retry-after"]))
        assert client.get(f"{other}/v1/models", headers=auth("carol")).status_code == 200
        for replica in pair:  # each refused one at least, and counted it
            metrics = client.get(f"{replica.url}/metrics", headers=auth("bob")).text
            assert refusals(metrics, "requests_per_minute") >= 1


def chat(replica: Replica, name: str) -> openai.types.chat.ChatCompletion:
    with openai.OpenAI(base_url=f"{replica.url}/v1", api_key=KEYS[name], max_retries=0) as sdk:
        return sdk.chat.completions.create(
            model="echo", messages=[{"role": "user", "content": "a b c d e f"}]
        )


def refused(replica: Replica, name: str) -> bool:
    """Whether ``name``'s next run on ``replica`` is refused for its tokens (within 5 s)."""
    deadline = time.monotonic() + 5
    while True:
        try:
            chat(replica, name)
        except openai.RateLimitError as exc:
            final = exc.response.headers["x-should-retry"] == "false"
            return final and "tokens of the day" in exc.message
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def test_a_token_budget_stops_one_principal_on_every_replica_and_after_a_restart(
    pair: list[Replica],
) -> None:
    first = chat(pair[0], "alice")  # 12 tokens: over alice's 10
    assert first.usage is not None and first.usage.total_tokens == 12
    assert refused(pair[1], "alice")
    assert chat(pair[1], "bob").choices[0].message.content == "a b c d e f"
    pair[0].terminate()
    pair[0].start()
    assert refused(pair[0], "alice")  # the count is in Redis, not in the replica
    assert chat(pair[0], "bob").usage is not None


def nap(replica: Replica, seconds: float) -> httpx.Response:
    body = {"model": "recall", "messages": [{"role": "user", "content": f"nap {seconds}"}]}
    return httpx.post(
        f"{replica.url}/v1/chat/completions", json=body, headers=auth("dave"), timeout=30
    )


def test_runs_at_once_are_counted_across_replicas(pair: list[Replica]) -> None:
    with ThreadPoolExecutor(2) as pool:
        naps = [pool.submit(nap, replica, 2) for replica in pair]  # one on each replica
        time.sleep(1)  # both admitted and napping
        third = nap(pair[0], 0)
        assert third.status_code == 429, third.text
        assert "2 runs at once" in third.json()["error"]["message"]
        assert [n.result().status_code for n in naps] == [200, 200]
    assert nap(pair[1], 0).status_code == 200  # both slots were given back


@pytest.mark.anyio
async def test_run_slots_in_redis_are_shared_and_given_back(redis: RedisServer) -> None:  # noqa: F811
    stores = [RedisQuotaStore(Redis.from_url(redis.url), timeout=2) for _ in range(2)]
    principal = f"p-{uuid.uuid4().hex}"
    try:

        def slot(run: str) -> Ask:
            return Ask(runs=2, run=run)

        assert await stores[0].admit(principal, "day", slot("one")) is None
        assert await stores[1].admit(principal, "day", slot("two")) is None
        # The other replica's slots count: refused, and nothing counted.
        assert await stores[0].admit(principal, "day", slot("three")) == ("concurrent_runs", 0)
        await stores[1].give_back_run(principal, "two")
        assert await stores[0].admit(principal, "day", slot("three")) is None
        # Tokens and the rate in the same operation: a refusal counts nothing.
        await stores[0].add_tokens(principal, "day", 5)
        spent = Ask(rate=60, tokens=5)
        assert await stores[1].admit(principal, "day", spent) == ("tokens_per_day", 0)
        assert await stores[1].admit(principal, "other day", Ask(rate=1)) is None
        refused = await stores[0].admit(principal, "other day", Ask(rate=1))
        assert refused is not None and refused[0] == "requests_per_minute"
        assert 59 < refused[1] <= 60
    finally:
        for store in stores:
            await store.aclose()


@pytest.mark.anyio
async def test_a_tenants_counters_in_redis_are_shared_and_checked_with_the_principals(
    redis: RedisServer,  # noqa: F811
) -> None:
    stores = [RedisQuotaStore(Redis.from_url(redis.url), timeout=2) for _ in range(2)]
    tenant = f"tenant:t-{uuid.uuid4().hex}"
    alice, bob, carol = (f"{tenant[7:]}/{name}" for name in ("alice", "bob", "carol"))
    try:
        # The tenant's 2 a minute, across principals and replicas; theirs are 100.
        mine, theirs = Ask(rate=100), (tenant, Ask(rate=2))
        assert await stores[0].admit(alice, "day", mine, theirs) is None
        assert await stores[1].admit(bob, "day", mine, theirs) is None
        refused = await stores[0].admit(carol, "day", mine, theirs)
        assert refused is not None and refused[0] == "tenant:requests_per_minute"
        assert 0 < refused[1] <= 30
        # A refusal counts nothing: carol's own rate (1 a minute) was not touched by it...
        assert await stores[1].admit(carol, "day", Ask(rate=1)) is None
        # ... and the principal's own refusal is named as before, the tenant's not counted.
        refused = await stores[1].admit(carol, "day", Ask(rate=1), (tenant, Ask(rate=100)))
        assert refused is not None and refused[0] == "requests_per_minute"
        # Run slots on both: the tenant's 1 slot is taken by alice, so bob's run is refused.
        runs = (tenant, Ask(runs=1, run="r1"))
        assert await stores[0].admit(alice, "day", Ask(runs=5, run="r1"), runs) is None
        refused = await stores[1].admit(
            bob, "day", Ask(runs=5, run="r2"), (tenant, Ask(runs=1, run="r2"))
        )
        assert refused == ("tenant:concurrent_runs", 0)
        await stores[0].give_back_run(tenant, "r1")
        await stores[0].give_back_run(alice, "r1")
        assert await stores[1].admit(bob, "day", Ask(), (tenant, Ask(runs=1, run="r2"))) is None
    finally:
        for store in stores:
            await store.aclose()
