"""A settled task whose question and answer are read back from its context's session.

A task the agent answered in one go (``SendMessage`` of one text message,
its answer one text part) repeats the session's turn: its history is the
client's message, its artifact the answer, and the executor appends both to
the session (key: agent, context, principal) as the task ends. Kept whole,
each task was a second copy of its turn (``bench/protocol_sessions.py``:
A2A 15 KiB a 10-turn session, 8 KiB the goal). So the in-memory task store
keeps such a task as its context id and 36 packed bytes (:func:`pack`: the
final status's timestamp, the artifact's id, a digest of the message id,
question and answer); :func:`unpack` finds the turn in the session again and
rebuilds the task, equal to the one saved.

:func:`pack` keeps a task this way only when that rebuild, made from the
turn's messages as they will be stored, equals the task (protobuf
equality): any other shape (a streamed answer in chunks, data or file parts,
a question asked, metadata, a status message) is kept whole. A task whose
turn is no longer in the session (the session expired, was evicted or
deleted) is gone, as if the task store had dropped it.

Why the task points into the session and not the other way round: the
session is the agent's (``agents/``, every protocol's memory manager, Redis
or not) and must read whole without A2A; the task store is this adapter's
own, so the reference lives here. A digest, not a position: sessions are
append-only but shared (another protocol's turns, concurrent tasks of one
context), so the turn is found by what it holds, from the end.
"""

from __future__ import annotations

import hashlib
import struct
import sys
import uuid
from collections.abc import Sequence

from a2a.types import Artifact, Part, Role, Task, TaskState, TaskStatus
from a2a.types import Message as A2AMessage
from google.protobuf.timestamp_pb2 import Timestamp

from agenthost.agents import Message, TextPart

ANSWER = "answer"
"""The name of the answer's artifact (:mod:`agenthost.adapters.a2a.executor`)."""

_LAYOUT = struct.Struct("<qi16s8s")  # status seconds, nanos, artifact uuid, digest


def pack(task: Task, turn: Sequence[Message]) -> bytes | None:
    """What ``task`` needs besides its context id and its turn, when ``turn`` (the messages
    its run appends to the session) rebuilds it exactly; else None (keep it whole)."""
    if task.status.state != TaskState.TASK_STATE_COMPLETED or len(task.artifacts) != 1:
        return None
    found = _turn(turn, 0)
    if found is None or len(task.history) != 1:
        return None
    message_id, question, answer = found
    artifact_id = task.artifacts[0].artifact_id
    try:
        artifact = uuid.UUID(artifact_id)
    except ValueError:
        return None
    if str(artifact) != artifact_id:
        return None
    stamp = task.status.timestamp
    packed = _LAYOUT.pack(
        stamp.seconds, stamp.nanos, artifact.bytes, _digest(message_id, question, answer)
    )
    if rebuild(packed, task.id, task.context_id, message_id, question, answer) != task:
        return None
    return packed


def context_of(task: Task) -> str:
    """The task's context id, one string for every task of the context."""
    return sys.intern(task.context_id)


def unpack(packed: bytes, task_id: str, context: str, session: Sequence[Message]) -> Task | None:
    """The task again from its context's ``session`` messages; None when its turn is gone."""
    digest = packed[-8:]
    for start in range(len(session) - 1, -1, -1):
        found = _turn(session, start)
        if found is not None and _digest(*found) == digest:
            return rebuild(packed, task_id, context, *found)
    return None


def rebuild(
    packed: bytes, task_id: str, context: str, message_id: str, question: str, answer: str
) -> Task:
    """The completed task of one answered turn."""
    seconds, nanos, artifact, _ = _LAYOUT.unpack(packed)
    return Task(
        id=task_id,
        context_id=context,
        status=TaskStatus(
            state=TaskState.TASK_STATE_COMPLETED,
            timestamp=Timestamp(seconds=seconds, nanos=nanos),
        ),
        artifacts=[
            Artifact(
                artifact_id=str(uuid.UUID(bytes=artifact)), name=ANSWER, parts=[Part(text=answer)]
            )
        ],
        history=[
            A2AMessage(
                message_id=message_id,
                context_id=context,
                task_id=task_id,
                role=Role.ROLE_USER,
                parts=[Part(text=question)],
            )
        ],
    )


def _turn(messages: Sequence[Message], start: int) -> tuple[str, str, str] | None:
    """(message id, question, answer) of the turn starting at ``start``: a user message of
    one text part with an id, then the last assistant message's text before the next user
    message; None when ``start`` starts no such turn."""
    first = messages[start]
    if first.role != "user" or first.id is None:
        return None
    if len(first.parts) != 1 or type(first.parts[0]) is not TextPart:
        return None
    answer = None
    for message in messages[start + 1 :]:
        if message.role == "user":
            break
        if message.role == "assistant":
            answer = message.text
    if answer is None:
        return None
    return first.id, first.parts[0].text, answer


def _digest(message_id: str, question: str, answer: str) -> bytes:
    text = "\0".join((message_id, question, answer)).encode()
    return hashlib.blake2b(text, digest_size=8).digest()
