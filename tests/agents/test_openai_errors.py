"""Upstream failures an operator can act on: logged with what happened, keys never."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import logging
import ssl
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from agenthost.agents import ChatAgent, ModelError, UserError
from agenthost.agents.models.openai import OpenAIModel
from agenthost.agents.models.openai_errors import redact
from tests.upstream import serve_in_thread

pytestmark = pytest.mark.anyio

KEY = "sk-proj-Zx81mQp4TtV9"


async def refuse_the_key(request: Request) -> JSONResponse:
    # What api.openai.com answers to a wrong key: it quotes the key back.
    error = {
        "message": f"Incorrect API key provided: {request.headers['authorization'][7:]}. "
        "You can find your API key at https://platform.openai.com/account/api-keys.",
        "type": "invalid_request_error",
        "param": None,
        "code": "invalid_api_key",
    }
    return JSONResponse({"error": error}, 401)


async def test_an_upstream_refusal_is_logged_with_its_status_and_body_but_no_key(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "agenthost.upstream")
    app = Starlette(routes=[Route("/v1/chat/completions", refuse_the_key, methods=["POST"])])
    with serve_in_thread(app) as url:
        model = OpenAIModel("gpt-4o-mini", base_url=f"{url}/v1", api_key=KEY, max_retries=0)
        async with model.lifespan():
            with pytest.raises(ModelError, match="failed with status 401") as failed:
                await ChatAgent("up", model).run("hi")
    (record,) = [r for r in caplog.records if r.name == "agenthost.upstream"]
    logged = record.getMessage()
    assert record.levelno == logging.WARNING
    assert f"at {url}/v1/chat/completions answered 401" in logged
    assert "OPENAI_API_KEY or model_settings.api_key" in logged  # what to do
    assert "Incorrect API key provided: <redacted>" in logged and "invalid_api_key" in logged
    assert KEY not in logged and "Zx81" not in logged
    assert KEY not in str(failed.value)


def test_keys_and_tokens_are_redacted() -> None:
    text = "key sk-abc123def456 or Bearer abc.def-ghi, masked sk-proj-****wxyz; gsk_0123456789"
    assert redact(text) == "key <redacted> or <redacted> masked <redacted>; <redacted>"
    assert redact("model gpt-4o-mini at https://api.openai.com/v1") == (
        "model gpt-4o-mini at https://api.openai.com/v1"
    )


async def test_an_unresolvable_host_is_named_in_the_log_and_said_in_words(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, "agenthost.upstream")
    # .invalid never resolves (RFC 2606): nothing leaves the machine.
    base_url = "http://agenthost-no-such-host.invalid/v1"
    model = OpenAIModel("m", base_url=base_url, api_key="k", max_retries=0)
    async with model.lifespan():
        with pytest.raises(ModelError) as failed:
            await ChatAgent("up", model).run("hi")
    message = str(failed.value)
    assert "cannot resolve the upstream's host name (" in message, message
    assert "Unknown error" not in message
    assert "agenthost-no-such-host" not in message  # the address is the operator's only
    (record,) = [r for r in caplog.records if r.name == "agenthost.upstream"]
    assert "agenthost-no-such-host.invalid" in record.getMessage()
    assert "cannot resolve the upstream's host name" in record.getMessage()


def test_openai_itself_without_a_key_is_refused_at_construction(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(UserError, match="no API key: set OPENAI_API_KEY") as refused:
        OpenAIModel("gpt-4o-mini")
    assert refused.value.param == "api_key"
    with pytest.raises(UserError, match=r"set model_settings\.api_key"):
        OpenAIModel("gpt-4o-mini", base_url="https://api.openai.com/v1")
    with pytest.raises(UserError, match=r"set model_settings\.api_key"):
        OpenAIModel("gpt-4o-mini", base_url="https://api.openai.com/v1", api_key="")
    # A key from the environment is for the default base URL only, as before.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    OpenAIModel("gpt-4o-mini")
    with pytest.raises(UserError, match=r"set model_settings\.api_key"):
        OpenAIModel("gpt-4o-mini", base_url="https://api.openai.com/v1")
    # Local servers need no key.
    monkeypatch.delenv("OPENAI_API_KEY")
    OpenAIModel("qwen2.5:0.5b", base_url="http://127.0.0.1:11434/v1")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")
    OpenAIModel("qwen2.5:0.5b")


@pytest.mark.parametrize(
    ("base_url", "variable"),
    [
        ("https://api.groq.com/openai/v1", "GROQ_API_KEY"),
        ("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
        ("https://my-resource.openai.azure.com/openai/v1", "AZURE_OPENAI_API_KEY"),
    ],
)
def test_a_hosted_api_without_a_key_is_refused_naming_its_variable(
    base_url: str, variable: str
) -> None:
    with pytest.raises(UserError, match=rf"api_key: \${{{variable}}}") as refused:
        OpenAIModel("some-model", base_url=base_url)
    assert refused.value.param == "api_key"
    OpenAIModel("some-model", base_url=base_url, api_key="a-key")
    # A server of one's own under a name that merely looks alike is not refused.
    OpenAIModel("some-model", base_url="http://api.groq.com.internal:8000/v1")


def self_signed(folder: Path) -> ssl.SSLContext:
    """A server context with a certificate for 127.0.0.1 that no client trusts."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    (folder / "cert.pem").write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    (folder / "key.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(folder / "cert.pem", folder / "key.pem")
    return context


async def answer_plain_http(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await reader.read(1)
    writer.write(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
    await writer.drain()
    writer.close()


async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    writer.close()


async def test_tls_failures_are_said_in_words(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Before: an SSLError's errno (OpenSSL's code 1) went to os.strerror,
    # "cannot connect to the upstream (Operation not permitted)".
    caplog.set_level(logging.WARNING, "agenthost.upstream")
    untrusted = await asyncio.start_server(hang_up, "127.0.0.1", 0, ssl=self_signed(tmp_path))
    plain = await asyncio.start_server(answer_plain_http, "127.0.0.1", 0)
    said: dict[asyncio.Server, str] = {}
    async with untrusted, plain:
        for server in (untrusted, plain):
            port = server.sockets[0].getsockname()[1]
            url = f"https://127.0.0.1:{port}/v1"
            model = OpenAIModel("m", base_url=url, api_key="k", max_retries=0)
            async with model.lifespan():
                with pytest.raises(ModelError) as failed:
                    await ChatAgent("up", model).run("hi")
            said[server] = str(failed.value)
    assert said[untrusted] == (
        "upstream model 'm' failed: the upstream's TLS certificate was refused "
        "(self-signed certificate)"
    )
    assert said[plain] == (
        "upstream model 'm' failed: TLS with the upstream failed: "
        "it does not speak TLS (http://, not https://?)"
    )
    logged = [r.getMessage() for r in caplog.records if r.name == "agenthost.upstream"]
    assert len(logged) == 2 and all("Operation not permitted" not in m for m in logged)
