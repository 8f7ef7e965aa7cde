"""Registering agents with a running Agent Stack, as the ``agentstack-sdk``'s own
agents self-register (opt-in: ``AGENTHOST_A2A_AGENT_STACK_REGISTER``).

The SDK's server, when it starts, makes its agent a *provider* of the platform
at ``PLATFORM_URL`` through the platform's REST API, and its card declares
``services/platform-self-registration/v1`` (``self_registration_id``), so the
platform tells a self-registered provider from one it deploys. The same here,
for every agent served with Agent Stack's extensions:

- its location is its A2A URL with the id as fragment
  (``{public_url}/a2a/{agent}#{agent}``: the platform reads the card there);
- ``GET /api/v1/providers/by-location/{location}``: a provider already there is
  updated with the card (``PATCH /api/v1/providers/{id}``); 404, it is created
  (``POST /api/v1/providers`` with ``location`` and ``agent_card``);
- a platform that cannot be reached (or answers 5xx) is retried with backoff,
  in the background: the server serves whether or not registration works, and
  says in its log what happened.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, Final
from urllib.parse import quote

import httpx
from a2a.types import AgentExtension
from google.protobuf.struct_pb2 import Struct

from agenthost.adapters.a2a.agent_stack_interactions import BASE

logger = logging.getLogger(__name__)

SELF_REGISTRATION: Final = f"{BASE}/services/platform-self-registration/v1"
PROVIDERS: Final = "/api/v1/providers"


def self_registration_extension(agent: str) -> AgentExtension:
    """The card's declaration that ``agent`` registers itself (its id: its name)."""
    params = Struct()
    params.update({"self_registration_id": quote(agent)})
    return AgentExtension(uri=SELF_REGISTRATION, params=params)


def location(agent_url: str, agent: str) -> str:
    """Where the platform finds ``agent`` (its A2A URL, the id as fragment)."""
    return f"{agent_url.rstrip('/')}#{quote(agent)}"


class PlatformRegistrar:
    """Registers agents' cards (by location) with Agent Stack's API at ``platform_url``."""

    def __init__(
        self,
        platform_url: str,
        token: str | None = None,
        *,
        attempts: int = 10,
        longest_wait: float = 10.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.client = httpx.AsyncClient(
            base_url=platform_url.rstrip("/"), headers=headers, timeout=30, transport=transport
        )
        self.attempts = attempts
        self.longest_wait = longest_wait

    async def aclose(self) -> None:
        await self.client.aclose()

    async def register(self, where: str, card: Mapping[str, Any]) -> str:
        """The provider's id once the agent at ``where`` is registered with ``card``."""
        found = await self.client.get(f"{PROVIDERS}/by-location/{quote(where, safe='')}")
        if found.status_code == 404:
            body = {"location": where, "agent_card": card}
            created = (await self.client.post(PROVIDERS, json=body)).raise_for_status()
            return str(created.json()["id"])
        provider_id = str(found.raise_for_status().json()["id"])
        patch = {"agent_card": card}
        (await self.client.patch(f"{PROVIDERS}/{provider_id}", json=patch)).raise_for_status()
        return provider_id

    async def register_all(self, cards: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
        """Each location's card registered, retried while the platform is unreachable or
        failing (5xx); the providers' ids by location (a refused one is left out)."""
        registered: dict[str, str] = {}
        for where, card in cards.items():
            provider = await self._with_retries(where, card)
            if provider is not None:
                registered[where] = provider
        return registered

    async def _with_retries(self, where: str, card: Mapping[str, Any]) -> str | None:
        for attempt in range(1, self.attempts + 1):
            try:
                provider = await self.register(where, card)
            except httpx.HTTPStatusError as exc:
                if exc.response.status_code < 500 or attempt == self.attempts:
                    logger.warning(
                        "Agent Stack refused to register %s: %s %s",
                        where,
                        exc.response.status_code,
                        exc.response.text[:500],
                    )
                    return None
            except httpx.HTTPError as exc:
                if attempt == self.attempts:
                    logger.warning(
                        "Agent Stack at %s could not be reached to register %s: %s",
                        self.client.base_url,
                        where,
                        exc,
                    )
                    return None
            else:
                logger.info("registered %s with Agent Stack (provider %s)", where, provider)
                return provider
            await asyncio.sleep(min(self.longest_wait, 0.5 * 2 ** (attempt - 1)))
        return None


@asynccontextmanager
async def registering(
    registrar: PlatformRegistrar, cards: Mapping[str, Mapping[str, Any]]
) -> AsyncIterator[asyncio.Task[dict[str, str]]]:
    """Registration running in the background while the server serves; stopped at its end."""
    task = asyncio.create_task(registrar.register_all(cards), name="agent-stack-registration")
    try:
        yield task
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await registrar.aclose()
