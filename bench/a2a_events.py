"""CPU per streamed A2A JSON-RPC event: the SDK's route's conversions against the front's.

One ``TaskArtifactUpdateEvent`` (a few words of text, as a streamed chunk
is) turned into the bytes of one SSE event, in this process:

- the SDK's JSON-RPC route: ``to_stream_response`` (a copy into a
  ``StreamResponse``), ``MessageToDict``, ``JSONRPC20Response(...).data``,
  ``json.dumps``, ``ServerSentEvent.encode``;
- agenthost's front (``adapters/a2a/rpc.py``): ``MessageToDict`` of the
  event, one dict, ``orjson.dumps``, the frame.

    .venv/bin/python bench/a2a_events.py [--events 20000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

from a2a.types import Artifact, Part, TaskArtifactUpdateEvent
from a2a.utils import proto_utils
from google.protobuf.json_format import MessageToDict
from jsonrpc.jsonrpc2 import JSONRPC20Response
from sse_starlette import ServerSentEvent

from agenthost.adapters.a2a.rpc import _jsonrpc_events

EVENT = TaskArtifactUpdateEvent(
    task_id="6f1c1d52-3f0e-4a53-9d0e-6a1f0b7c2d11",
    context_id="0b9e3c6a-1f53-4e1c-8d58-2a9f5e4b7c33",
    artifact=Artifact(artifact_id="a-1", name="answer", parts=[Part(text="the quarterly report ")]),
    append=True,
)


def sdk_route(event: TaskArtifactUpdateEvent) -> bytes:
    result = MessageToDict(proto_utils.to_stream_response(event), preserving_proto_field_name=False)
    data = JSONRPC20Response(result=result, _id=1).data
    return ServerSentEvent(data=json.dumps(data, ensure_ascii=False)).encode()


def measure(convert: Callable[[TaskArtifactUpdateEvent], bytes], events: int) -> float:
    started = time.process_time()
    for _ in range(events):
        convert(EVENT)
    return (time.process_time() - started) / events * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    front = _jsonrpc_events(1).event
    sdk, ours = [], []
    for _ in range(args.rounds):  # alternated; the minimum of each is the least disturbed
        sdk.append(measure(sdk_route, args.events))
        ours.append(measure(front, args.events))
    print(f"SDK route: {min(sdk):.1f} µs/event; front: {min(ours):.1f} µs/event")


if __name__ == "__main__":
    main()
