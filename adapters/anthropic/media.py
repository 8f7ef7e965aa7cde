"""``image`` and ``document`` blocks as the runtime's parts, in a turn or in a ``tool_result``.

A base64 or URL source is a :class:`~agenthost.agents.FilePart`, as ``/v1``'s
``image_url`` and ``file`` parts are (an image by URL without a media type is
``image/*``, a document by URL ``application/pdf``, Anthropic's only URL
document); a ``text`` source is text. A model that takes text only refuses a
file part with a 400, on every surface. The Files API's ``file`` sources and
``content`` sources are not served.

A ``tool_result``'s images and documents cannot ride in the tool message
(the runtime's, like Chat Completions', carries text): they go in a user
message right after the results, under a line naming the call they belong to,
and the result's text says they follow.
"""

from __future__ import annotations

from collections.abc import Sequence

from agenthost.adapters.anthropic.errors import invalid
from agenthost.adapters.anthropic.schemas import DocumentBlock, ImageBlock, TextBlock
from agenthost.agents import FilePart, Part, TextPart


def to_part(block: ImageBlock | DocumentBlock, where: str) -> TextPart | FilePart:
    """One image or document block (``where`` names it in a 400)."""
    source, image = block.source, isinstance(block, ImageBlock)
    name = block.title if isinstance(block, DocumentBlock) else None
    if source.type == "text":
        if image or source.data is None:
            raise invalid(f"{where}.source: a text source is for documents, with its data")
        return TextPart(text=source.data)
    if source.type in ("file", "content"):
        raise invalid(
            f"{where}.source.type: {source.type!r} sources are not served "
            "(the Files API is not); send the bytes as base64 or a URL"
        )
    mime = source.media_type
    if image and mime is not None and not mime.startswith("image/"):
        raise invalid(f"{where}.source.media_type: {mime!r} is not an image type")
    if source.type == "url" and source.url:
        default = "image/*" if image else "application/pdf"
        return FilePart(url=source.url, mime_type=mime or default, name=name)
    if source.type == "base64" and source.data and mime:
        return FilePart(data=source.data, mime_type=mime, name=name)
    raise invalid(f"{where}.source: a {source.type} source needs its data and media_type")


def tool_result_content(
    blocks: str | Sequence[TextBlock | ImageBlock | DocumentBlock], where: str
) -> tuple[str, list[FilePart]]:
    """A ``tool_result``'s text (with a line saying that files follow), and its files."""
    if isinstance(blocks, str):
        return blocks, []
    texts: list[str] = []
    files: list[FilePart] = []
    for n, block in enumerate(blocks):
        if isinstance(block, TextBlock):
            texts.append(block.text)
            continue
        part = to_part(block, f"{where}.{n}")
        if isinstance(part, TextPart):
            texts.append(part.text)
        else:
            files.append(part)
    if files:
        texts.append(f"[{len(files)} attached file(s): in the message that follows]")
    return "\n\n".join(texts), files


def attachments(call_id: str, name: str, files: list[FilePart]) -> list[Part]:
    """A ``tool_result``'s files as user message parts, under a line naming their call."""
    if not files:
        return []
    return [TextPart(text=f"Attached to the result of {name} (call {call_id}):"), *files]
