"""Run by the agentstack-sdk's own Python (not agenthost's, see
``test_agent_stack_sdk.py``): Agent Stack's client side against one served agent.

``python agent_stack_client.py AGENT_URL LLM_BASE LLM_KEY LLM_MODEL TEXT`` reads
the agent's card over A2A 0.3 and its extensions with the SDK's specs, sends
TEXT streamed with an LLM fulfilment made by the SDK's LLM service client, and
prints as JSON what it read: the agent detail, the LLM demands, the
trajectory entries and error details the SDK's clients parse from the stream,
the answer's text and the final state.
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
from agentstack_sdk.a2a.extensions.ui.error import ErrorExtensionClient, ErrorExtensionSpec


async def main(url: str, base: str, key: str, model: str, text: str) -> dict[str, object]:
    async with httpx.AsyncClient(timeout=60) as http:
        card = await A2ACardResolver(http, url).get_agent_card()
        detail = AgentDetailExtensionSpec.from_agent_card(card)
        llm = LLMServiceExtensionSpec.from_agent_card(card)
        trajectory_spec = TrajectoryExtensionSpec.from_agent_card(card)
        error_spec = ErrorExtensionSpec.from_agent_card(card)
        assert detail and llm and trajectory_spec and error_spec, card.capabilities
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
        trajectories, errors, chunks, state = [], [], [], None
        trajectory = TrajectoryExtensionClient(trajectory_spec)
        error = ErrorExtensionClient(error_spec)
        async for event in client.send_message(message):
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
        return {
            "protocol": card.protocol_version,
            "detail": detail.params.model_dump(mode="json"),
            "demands": sorted(llm.params.llm_demands),
            "trajectories": trajectories,
            "errors": errors,
            "text": "".join(chunks),
            "state": state,
        }


print(json.dumps(asyncio.run(main(*sys.argv[1:]))))
