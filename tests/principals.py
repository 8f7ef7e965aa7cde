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

KEYS = {"alice": "key-of-alice-0123456789", "bob": "key-of-bob-0123456789"}
SECRET = "my card number is 4111-1111"


def keyed_settings(**overrides: object) -> Settings:
    """Settings with two named keys, ``alice`` and ``bob``."""
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
    """Alice's state is out of Bob's reach in every way, and still Alice's afterwards."""
    ref = await probe.create("alice", SECRET)
    owned = await probe.read("alice", ref)
    assert owned is not None and SECRET in owned, "the owner must read what she stored"
    assert await probe.read("bob", ref) is None, "another key read the owner's state"
    shown = await probe.resume("bob", ref, "what did I tell you?")
    assert SECRET not in shown, "another key continued the owner's conversation"
    assert await probe.delete("bob", ref) is False, "another key deleted the owner's state"
    assert ref not in await probe.list("bob"), "another key listed the owner's state"
    after = await probe.read("alice", ref)
    assert after is not None and SECRET in after, "the owner lost her state"
    assert SECRET in await probe.resume("alice", ref, "and now?")
