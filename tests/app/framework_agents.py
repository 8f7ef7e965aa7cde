"""Agents of other frameworks for ``agenthost serve`` tests, on the fake upstream.

Their models read ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` like the examples;
the ``slow_*`` ones ask for the fake's endless "slow" stream. The BeeAI one
is set up for the fake as ``tests/agents/test_beeai.py`` explains.
"""

from __future__ import annotations

import os

from agent_framework import Agent
from agent_framework.openai import OpenAIChatCompletionClient
from beeai_framework.adapters.openai import OpenAIChatModel
from beeai_framework.agents.requirement import RequirementAgent
from beeai_framework.agents.requirement.prompts import RequirementAgentTaskPromptInput
from beeai_framework.backend import ChatModelParameters
from beeai_framework.template import PromptTemplate
from beeai_framework.tools import tool


def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


def _beeai(model: str) -> RequirementAgent:
    llm = OpenAIChatModel(
        model,
        base_url=os.environ["OPENAI_BASE_URL"],
        api_key=os.environ["OPENAI_API_KEY"],
        parameters=ChatModelParameters(stream=True),
        tool_choice_support={"none", "single", "auto"},
    )
    task = PromptTemplate(schema=RequirementAgentTaskPromptInput, template="{{&prompt}}")
    return RequirementAgent(
        llm=llm, tools=[tool(shout)], final_answer_as_tool=False, templates={"task": task}
    )


def _agent_framework(model: str) -> Agent:
    client = OpenAIChatCompletionClient(model=model)  # OPENAI_BASE_URL, OPENAI_API_KEY
    return Agent(client=client, instructions="Shout.", tools=[shout])


bee = _beeai("any")
slow_bee = _beeai("slow")
maf = _agent_framework("any")
slow_maf = _agent_framework("slow")
