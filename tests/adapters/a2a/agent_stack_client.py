"""Run by the agentstack-sdk's own Python (not agenthost's, see
``test_agent_stack_sdk.py``): Agent Stack's client side against one served agent.

``python agent_stack_client.py AGENT_URL LLM_BASE LLM_KEY LLM_MODEL TEXT [ANSWER]`` reads
the agent's card over A2A 0.3 and its extensions with the SDK's specs, sends
TEXT streamed (with an LLM fulfilment made by the SDK's LLM service client when
the card demands one), and prints as JSON what it read: the agent detail, the
LLM demands, the trajectory entries, citations and error details the SDK's
clients parse from the stream, the forms and approval requests asked, the
answer's text and the final state.

With ANSWER, what the agent asks in the task is answered with the SDK's own
models, in the same task: an approval request (``interactions/approval/v1``,
parsed by the SDK's ``ApprovalExtensionClient``) with the decision ANSWER
(``approve`` / ``reject``) as the SDK's ``ApprovalResponse``; a form
(``ui/form_request/v1``) as the SDK's ``FormResponse``: ANSWER in its first field,
or, when ANSWER is a JSON object, each of its values in the field of that id,
typed as the field is.
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
from agentstack_sdk.a2a.extensions.common.form import (
    CheckboxFieldValue,
    DateFieldValue,
    FormResponse,
    MultiSelectFieldValue,
    SingleSelectFieldValue,
    TextFieldValue,
)
from agentstack_sdk.a2a.extensions.interactions.approval import (
    ApprovalExtensionClient,
    ApprovalExtensionSpec,
    ApprovalResponse,
)
from agentstack_sdk.a2a.extensions.ui.citation import (
    CitationExtensionClient,
    CitationExtensionSpec,
)
from agentstack_sdk.a2a.extensions.ui.error import ErrorExtensionClient, ErrorExtensionSpec
from agentstack_sdk.a2a.extensions.ui.form_request import (
    FormRequestExtensionClient,
    FormRequestExtensionSpec,
)

VALUES = {
    "text": TextFieldValue,
    "date": DateFieldValue,
    "singleselect": SingleSelectFieldValue,
    "multiselect": MultiSelectFieldValue,
    "checkbox": CheckboxFieldValue,
}


class Asked:
    """What the agent asked in the stream: forms and approval requests, parsed by the SDK."""

    def __init__(self, card):
        self.forms = FormRequestExtensionClient(FormRequestExtensionSpec.from_agent_card(card))
        self.approvals = ApprovalExtensionClient(ApprovalExtensionSpec.from_agent_card(card))
        self.form_list, self.approval_list = [], []

    def read(self, message) -> None:
        if (form := self.forms.parse_server_metadata(message)) is not None:
            self.form_list.append(form)
        if message.metadata and self.approvals.spec.URI in message.metadata:
            self.approval_list.append(self.approvals.parse_request(message=message))

    def response(self, answer: str, task_id: str, context_id: str) -> Message | None:
        """The response to the last thing asked, as the SDK's models make it."""
        if self.approval_list:
            response = ApprovalResponse(decision=answer)
            reply = self.approvals.create_response_message(response=response, task_id=task_id)
        elif self.form_list:
            fields = self.form_list[-1].fields
            given = json.loads(answer) if answer.startswith("{") else {fields[0].id: answer}
            values = {f.id: VALUES[f.type](value=given[f.id]) for f in fields if f.id in given}
            response = FormResponse(values=values).model_dump(mode="json")
            reply = Message(
                message_id=str(uuid.uuid4()),
                role=Role.user,
                parts=[],
                task_id=task_id,
                metadata={self.forms.spec.URI: response},
            )
        else:
            return None
        reply.context_id = context_id
        return reply


async def main(
    url: str, base: str, key: str, model: str, text: str, answer: str | None = None
) -> dict[str, object]:
    async with httpx.AsyncClient(timeout=60) as http:
        card = await A2ACardResolver(http, url).get_agent_card()
        detail = AgentDetailExtensionSpec.from_agent_card(card)
        llm = LLMServiceExtensionSpec.from_agent_card(card)
        trajectory_spec = TrajectoryExtensionSpec.from_agent_card(card)
        error_spec = ErrorExtensionSpec.from_agent_card(card)
        citation_spec = CitationExtensionSpec.from_agent_card(card)
        specs = (detail, trajectory_spec, error_spec, citation_spec)
        assert all(specs) and FormRequestExtensionSpec.from_agent_card(card), card.capabilities
        assert ApprovalExtensionSpec.from_agent_card(card), card.capabilities
        metadata = {}
        if llm is not None:
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
        trajectories, errors, citations, chunks, state = [], [], [], [], None
        trajectory = TrajectoryExtensionClient(trajectory_spec)
        error = ErrorExtensionClient(error_spec)
        citation = CitationExtensionClient(citation_spec)
        asked = Asked(card)
        async for event in stream(client, message, answer, asked, metadata):
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
                if (cited := citation.parse_server_metadata(status_message)) is not None:
                    citations += [c.model_dump(mode="json") for c in cited.citations]
                asked.read(status_message)
        return {
            "protocol": card.protocol_version,
            "detail": detail.params.model_dump(mode="json"),
            "demands": sorted(llm.params.llm_demands) if llm else [],
            "trajectories": trajectories,
            "errors": errors,
            "citations": citations,
            "text": "".join(chunks),
            "state": state,
            "forms": [form.model_dump(mode="json") for form in asked.form_list],
            "approvals": [a.model_dump(mode="json") for a in asked.approval_list],
        }


async def stream(client, message, answer, asked, metadata):
    """The events of ``message`` and, when the agent asks something and there is an
    ``answer``, those of the response in the same task."""
    task_id = context_id = None
    async for event in client.send_message(message):
        if not isinstance(event, Message):
            task_id, context_id = event[0].id, event[0].context_id
        yield event
    reply = asked.response(answer, task_id, context_id) if answer is not None else None
    if reply is None:
        return
    reply.metadata = {**metadata, **(reply.metadata or {})}
    async for event in client.send_message(reply):
        yield event


print(json.dumps(asyncio.run(main(*sys.argv[1:]))))
