"""Memory of stored Responses state: the old layout vs the new one.

10,000 conversations x 20 messages (10 turns of a user message and an
answer), kept in the in-process LRU the app uses, in two shapes:

- ``chain``: each turn is a stored response continuing the previous one
  (``previous_response_id``), as most Responses clients do;
- ``conversation``: each turn is appended to a conversation
  (``conversation``), with ``store: false``.

The **old** layout is what agenthost stored before (commit 53ec875): each
stored response held the whole transcript so far as ``Message`` objects
plus its response object as a dict; a conversation held ``Message``
objects. The **new** layout is what :mod:`adapters.openai.store` stores,
through the adapter's own functions: each response its own input items and
a parent link, response objects without their default fields, conversations
as items; all as compact JSON text.

Each (layout, shape) runs in a fresh subprocess; the figure is the growth of
its resident set (VmRSS) over the filling, after a garbage collection.

    .venv/bin/python bench/session_memory.py [--conversations N] [--turns T]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# Typical chat turns: a one-line question and a short paragraph of answer.
QUESTION = "Could you tell me what the weather will be like in Lyon tomorrow morning? "
ANSWER = (
    "Tomorrow morning in Lyon should be mild and mostly dry: around 12 °C at "
    "eight, light wind from the south, clouds building towards noon with a "
    "chance of a shower in the afternoon. Take a light jacket; an umbrella "
    "is only worth it if you are out after two. "
)


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def memory(size: int) -> Any:
    from agenthost.app.memory import LRUMemoryManager

    return LRUMemoryManager("bench", max_sessions=size, ttl=3600)


async def fill(layout: str, shape: str, conversations: int, turns: int) -> dict[str, Any]:
    # Everything imported and warmed before the baseline.
    from agenthost.adapters.openai.convert_responses import input_items, to_options, to_response
    from agenthost.adapters.openai.items import new_id, output_items
    from agenthost.adapters.openai.schemas import ResponseRequest
    from agenthost.adapters.openai.store import ConversationStore, ResponseStore
    from agenthost.agents import Message, RunResult, SessionKey, Usage

    responses = memory(conversations * turns + 1)
    conversation_memory = memory(conversations + 1)
    store, conversation_store = ResponseStore(responses), ConversationStore(conversation_memory)

    def turn_response(request: ResponseRequest, text: str) -> tuple[dict[str, Any], Any]:
        _, items = input_items(request)
        result = RunResult(
            text, [Message.user(QUESTION), Message.assistant(text)], Usage(40, 60, 1)
        )
        options = to_options(request, [])
        response = to_response(
            request,
            options,
            id=new_id("resp"),
            created_at=int(time.time()),
            model="assistant",
            output=output_items(result, new_id("msg")),
            result=result,
        )
        return response, items

    gc.collect()
    before = rss_bytes()
    started = time.perf_counter()
    for c in range(conversations):
        previous: str | None = None
        history: list[Message] = []
        conversation = f"conv_{c:032d}"
        if shape == "conversation" and layout == "new":
            resource = {
                "id": conversation,
                "object": "conversation",
                "created_at": 0,
                "metadata": {},
            }
            await conversation_store.create("anonymous", resource, [])
        for t in range(turns):
            question, answer = f"{QUESTION}({c}/{t})", f"{ANSWER}({c}/{t})"
            fields: dict[str, Any] = {"model": "assistant", "input": question}
            if shape == "chain":
                fields["previous_response_id"] = previous
            else:
                fields |= {"conversation": conversation, "store": False}
            request = ResponseRequest.model_validate(fields)
            response, items = turn_response(request, answer)
            new = [Message.user(question), Message.assistant(answer)]
            if layout == "old" and shape == "chain":
                history = [*history, *new]
                key = SessionKey("responses", response["id"], "anonymous")
                await responses.append(key, history, meta={"response": response, "agent": "a"})
            elif layout == "old":
                await conversation_memory.append(SessionKey("a", conversation, "anonymous"), new)
            elif shape == "chain":
                await store.save("anonymous", response, items)
            else:
                await conversation_store.append(
                    "anonymous", conversation, [*items, *response["output"]]
                )
            previous = response["id"]
    elapsed = time.perf_counter() - started
    gc.collect()
    grown = rss_bytes() - before
    messages = conversations * turns * 2
    return {
        "layout": layout,
        "shape": shape,
        "rss_mib": grown / 2**20,
        "bytes_per_message": grown / messages,
        "us_per_turn": elapsed / (conversations * turns) * 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=10, help="turns (2 messages each)")
    parser.add_argument("--one", nargs=2, metavar=("LAYOUT", "SHAPE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(asyncio.run(fill(*args.one, args.conversations, args.turns))))
        return
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for shape in ("chain", "conversation"):
        for layout in ("old", "new"):
            command = [sys.executable, __file__, "--one", layout, shape]
            command += ["--conversations", str(args.conversations), "--turns", str(args.turns)]
            output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
            rows[layout, shape] = json.loads(output)
    total = args.conversations * args.turns * 2
    print(f"{args.conversations:,} conversations x {args.turns * 2} messages ({total:,} messages)")
    print(f"{'shape':<13}{'layout':<8}{'RSS growth':>12}{'bytes/message':>15}{'µs/turn':>9}")
    for shape in ("chain", "conversation"):
        for layout in ("old", "new"):
            row = rows[layout, shape]
            print(
                f"{shape:<13}{layout:<8}{row['rss_mib']:>8.1f} MiB"
                f"{row['bytes_per_message']:>15,.0f}{row['us_per_turn']:>9.0f}"
            )
        ratio = rows["old", shape]["rss_mib"] / max(rows["new", shape]["rss_mib"], 1e-9)
        print(f"{shape:<13}{'old/new':<8}{ratio:>8.1f} x")


if __name__ == "__main__":
    main()
