"""The pure mappings of the Zed Agent Client Protocol command."""

from acp.schema import (
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from agenthost.adapters.acp_zed.convert import stop_reason, to_parts, to_usage, tool_finished
from agenthost.agents import FilePart, RunResult, TextPart, ToolResultPart, Usage


def test_prompt_blocks_become_text_and_files() -> None:
    parts = to_parts(
        [
            TextContentBlock(type="text", text="look at this"),
            ImageContentBlock(type="image", data="aGk=", mime_type="image/png"),
            ResourceContentBlock(type="resource_link", uri="file:///a.py", name="a.py"),
            EmbeddedResourceContentBlock(
                type="resource",
                resource=TextResourceContents(uri="file:///b.py", text="print(1)"),
            ),
            EmbeddedResourceContentBlock(
                type="resource",
                resource=BlobResourceContents(uri="file:///c.bin", blob="AA==", mime_type="x/y"),
            ),
        ]
    )
    text, image, link, embedded, blob = parts
    assert text == TextPart(text="look at this")
    assert image == FilePart(data="aGk=", mime_type="image/png")
    assert link == FilePart(url="file:///a.py", name="a.py")
    assert embedded == TextPart(text='<file uri="file:///b.py">\nprint(1)\n</file>')
    assert blob == FilePart(data="AA==", mime_type="x/y", name="file:///c.bin")


def test_finish_reasons_map_to_stop_reasons_and_usage_is_reported() -> None:
    def result(reason: str) -> RunResult:
        return RunResult("", [], finish_reason=reason)  # type: ignore[arg-type]

    assert stop_reason(result("stop")) == "end_turn"
    assert stop_reason(result("length")) == "max_tokens"
    assert stop_reason(result("content_filter")) == "refusal"
    assert to_usage(Usage()) is None
    usage = to_usage(Usage(3, 4, 1))
    assert usage is not None and (usage.input_tokens, usage.total_tokens) == (3, 7)


def test_a_failed_tool_is_a_failed_tool_call() -> None:
    failed = tool_finished(ToolResultPart(call_id="c", name="t", content="boom", is_error=True))
    assert failed.status == "failed" and failed.raw_output == "boom"
