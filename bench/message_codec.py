"""Bytes and CPU of a stored message: the session-16 format against JSON.

``agents/message_codec.py`` writes a text message (one text part, no name or
metadata, at most a UUID id) as a tag, a head byte, the id's 16 bytes and
the UTF-8 text; before session 16 every message was compact pydantic JSON
(``encode_json``), which it still writes for every other shape, and reads.
For three 10-turn sessions (an A2A one: a question with a UUID message id
and a 255-character answer; an MCP/ACP one: the same without ids; a
tool-using one: a tool call and its result per turn, with a shared
conversation's metadata, so all JSON), this prints the encoded bytes per
message and the CPU per message of encoding each message and of decoding
the whole session (what a session load does), both formats alternated in
each round, min over the rounds (``time.process_time_ns``).

    .venv/bin/python bench/message_codec.py [--rounds 30] [--repeat 100]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from pydantic import TypeAdapter

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agenthost.agents.message_codec import decode_messages, encode_json, encode_message
from agenthost.agents.messages import (
    Message,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from bench.protocol_sessions import ANSWER, QUESTION  # the sessions that bench measures

_MESSAGES = TypeAdapter(list[Message])


def _sessions() -> dict[str, list[Message]]:
    a2a, plain, tools = [], [], []
    for turn in range(10):
        a2a.append(Message(role="user", parts=[TextPart(text=QUESTION)], id=uuid.uuid4().hex))
        a2a.append(Message.assistant(ANSWER))
        plain += [Message.user(QUESTION), Message.assistant(ANSWER)]
        shared = {"protocol": "mcp"}
        call = ToolCallPart(id=f"call_{turn}", name="weather", arguments='{"city": "Lyon"}')
        tools += [
            Message(role="user", parts=[TextPart(text=QUESTION)], metadata=shared),
            Message(role="assistant", parts=[call], metadata=shared),
            Message(
                role="tool",
                parts=[ToolResultPart(call_id=call.id, name="weather", content='{"c": 12}')],
            ),
            Message(role="assistant", parts=[TextPart(text=ANSWER)], metadata=shared),
        ]
    return {"a2a": a2a, "mcp/acp": plain, "tools": tools}


def _decode_json(raws: list[bytes]) -> list[Message]:
    """How every session was read before: one validation of the joined JSON array."""
    return _MESSAGES.validate_json(b"[" + b",".join(raws) + b"]")


def _cpu_ns(work: Callable[[], object], repeat: int) -> float:
    started = time.process_time_ns()
    for _ in range(repeat):
        work()
    return (time.process_time_ns() - started) / repeat


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=100, help="calls timed together")
    args = parser.parse_args()
    print(f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print(
        f"{'session':8} {'format':8} {'B/message':>9} {'encode µs':>9} {'decode µs':>9} "
        f"{'sum µs':>7}  (per message; decode = the whole session, one call)"
    )
    for name, messages in _sessions().items():
        count = len(messages)
        formats = {
            "json": (encode_json, _decode_json),
            "compact": (encode_message, decode_messages),
        }
        sizes: dict[str, float] = {}
        best = {(fmt, what): float("inf") for fmt in formats for what in ("enc", "dec")}
        for fmt, (encode, decode) in formats.items():
            raws = [encode(m) for m in messages]
            if decode(raws) != messages:
                raise SystemExit(f"{name}/{fmt}: decoding does not give the messages back")
            sizes[fmt] = sum(map(len, raws)) / count
        for _ in range(args.rounds):  # the formats alternated in every round
            for fmt, (encode, decode) in formats.items():
                raws = [encode(m) for m in messages]
                enc = _cpu_ns(lambda e=encode, ms=messages: [e(m) for m in ms], args.repeat)
                dec = _cpu_ns(lambda d=decode, r=raws: d(r), args.repeat)
                best[fmt, "enc"] = min(best[fmt, "enc"], enc / count)
                best[fmt, "dec"] = min(best[fmt, "dec"], dec / count)
        for fmt in formats:
            enc, dec = best[fmt, "enc"] / 1e3, best[fmt, "dec"] / 1e3
            print(f"{name:8} {fmt:8} {sizes[fmt]:>9.1f} {enc:>9.2f} {dec:>9.2f} {enc + dec:>7.2f}")
        print(
            f"{name:8} {'ratio':8} {sizes['compact'] / sizes['json']:>9.2f} "
            f"{best['compact', 'enc'] / best['json', 'enc']:>9.2f} "
            f"{best['compact', 'dec'] / best['json', 'dec']:>9.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
