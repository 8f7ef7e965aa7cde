"""Agents working together: handoff (agent as a tool), pipelines and step workflows."""

from agenthost.agents.composition.handoff import MAX_DEPTH, AgentTool, history_view
from agenthost.agents.composition.pipeline import PipelineAgent
from agenthost.agents.composition.workflow import (
    END,
    NEXT,
    PREV,
    SELF,
    START,
    AgentStep,
    FunctionStep,
    WorkflowAgent,
)

__all__ = [
    "END",
    "MAX_DEPTH",
    "NEXT",
    "PREV",
    "SELF",
    "START",
    "AgentStep",
    "AgentTool",
    "FunctionStep",
    "PipelineAgent",
    "WorkflowAgent",
    "history_view",
]
