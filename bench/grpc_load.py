"""Load generator for A2A over gRPC: ``SendMessage`` calls over one channel.

Sends ``--requests`` calls at ``--concurrency`` and checks each answer (a
completed task whose artifact is the text sent). It speaks ``loadgen.py``'s
line protocol (BENCH-START, BENCH-THREAD-DONE, BENCH-RESULT {json}), so
``protocols.py`` runs either the same way. Its own process, never a server's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

import grpc.aio
import uvloop
from a2a.types import Message, Part, Role, SendMessageRequest, TaskState, a2a_pb2_grpc

sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
from loadgen import Tally


async def _worker(
    stub: a2a_pb2_grpc.A2AServiceStub, request: SendMessageRequest, text: str, tally: Tally
) -> None:
    while tally.take():
        try:
            answer = await stub.SendMessage(request)
        except grpc.aio.AioRpcError:
            tally.errors += 1
            continue
        tally.received += 1
        task = answer.task
        done = task.status.state == TaskState.TASK_STATE_COMPLETED
        tally.bad += int(not (done and task.artifacts and task.artifacts[0].parts[0].text == text))


async def run(args: argparse.Namespace) -> Tally:
    message = Message(message_id="m-1", role=Role.ROLE_USER, parts=[Part(text=args.text)])
    request = SendMessageRequest(message=message, tenant=args.tenant)
    tally = Tally(budget=args.requests)
    async with grpc.aio.insecure_channel(f"{args.host}:{args.port}") as channel:
        stub = a2a_pb2_grpc.A2AServiceStub(channel)  # type: ignore[no-untyped-call]
        print("BENCH-START", flush=True)
        workers = [_worker(stub, request, args.text, tally) for _ in range(args.concurrency)]
        await asyncio.gather(*workers)
        print("BENCH-THREAD-DONE", flush=True)
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--requests", type=int, required=True)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--tenant", default="", help="the agent (agenthost serves many)")
    parser.add_argument("--text", required=True)
    args = parser.parse_args()
    tally = uvloop.run(run(args))
    print("BENCH-RESULT", json.dumps(tally.__dict__), flush=True)


if __name__ == "__main__":
    main()
