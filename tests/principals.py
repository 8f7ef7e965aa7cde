"""Two principals and the isolation check every protocol adapter's tests reuse.

An adapter's test implements :class:`IsolationProbe` for its own wire
protocol (how to store something, read it, continue it, delete it, list
it) and calls :func:`check_isolation`: what one API key stores, another
can never read, continue, delete or list.
"""

from __future__ import annotations

from typing import Protocol

from agenthost.agents import Message
from agenthost.agents.models import FunctionModel, ModelRequest
from agenthost.app.settings import Settings

KEYS = {
    "alice": "key-of-alice-0123456789",
    "bob": "key-of-bob-0123456789",
    # One principal name in two tenants: as far apart as alice and bob.
    "t1/alice": "key-of-t1-alice-0123456789",
    "t2/alice": "key-of-t2-alice-0123456789",
}
PAIRS = (("alice", "bob"), ("t1/alice", "t2/alice"))
"""(owner, another): two principals, and one name in two tenants."""
SECRET = "my card number is 4111-1111"


def keyed_settings(**overrides: object) -> Settings:
    """Settings with the named keys of :data:`KEYS`: ``alice``, ``bob``, and ``alice`` of
    tenants ``t1`` and ``t2``."""
    return Settings(api_keys=[f"{n}:{k}" for n, k in KEYS.items()], **overrides)  # type: ignore[arg-type]


def bearer(principal: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {KEYS[principal]}"}


def transcript_model() -> FunctionModel:
    """A model that answers with every text it was sent, so a test sees what leaked."""

    def answer(request: ModelRequest) -> str:
        return " | ".join(m.text for m in request.messages if m.role != "system")

    return FunctionModel(answer, name="transcript")


def seen(messages: list[Message]) -> str:
    return " | ".join(m.text for m in messages)


class IsolationProbe(Protocol):
    """One protocol's way to store, read, continue, delete and list state.

    ``ref`` is whatever names the stored thing in that protocol (a response
    id, a conversation name, a task or context id, a session id).
    """

    async def create(self, principal: str, text: str) -> str:
        """Store ``text`` as ``principal``; return its reference."""
        ...

    async def read(self, principal: str, ref: str) -> str | None:
        """What ``principal`` can read of ``ref`` (None when refused / not found)."""
        ...

    async def resume(self, principal: str, ref: str, text: str) -> str:
        """Continue ``ref`` as ``principal``; return what the model was shown."""
        ...

    async def delete(self, principal: str, ref: str) -> bool:
        """Delete ``ref`` as ``principal``; True when it was deleted."""
        ...

    async def list(self, principal: str) -> list[str]:
        """The references ``principal`` can list (empty if the protocol lists nothing)."""
        ...


async def check_isolation(probe: IsolationProbe) -> None:
    """Alice's state is out of Bob's reach in every way, and still Alice's afterwards; and
    so is ``t1/alice``'s out of ``t2/alice``'s (one principal name, two tenants)."""
    for owner, other in PAIRS:
        await check_pair(probe, owner, other)


async def check_pair(probe: IsolationProbe, owner: str, other: str) -> None:
    ref = await probe.create(owner, SECRET)
    owned = await probe.read(owner, ref)
    assert owned is not None and SECRET in owned, "the owner must read what she stored"
    assert await probe.read(other, ref) is None, f"{other} read {owner}'s state"
    shown = await probe.resume(other, ref, "what did I tell you?")
    assert SECRET not in shown, f"{other} continued {owner}'s conversation"
    assert await probe.delete(other, ref) is False, f"{other} deleted {owner}'s state"
    assert ref not in await probe.list(other), f"{other} listed {owner}'s state"
    after = await probe.read(owner, ref)
    assert after is not None and SECRET in after, "the owner lost her state"
    assert SECRET in await probe.resume(owner, ref, "and now?")
