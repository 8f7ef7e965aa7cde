"""``count_tokens``: an estimate, since an agent's model may have no tokenizer at hand.

The request's own content (``system``, the messages, the tools' names,
descriptions and schemas) is counted as the memory strategies estimate a
transcript (:func:`agenthost.agents.history.tokens.estimate_tokens`): about
four characters a token, plus a few tokens per message. The agent's own
instructions and tools, which the model also sees, are not counted.
"""

from __future__ import annotations

import orjson

from agenthost.adapters.anthropic.convert import instructions, to_messages, to_tools
from agenthost.adapters.anthropic.schemas import CountTokensRequest
from agenthost.agents import Message
from agenthost.agents.history.tokens import CHARS_PER_TOKEN, estimate_tokens


def count_tokens(request: CountTokensRequest) -> int:
    messages = to_messages(request)
    system = instructions(request)
    if system:
        messages.insert(0, Message.system(system))
    chars = sum(
        len(t.name) + len(t.description) + len(orjson.dumps(t.parameters))
        for t in to_tools(request.tools)
    )
    return estimate_tokens(messages) + -(-chars // CHARS_PER_TOKEN)
