import pytest

from agenthost.agents import (
    FilePart,
    FunctionAgent,
    InMemorySession,
    Message,
    RunFinished,
    TextDelta,
    TextPart,
)
from agenthost.agents.models.openai_format import to_chat_messages

pytestmark = pytest.mark.anyio


async def test_sync_and_async_functions_become_agents() -> None:
    def shout(messages: list[Message]) -> str:
        """Shouts."""
        return messages[-1].text.upper()

    async def count(messages: list[Message]) -> str:
        return str(len(messages))

    session = InMemorySession()
    loud = FunctionAgent("loud", shout)
    assert loud.description == "Shouts."
    assert (await loud.run("hey", session=session)).output == "HEY"
    updates = [u async for u in FunctionAgent("count", count).run_stream("x", session=session)]
    assert updates[0] == TextDelta("3")  # the history of the shared session, then the input
    assert isinstance(updates[-1], RunFinished)


def test_images_go_to_openai_as_content_parts() -> None:
    message = Message(
        role="user",
        parts=[
            TextPart(text="what is this?"),
            FilePart(url="https://example.com/cat.png", mime_type="image/png"),
            FilePart(data="aGk=", mime_type="image/jpeg"),
        ],
    )
    assert to_chat_messages([message]) == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "what is this?"},
                {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
                {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,aGk="}},
            ],
        }
    ]
