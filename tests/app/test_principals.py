"""Keys-file parsing: what used to be misread silently, or crashed, is a start-up
error naming the file and line, never the key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agenthost.adapters.base import Principal, may_use
from agenthost.app.principals import KeysError, build_principals, check_allow, parse_key
from agenthost.app.quotas import Limits, Quotas
from agenthost.app.settings import Settings

SECRET = "s3cret-0123456789"


def principals_of(path: Path, content: bytes) -> dict[str, str]:
    path.write_bytes(content)
    return Settings(api_keys_file=path).principals()


def test_a_hash_inside_a_key_is_part_of_it_a_hash_after_whitespace_a_comment(
    tmp_path: Path,
) -> None:
    # Before, "alice:ab#…" became the key "ab", which then failed as too short
    # (or, longer, silently authenticated with a truncated key).
    content = (
        b"# team keys\n"
        b"alice:key-a#0123456789ab\n"
        b"bob:key-b-0123456789ab # on call\n"
        b"carol:key-c-0123456789ab\t# tab before\n"
        b"   # an indented comment\n"
    )
    principals = principals_of(tmp_path / "keys", content)
    assert principals == {
        "key-a#0123456789ab": "alice",
        "key-b-0123456789ab": "bob",
        "key-c-0123456789ab": "carol",
    }


@pytest.mark.parametrize(
    ("content", "error"),
    [
        # Before, the BOM made the name invalid, and the entry a bare key.
        (b"\xef\xbb\xbfalice:" + SECRET.encode(), "line 1 starts with a UTF-8 byte order mark"),
        # Before, the whole entry silently became one bare key.
        (b"# ok\nal ice:" + SECRET.encode(), "line 2: the text before ':' is not a name"),
        (b"t/alice/admin:" + SECRET.encode(), "line 1: the text before ':' is not a name"),
        # Before, a UnicodeDecodeError traceback.
        (b"alice:" + SECRET.encode() + b"\n\n\xff\xfe\x00binary", "line 3 is not UTF-8 text"),
        # Before, accepted: a key no HTTP header can carry never authenticates.
        (
            "alice:clé-" + SECRET,
            "line 1 (named 'alice'): the key holds a character that is not printable ASCII",
        ),
        ("# x\n\nclé-bare-" + SECRET, "line 3: the key holds a character that is not printable"),
        ("alice:" + SECRET + "\x00", "line 1 (named 'alice'): the key holds a character"),
    ],
)
def test_a_misread_keys_file_is_an_error_naming_the_file_and_line_never_the_key(
    tmp_path: Path, content: bytes | str, error: str
) -> None:
    path = tmp_path / "keys"
    with pytest.raises(KeysError, match=re.escape(f"{path} {error}")) as caught:
        principals_of(path, content if isinstance(content, bytes) else content.encode())
    assert "s3cret" not in str(caught.value)
    assert "al ice" not in str(caught.value) and "alice/admin" not in str(caught.value)


def test_listed_keys_follow_the_same_rules() -> None:
    with pytest.raises(KeysError, match="API key #2: the key holds a character"):
        parse_key("clé-" + SECRET, "API key #2")
    with pytest.raises(KeysError, match=r"API key #1: the text before ':' is not a name"):
        parse_key("not a name:" + SECRET, "API key #1")
    # A bare key of printable ASCII (with '#' and punctuation) is still a key.
    name, key = parse_key("bare#key+/=-" + SECRET, "API key #3")
    assert key == "bare#key+/=-" + SECRET and name.startswith("key-")


def test_a_key_of_a_tenant_is_tenant_slash_name_and_allow_lists_name_either() -> None:
    principals = build_principals([f"t1/alice:{SECRET}", f"t2/alice:{SECRET}x", f"bob:{SECRET}y"])
    alice = principals[SECRET]
    assert isinstance(alice, Principal)
    assert (alice, alice.name, alice.tenant) == ("t1/alice", "alice", "t1")
    assert principals[SECRET + "y"] == "bob" and not isinstance(principals[SECRET + "y"], Principal)
    # The owner key differs by tenant; allow lists match the whole, the name or the tenant.
    assert alice != principals[SECRET + "x"]
    for allowed in ("t1/alice", "alice", "tenant:t1"):
        assert may_use(frozenset({allowed}), alice)
    assert not may_use(frozenset({"t2/alice"}), alice)
    assert not may_use(frozenset({"tenant:t2"}), alice)
    for names in ({"t1/alice"}, {"alice"}, {"tenant:t2"}, {"bob"}):
        check_allow({"a": frozenset(names)}, principals)
    for unknown in ("t3/alice", "tenant:t3", "carol", "t1/oidc:svc"):
        with pytest.raises(KeysError, match=re.escape(f"unknown principal {unknown!r}")):
            check_allow({"a": frozenset({unknown})}, principals)
    # With tokens on, any tenant may turn up, and a token principal of one.
    check_allow({"a": frozenset({"tenant:t3", "t1/oidc:svc", "oidc:svc"})}, principals, tokens=True)


@pytest.mark.parametrize("name", ["/alice", "t1/", "t/1/alice", "-t/alice", "t" * 65 + "/alice"])
def test_a_tenant_must_be_a_name(name: str) -> None:
    with pytest.raises(KeysError, match="is not a name or TENANT/name"):
        parse_key(f"{name}:{SECRET}")


@pytest.mark.anyio
async def test_quotas_of_a_tenants_key_are_its_own_or_its_bare_names_counted_apart(
    caplog: pytest.LogCaptureFixture,
) -> None:
    per_minute = {"alice": Limits(requests_per_minute=1), "t2/alice": Limits(requests_per_minute=5)}
    quotas = Quotas(Limits(), principals=per_minute)
    t1, t2, t3 = (Principal("alice", tenant=t) for t in ("t1", "t2", "t3"))
    assert quotas.of(t1) == quotas.of("alice") == Limits(requests_per_minute=1)
    assert quotas.of(t2).requests_per_minute == 5
    assert quotas.of("bob") == Limits()
    assert await quotas.check(t1, False) is None
    assert await quotas.check(t1, False) is not None  # its one request a minute is spent
    assert await quotas.check(t3, False) is None  # same limits, its own counter
    with caplog.at_level("WARNING", logger="agenthost"):
        quotas.check_principals([t1])  # keys: t1/alice only, so alice is a known name
        quotas.check_principals(["bob"])
    warned = [r.getMessage() for r in caplog.records]
    assert [w.rpartition(": ")[2] for w in warned if w.startswith("quotas for")] == [
        "t2/alice",  # not "alice": the key t1/alice names it
        "alice, t2/alice",
    ]
