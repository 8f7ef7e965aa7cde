"""Memory strategies: what the model sees, never what the session keeps."""

from collections.abc import Sequence

import pytest

from agenthost.agents import (
    AgentError,
    ChatAgent,
    InMemorySession,
    Message,
    ToolCallPart,
    ToolResultPart,
    UserError,
    tool,
)
from agenthost.agents.history import (
    HistoryContext,
    SlidingWindow,
    Summarize,
    TokenBudget,
    estimate_tokens,
    split_units,
)
from agenthost.agents.models import FunctionModel, ModelRequest, ScriptedModel
from agenthost.agents.models.testing import call
from agenthost.agents.sessions import ManagedSession, SessionKey
from agenthost.app.memory import LRUMemoryManager

pytestmark = pytest.mark.anyio

SYSTEM = Message.system("Be brief.")


def conversation(turns: int) -> list[Message]:
    messages: list[Message] = []
    for n in range(turns):
        messages += [Message.user(f"question {n}"), Message.assistant(f"answer {n}")]
    return messages


def tool_step(name: str = "lookup") -> list[Message]:
    part = ToolCallPart(id=f"id-{name}", name=name, arguments="{}")
    result = ToolResultPart(call_id=part.id, name=name, content="42")
    return [Message(role="assistant", parts=[part]), Message(role="tool", parts=[result])]


def context() -> HistoryContext:
    return HistoryContext(ScriptedModel([]))


def texts(messages: Sequence[Message]) -> list[str]:
    return [m.text for m in messages]


class Recorder:
    """A model answering "ok" that records what it was sent."""

    def __init__(self) -> None:
        self.seen: list[list[Message]] = []
        self.model = FunctionModel(self.reply)

    def reply(self, request: ModelRequest) -> str:
        self.seen.append(list(request.messages))
        return "ok"


class Summariser:
    """A summarising model that counts its calls, and agents that use it on a small budget."""

    def __init__(self, text: str = "s") -> None:
        self.calls: list[ModelRequest] = []
        self.text = text
        self.model = FunctionModel(self.summarise)

    def summarise(self, request: ModelRequest) -> str:
        self.calls.append(request)
        return self.text

    def agent(self, model: FunctionModel | None = None) -> ChatAgent:
        """A new agent (a new strategy: an empty cache) summarising with this model."""
        memory = Summarize(60, threshold=1, keep_last=1, model=self.model)
        return ChatAgent("a", model or FunctionModel(lambda request: "ok"), memory=memory)


async def test_a_sliding_window_shows_the_instructions_and_the_last_messages() -> None:
    recorder = Recorder()
    agent = ChatAgent("a", recorder.model, instructions="Be brief.", memory=SlidingWindow(3))
    session = InMemorySession()
    for n in range(5):
        await agent.run(f"turn {n}", session=session)
    assert texts(recorder.seen[-1]) == ["Be brief.", "turn 3", "ok", "turn 4"]
    assert len(session.messages) == 10  # the session keeps every message


async def test_a_tool_call_and_its_result_are_dropped_or_kept_together() -> None:
    messages = [SYSTEM, Message.user("q"), *tool_step(), Message.assistant("a"), Message.user("q2")]
    # Three messages would start at the tool result: the pair goes as a whole.
    window = await SlidingWindow(3).select(messages, context())
    assert texts(window) == ["Be brief.", "a", "q2"]
    kept = await SlidingWindow(4).select(messages, context())
    assert [m.role for m in kept] == ["system", "assistant", "tool", "assistant", "user"]


async def test_a_token_budget_never_splits_a_tool_pair() -> None:
    messages = [SYSTEM, *conversation(3), *tool_step(), Message.user("and now?")]
    budget = estimate_tokens([SYSTEM, *messages[-3:]])
    kept = await TokenBudget(budget, threshold=1).select(messages, context())
    assert [m.role for m in kept] == ["system", "assistant", "tool", "user"]
    trimmed = await TokenBudget(budget - 1, threshold=1).select(messages, context())
    assert [m.role for m in trimmed] == ["system", "user"]


async def test_identical_messages_are_different_messages() -> None:
    first, second = Message.user("yes"), Message.user("yes")
    messages = [SYSTEM, first, Message.assistant("sure?"), second]
    (_, kept) = await SlidingWindow(1).select(messages, context())
    assert kept is second and kept is not first
    units = split_units(messages)
    assert units.units[0][0] is first and units.units[2][0] is second


async def test_a_budget_the_last_message_cannot_fit_is_a_clear_error() -> None:
    messages = [SYSTEM, Message.user("word " * 200)]
    with pytest.raises(UserError, match="memory budget of 12 tokens"):
        await TokenBudget(16).select(messages, context())
    with pytest.raises(AgentError, match="cannot hold the last 2"):
        await SlidingWindow(1).select([SYSTEM, *tool_step()], context())


async def test_an_agent_on_a_token_budget_keeps_its_requests_under_it() -> None:
    recorder = Recorder()
    memory = TokenBudget(120, threshold=0.5)
    agent = ChatAgent("a", recorder.model, instructions="Be brief.", memory=memory)
    session = InMemorySession()
    for n in range(30):
        await agent.run(f"this is the message number {n} of a long chat", session=session)
    assert all(estimate_tokens(seen) <= 60 for seen in recorder.seen)
    assert texts(recorder.seen[-1])[0] == "Be brief."
    assert texts(recorder.seen[-1])[-1] == "this is the message number 29 of a long chat"
    assert len(recorder.seen[-1]) < len(session.messages)


class CountingModel(Recorder):
    """A model with a tokenizer: every message costs exactly ``per_message`` tokens."""

    def __init__(self, per_message: int) -> None:
        super().__init__()
        self.per_message = per_message
        self.counted = 0

    async def count_tokens(self, messages: Sequence[Message]) -> int:
        self.counted += 1
        return self.per_message * len(messages)


async def test_the_models_tokenizer_makes_the_count_exact_near_the_budget() -> None:
    model = CountingModel(per_message=50)
    messages = [SYSTEM, *conversation(5)]
    # The estimate (72 tokens) would keep everything; the exact count (50 a message) keeps 5.
    kept = await TokenBudget(280, threshold=1).select(messages, HistoryContext(model))  # type: ignore[arg-type]
    assert len(kept) == 5 and kept[0] is SYSTEM and kept[-1] is messages[-1]
    assert model.counted > 0
    few = [SYSTEM, Message.user("hi")]
    model.counted = 0
    assert await TokenBudget(10_000).select(few, HistoryContext(model)) == few  # type: ignore[arg-type]
    assert model.counted == 0  # far below the budget: no tokenizer call


async def test_summarize_condenses_old_turns_and_keeps_the_summary_in_the_session() -> None:
    recorder = Recorder()
    calls: list[ModelRequest] = []

    def summarise(request: ModelRequest) -> str:
        calls.append(request)
        return f"they talked about {request.messages[1].text.count('question')} questions"

    summariser = FunctionModel(summarise)
    memory = Summarize(90, threshold=1, keep_last=2, model=summariser)
    agent = ChatAgent("a", recorder.model, instructions="Be brief.", memory=memory)
    session = InMemorySession(conversation(6))
    await agent.run("question 6", session=session)
    assert len(calls) == 1
    seen = recorder.seen[-1]
    assert seen[0].role == "system" and seen[0].text.startswith("Be brief.")
    assert "Summary of the earlier conversation:" in seen[0].text
    assert "they talked about" in seen[0].text
    assert texts(seen[1:]) == ["answer 5", "question 6"]
    note = session.notes["summary"]
    assert note["covers"] == 11 and "they talked about" in note["text"]
    assert len(session.messages) == 14  # the stored conversation is whole

    # The next turn starts from the stored summary instead of summarising again.
    await agent.run("question 7", session=session)
    assert len(calls) == 1
    assert "they talked about" in recorder.seen[-1][0].text
    assert texts(recorder.seen[-1][1:]) == ["answer 5", "question 6", "ok", "question 7"]


async def test_summarize_uses_the_agents_own_model_by_default() -> None:
    def reply(request: ModelRequest) -> str:
        if request.messages[0].text.startswith("Summarise"):
            return "earlier: small talk"
        return "ok"

    memory = Summarize(60, threshold=1, keep_last=1)
    agent = ChatAgent("a", FunctionModel(reply), memory=memory)
    session = InMemorySession(conversation(6))
    result = await agent.run("next", session=session)
    assert result.output == "ok"
    assert session.notes["summary"]["text"] == "earlier: small talk"
    assert result.usage.requests == 2  # the summary counts in the run's usage


async def test_a_stale_summary_is_not_reused() -> None:
    summariser = Summariser()
    agent = summariser.agent()
    session = InMemorySession(conversation(6))
    await agent.run("next", session=session)
    # Another history under the same notes (a conversation changed under it).
    other = InMemorySession([Message.user("something else"), *conversation(6)])
    other.notes = dict(session.notes)
    await agent.run("next", session=other)
    assert len(summariser.calls) == 2


async def test_tools_still_work_under_a_window() -> None:
    @tool
    def lookup() -> str:
        """Look it up."""
        return "42"

    model = ScriptedModel([call("lookup"), "it is 42"])
    agent = ChatAgent("a", model, tools=(lookup,), memory=SlidingWindow(3))
    result = await agent.run("what is it?", session=InMemorySession(conversation(4)))
    assert result.output == "it is 42"
    assert [m.role for m in model.requests[1].messages] == ["user", "assistant", "tool"]


async def test_a_summary_is_found_from_the_session_or_from_the_cache() -> None:
    summariser = Summariser()
    session = InMemorySession(conversation(6))
    await summariser.agent().run("next", session=session)
    # Another process (a fresh strategy, empty cache) continues from the session's note.
    await summariser.agent().run("and next", session=session)
    assert len(summariser.calls) == 1
    # Without a session (Chat Completions), the same transcript twice: summarised once.
    stateless = summariser.agent()
    for _ in range(2):
        await stateless.run([*conversation(6), Message.user("next")])
    assert len(summariser.calls) == 2


async def test_a_managed_session_keeps_the_summary_beside_its_messages() -> None:
    manager = LRUMemoryManager("test", max_sessions=10, ttl=60)
    key = SessionKey("a", "s1", "alice")
    await manager.append(key, conversation(6))
    summariser = Summariser()
    await summariser.agent().run("next", session=ManagedSession(manager, key))
    stored = await manager.get(key)
    assert stored is not None and len(stored.messages) == 14
    assert stored.meta["notes"]["summary"]["text"] == "s"
    await summariser.agent().run("and next", session=ManagedSession(manager, key))
    assert len(summariser.calls) == 1  # found in the stored notes by a fresh agent
    # Another principal's session of the same name has no notes of alice's.
    other = ManagedSession(manager, SessionKey("a", "s1", "bob"))
    assert await other.load_notes() == {}
