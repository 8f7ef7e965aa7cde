"""``model: agentstack``: the model the calling platform provides, per request.

IBM Agent Stack fulfils an agent's LLM demand in each message: an
OpenAI-compatible endpoint, a key and a model name. The runtime knows no
protocol: an adapter that reads such a fulfilment sets :data:`current_llm`
around the run, and :class:`ProvidedModel` sends that run's model calls
there, through :class:`~agenthost.agents.models.openai.OpenAIModel`. The
key lives only in the request's context: it is never stored with the
session, and never logged (it is not part of the call's parameters).
Without a fulfilment the run fails with a clear error.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agenthost.agents.errors import UserError
from agenthost.agents.models.base import (
    BaseChatModel,
    ModelRequest,
    ModelResponse,
    ModelStreamEvent,
)

if TYPE_CHECKING:
    from agenthost.agents.models.openai import OpenAIModel


@dataclass(frozen=True, slots=True)
class ProvidedLLM:
    """An OpenAI-compatible endpoint the client lends for one request."""

    api_base: str
    api_model: str
    api_key: str = field(repr=False)


current_llm: ContextVar[ProvidedLLM | None] = ContextVar("current_llm", default=None)
"""The model the current run's client provides (set by the adapter)."""

TIMEOUT = 60.0


class ModelNotProvided(UserError):
    """The run's client provided no model."""


class ProvidedModel(BaseChatModel):
    """Calls the model the client provides for the current request."""

    name = "agentstack"
    supports_response_format = True
    relays_upstream_params = True

    def _llm(self) -> ProvidedLLM:
        llm = current_llm.get()
        if llm is None:
            raise ModelNotProvided(
                "this agent's model is provided by the client (model: agentstack): call it "
                "over A2A with an LLM fulfilment (Agent Stack's services/llm/v1 extension)"
            )
        return llm

    def _model(self, llm: ProvidedLLM) -> OpenAIModel:
        from agenthost.agents.models.openai import OpenAIModel

        return OpenAIModel(
            llm.api_model, base_url=llm.api_base, api_key=llm.api_key or None, timeout=TIMEOUT
        )

    async def request(self, request: ModelRequest) -> ModelResponse:
        model = self._model(self._llm())
        try:
            return await model.request(request)
        finally:
            await model.aclose()

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        model = self._model(self._llm())
        try:
            async for event in model.stream(request):
                yield event
        finally:
            await model.aclose()
