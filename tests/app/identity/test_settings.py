"""The OIDC settings and the names an ``allow`` list may hold with tokens on or off."""

from __future__ import annotations

import pytest

from agenthost.adapters.base import Principal, may_use
from agenthost.app.principals import KeysError, check_allow
from agenthost.app.settings import Settings


def test_tokens_are_off_unless_an_issuer_is_set_and_need_an_audience() -> None:
    assert Settings().token_validator() is None
    with pytest.raises(KeysError, match="AGENTHOST_OIDC_AUDIENCE"):
        Settings(oidc_issuer="https://id.example.test").token_validator()
    with pytest.raises(KeysError, match="AGENTHOST_OIDC_CLIENT_ID"):
        Settings(
            oidc_issuer="https://id.example.test",
            oidc_audience="https://agents.example.test",
            oidc_introspection_url="https://id.example.test/introspect",
        ).token_validator()
    tokens = Settings(
        oidc_issuer="https://id.example.test",
        oidc_audience="https://agents.example.test",
        oidc_required_scopes="mcp, agents.read",  # type: ignore[arg-type]  # as the environment
    )
    assert tokens.oidc_required_scopes == ["mcp", "agents.read"]


def test_allow_lists_name_token_principals_and_scopes_only_with_tokens_on() -> None:
    keys = {"key-of-alice-0123456789": "alice"}
    allow = {"writers": frozenset({"alice", "scope:agents.write", "oidc:svc"})}
    check_allow(allow, keys, tokens=True)
    with pytest.raises(KeysError, match=r"'oidc:svc'.*OIDC tokens are off"):
        check_allow(allow, keys)
    with pytest.raises(KeysError, match="unknown principal 'bob'"):
        check_allow({"writers": frozenset({"bob", "scope:x"})}, keys, tokens=True)
    check_allow({"writers": frozenset({"scope:agents.write"})}, {}, tokens=True)  # no key
    with pytest.raises(KeysError, match="unknown principal 'alice'; no API key"):
        check_allow(allow, {}, tokens=True)


def test_a_token_principal_is_let_in_by_its_name_or_one_of_its_scopes() -> None:
    allowed = frozenset({"alice", "scope:agents.write", "oidc:admin"})
    assert may_use(None, "anyone")
    assert may_use(allowed, "alice")
    assert not may_use(allowed, "bob")
    assert may_use(allowed, Principal("oidc:svc", frozenset({"scope:agents.write"})))
    assert not may_use(allowed, Principal("oidc:svc", frozenset({"scope:agents.read"})))
    assert may_use(allowed, Principal("oidc:admin"))
