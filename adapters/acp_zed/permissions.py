"""A call that needs the user's approval as Zed's own permission prompt.

The run asks for an approval as an ``ask_user`` question (agents/tools/approvals.py);
here each such question becomes ``session/request_permission`` (allow once, reject
once) inside the prompt turn, and the choice is the question's answer: allowed,
"yes"; rejected or cancelled, "no".
"""

from __future__ import annotations

from collections.abc import Sequence

from acp.schema import PermissionOption, RequestPermissionResponse, ToolCallUpdate

from agenthost.agents import ToolCallPart, question_of
from agenthost.agents.tools.approvals import is_approval_request

ALLOW, REJECT = "allow", "reject"
OPTIONS = [
    PermissionOption(option_id=ALLOW, name="Allow", kind="allow_once"),
    PermissionOption(option_id=REJECT, name="Reject", kind="reject_once"),
]


def only_approvals(pending: Sequence[ToolCallPart]) -> bool:
    """Whether a run waits for approvals only (each asked by a permission prompt)."""
    return bool(pending) and all(is_approval_request(call) for call in pending)


def permission_call(call: ToolCallPart) -> ToolCallUpdate:
    """The tool call the permission prompt shows: the question as its title."""
    return ToolCallUpdate(
        tool_call_id=call.id, title=question_of(call), kind="other", status="pending"
    )


def answer_of(response: RequestPermissionResponse) -> str:
    """The user's choice as the question's answer."""
    outcome = response.outcome
    allowed = outcome.outcome == "selected" and getattr(outcome, "option_id", None) == ALLOW
    return "yes" if allowed else "no"
