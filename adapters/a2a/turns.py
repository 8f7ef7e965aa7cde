"""A run's turn is kept in the agent's memory only once its task's end is saved.

The agent appends a turn to its session when its run finishes; the task's
end (``completed``, or ``input-required`` with the question) is written
after that, by the SDK's consumer, to the task store. With tasks in
PostgreSQL the database may be gone in between: the client then gets the
protocol's "unavailable" error, and a turn it never saw would be in the
conversation (the next message of the context would be answered as if it
had been). So the executor's session (:class:`HeldSession`) holds what the
run saves, and the task store (:func:`hold_turns`) writes it once it has
saved the task in one of those states; a task saved in any other idle state
(failed, cancelled) or whose save fails drops it (not a save that lost a race
with another writer: the SDK saves that event again). The turn is written
inside the store's save, before the subscribers (the waiting client) hear
the task's end; if the memory fails then, the save fails and the task ends
``failed``, so memory and tasks agree both ways.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from a2a.server.cluster.task_store import ConcurrentTaskModificationError
from a2a.server.context import ServerCallContext
from a2a.types import Task, TaskState

from agenthost.adapters.a2a.tasks import IDLE_STATES, BoundedTaskStore
from agenthost.agents import MemoryManager, Message, SessionKey
from agenthost.agents.sessions import ManagedSession

KEPT_STATES = frozenset({TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_INPUT_REQUIRED})
"""The task states a run that saved its turn ends in."""

Write = Callable[[], Awaitable[None]]

HOLD_SECONDS = 3600.0
"""How long a held turn waits for its task's end: a run whose task store failed
before the run finished (its end is never saved) is forgotten after that."""


class HeldTurns:
    """The session writes of runs whose task's end is not saved yet, by task id."""

    def __init__(self) -> None:
        self._held: dict[str, tuple[float, list[Write], list[Message]]] = {}

    def hold(self, task_id: str, write: Write, messages: Sequence[Message] = ()) -> None:
        """Hold ``write`` (appending ``messages`` to the session, if any) until the task's end."""
        now = time.monotonic()
        while self._held:
            oldest = next(iter(self._held))
            if now - self._held[oldest][0] < HOLD_SECONDS:
                break
            del self._held[oldest]
        _, writes, held = self._held.setdefault(task_id, (now, [], []))
        writes.append(write)
        held.extend(messages)

    def messages(self, task_id: str) -> Sequence[Message]:
        """The messages the held writes of ``task_id`` will append to its session, in order."""
        held = self._held.get(task_id)
        return held[2] if held is not None else ()

    def __len__(self) -> int:
        return len(self._held)

    async def saved(self, task: Task) -> None:
        """``task`` is saved: write its run's turn if it ended well, drop it if not."""
        if task.status.state not in IDLE_STATES:
            return
        _, writes, _ = self._held.pop(task.id, (0.0, [], []))
        if task.status.state in KEPT_STATES:
            for write in writes:
                await write()

    def failed(self, task: Task) -> None:
        """Saving ``task`` failed: its run's turn is not kept."""
        self._held.pop(task.id, None)


class HeldSession(ManagedSession):
    """A session whose writes wait for the task's end to be saved (:class:`HeldTurns`)."""

    __slots__ = ("task_id", "turns")

    def __init__(
        self, manager: MemoryManager, key: SessionKey, turns: HeldTurns, task_id: str
    ) -> None:
        super().__init__(manager, key)
        self.turns, self.task_id = turns, task_id

    async def append(self, messages: Sequence[Message]) -> None:
        kept = list(messages)
        write = functools.partial(ManagedSession.append, self, kept)
        self.turns.hold(self.task_id, write, kept)

    async def save_notes(self, notes: dict[str, Any]) -> None:
        kept = dict(notes)
        self.turns.hold(self.task_id, functools.partial(ManagedSession.save_notes, self, kept))


def hold_turns(store: Any, turns: HeldTurns) -> None:
    """Make ``store`` (any of the SDK's task stores, or ours) write ``turns`` as it saves.

    Wraps the instance's ``save``: the stores are three classes (ours and the
    SDK's two database stores, whose ``save`` signatures differ) and the SDK's
    handler takes the store as it is.
    """
    save = store.save

    @functools.wraps(save)
    async def saving(task: Task, *args: Any, **kwargs: Any) -> Any:
        kept = task.status.state in KEPT_STATES
        turn = list(turns.messages(task.id)) if kept else []
        try:
            result = await save(task, *args, **kwargs)
        except ConcurrentTaskModificationError:
            raise  # the SDK reloads the task and saves the same event again
        except BaseException:
            turns.failed(task)
            raise
        await turns.saved(task)
        context = kwargs.get("context", args[0] if args else None)
        if turn and isinstance(store, BoundedTaskStore) and isinstance(context, ServerCallContext):
            # Its turn is in the session now: the task need not keep a copy of it.
            store.compact(task, context, turn)
        return result

    store.save = saving
