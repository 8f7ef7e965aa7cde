"""Run by the agentstack-sdk's own Python (not agenthost's, see
``test_agent_stack_sdk.py``): Agent Stack's client side against one served agent.

``python agent_stack_client.py AGENT_URL LLM_BASE LLM_KEY LLM_MODEL TEXT [ANSWER]`` reads
the agent's card over A2A 0.3 and its extensions with the SDK's specs, sends
TEXT streamed with an LLM fulfilment made by the SDK's LLM service client, and
prints as JSON what it read: the agent detail, the LLM demands, the
trajectory entries and error details the SDK's clients parse from the stream,
the answer's text and the final state. With ANSWER, a form the agent asks for
(``ui/form_request/v1``, parsed by the SDK's client) is answered with it in its
first field, in the same task, as the SDK's ``FormResponse``.
"""

import asyncio
import json
import sys
import uuid

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import Message, Part, Role, TextPart
from agentstack_sdk.a2a.extensions import (
    AgentDetailExtensionSpec,
    LLMFulfillment,
    LLMServiceExtensionClient,
    LLMServiceExtensionSpec,
    TrajectoryExtensionClient,
    TrajectoryExtensionSpec,
)
from agentstack_sdk.a2a.extensions.common.form import FormResponse, TextFieldValue
from agentstack_sdk.a2a.extensions.ui.error import ErrorExtensionClient, ErrorExtensionSpec
from agentstack_sdk.a2a.extensions.ui.form_request import (
    FormRequestExtensionClient,
    FormRequestExtensionSpec,
)


async def main(
    url: str, base: str, key: str, model: str, text: str, answer: str | None = None
) -> dict[str, object]:
    async with httpx.AsyncClient(timeout=60) as http:
        card = await A2ACardResolver(http, url).get_agent_card()
        detail = AgentDetailExtensionSpec.from_agent_card(card)
        llm = LLMServiceExtensionSpec.from_agent_card(card)
        trajectory_spec = TrajectoryExtensionSpec.from_agent_card(card)
        error_spec = ErrorExtensionSpec.from_agent_card(card)
        form_spec = FormRequestExtensionSpec.from_agent_card(card)
        assert detail and llm and trajectory_spec and error_spec and form_spec, card.capabilities
        metadata = LLMServiceExtensionClient(llm).fulfillment_metadata(
            llm_fulfillments={
                name: LLMFulfillment(api_base=base, api_key=key, api_model=model)
                for name in llm.params.llm_demands
            }
        )
        client = ClientFactory(ClientConfig(streaming=True, httpx_client=http)).create(card)
        message = Message(
            message_id=str(uuid.uuid4()),
            role=Role.user,
            parts=[Part(root=TextPart(text=text))],
            metadata=metadata,
        )
        trajectories, errors, chunks, forms, state = [], [], [], [], None
        trajectory = TrajectoryExtensionClient(trajectory_spec)
        error = ErrorExtensionClient(error_spec)
        form_client = FormRequestExtensionClient(form_spec)
        async for event in stream(client, message, answer, form_client, metadata, forms):
            if isinstance(event, Message):
                continue
            task, update = event
            state = task.status.state.value
            status_message = task.status.message if update is None else None
            if update is not None and getattr(update, "kind", "") == "status-update":
                status_message = update.status.message
            if update is not None and getattr(update, "kind", "") == "artifact-update":
                chunks += [p.root.text for p in update.artifact.parts if p.root.kind == "text"]
            if status_message is not None:
                if (entry := trajectory.parse_server_metadata(status_message)) is not None:
                    trajectories.append(entry.model_dump(mode="json"))
                if (failure := error.parse_server_metadata(status_message)) is not None:
                    errors.append(failure.model_dump(mode="json"))
                if (form := form_client.parse_server_metadata(status_message)) is not None:
                    forms.append(form)
        return {
            "protocol": card.protocol_version,
            "detail": detail.params.model_dump(mode="json"),
            "demands": sorted(llm.params.llm_demands),
            "trajectories": trajectories,
            "errors": errors,
            "text": "".join(chunks),
            "state": state,
            "forms": [form.model_dump(mode="json") for form in forms],
        }


async def stream(client, message, answer, form_client, metadata, forms):
    """The events of ``message`` and, when the agent asks with a form and there is
    an ``answer``, those of the form's response in the same task."""
    task_id = context_id = None
    async for event in client.send_message(message):
        if not isinstance(event, Message):
            task_id, context_id = event[0].id, event[0].context_id
        yield event
    if answer is None or not forms:
        return
    field = forms[-1].fields[0].id
    response = FormResponse(values={field: TextFieldValue(value=answer)})
    reply = Message(
        message_id=str(uuid.uuid4()),
        role=Role.user,
        parts=[],
        task_id=task_id,
        context_id=context_id,
        metadata={**metadata, form_client.spec.URI: response.model_dump(mode="json")},
    )
    async for event in client.send_message(reply):
        yield event


print(json.dumps(asyncio.run(main(*sys.argv[1:]))))
