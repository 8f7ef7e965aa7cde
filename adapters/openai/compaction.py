"""Compaction items: a conversation summarised into one item (pure mapping, no HTTP).

``POST /responses/compact`` (:mod:`.compact`) answers with the
conversation's user messages and one ``compaction`` item; a later request
carries them as input instead of the whole history. OpenAI encrypts the
item's ``encrypted_content``; agenthost's is **not encrypted**: it is
:data:`PREFIX` and the summary's UTF-8 text in URL-safe base64. Nothing
needs sealing: the summary says only what the client's own conversation
said, and it reaches the model as a user message (after
:data:`~agenthost.agents.history.SUMMARY_HEADING`), so a hand-made item
can say no more than a user message can. An item whose content does not
start with the prefix (another server's, OpenAI's) is a 400.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from agenthost.adapters.openai.errors import OpenAIError
from agenthost.agents import Message
from agenthost.agents.history import SUMMARY_HEADING

COMPACTION = "compaction"
PREFIX = "agenthost-summary-v1:"


def encode(summary: str) -> str:
    """The ``encrypted_content`` of an item carrying ``summary``."""
    return PREFIX + base64.urlsafe_b64encode(summary.encode()).decode("ascii")


def decode(content: str, *, param: str) -> str:
    """The summary ``content`` carries; a 400 naming ``param`` if agenthost did not make it."""
    if content.startswith(PREFIX):
        try:
            return base64.urlsafe_b64decode(content.removeprefix(PREFIX)).decode()
        except (binascii.Error, UnicodeDecodeError, ValueError):
            pass
    raise OpenAIError(
        400,
        "this compaction item was not made by this server's /v1/responses/compact: its "
        "encrypted_content cannot be read here",
        param=param,
        code="invalid_encrypted_content",
    )


def compaction_item(id: str, summary: str) -> dict[str, Any]:
    """The item ``/responses/compact`` hands out (the SDK's ``ResponseCompactionItem``)."""
    return {"type": COMPACTION, "id": id, "encrypted_content": encode(summary)}


def stored_compaction(id: str, content: str | None, *, param: str) -> dict[str, Any]:
    """A client's compaction input item as it is stored, its content checked."""
    if not content:
        raise OpenAIError(
            400,
            "a compaction item needs the encrypted_content /v1/responses/compact gave it",
            param=f"{param}.encrypted_content",
            code="invalid_value",
        )
    decode(content, param=f"{param}.encrypted_content")
    return {"type": COMPACTION, "id": id, "encrypted_content": content}


def to_message(item: dict[str, Any]) -> Message:
    """What the model sees of a stored compaction item: its summary, as a user message."""
    summary = decode(item["encrypted_content"], param="input")
    return Message.user(f"{SUMMARY_HEADING}\n{summary}")
