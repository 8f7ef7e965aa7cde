"""What an upstream failure means for the caller, and whether to try again.

Used by the ``openai`` provider. Messages never name the upstream's address
(a client of agenthost has no business knowing where its models run): the
full cause is logged here instead, with the upstream's URL, the status and
an excerpt of its answer (anything that looks like a key masked).
"""

from __future__ import annotations

import logging
import os
import random
import re
import socket
import ssl
from collections.abc import Iterator
from contextlib import contextmanager

import openai

from agenthost.agents.errors import AgentError, ModelBusy, ModelError, UserError

logger = logging.getLogger("agenthost.upstream")

# host:port, URLs and bracketed IPv6 addresses in library messages.
_ADDRESS = re.compile(r"(?:[a-z][a-z0-9+.-]*://\S+)|(?:\[?[\w.:-]+\]?:\d{1,5}\b)", re.IGNORECASE)
_MAX_BACKOFF = 8.0
# Keys and tokens an upstream may echo (OpenAI's 401 quotes the key it got, masked or not).
_SECRET = re.compile(
    r"(?:\b(?:sk|rk|pk|key|gsk|xai)[-_][\w*.-]{6,})|(?:\b(?:bearer|basic)\s+\S+)",
    re.IGNORECASE,
)
_EXCERPT_CHARS = 300


def scrub(text: str) -> str:
    """``text`` without any host:port, URL or key in it (an upstream quotes the key it
    refuses: a client must not read ours)."""
    return _ADDRESS.sub("<upstream>", redact(text))


def redact(text: str) -> str:
    """``text`` with anything that looks like a key or a bearer token masked."""
    return _SECRET.sub("<redacted>", text)


def retry_delay(
    exc: openai.OpenAIError, attempt: int, max_retries: int, remaining: float
) -> float | None:
    """Seconds to wait before retrying ``exc``, or None when not to retry.

    Retried: connection failures, time-outs, 408, 409, 429 (but an exhausted
    quota) and 5xx, as the SDK does. A wait longer than what remains of the
    request's time-out is not slept on: the failure goes to the client,
    whose ``retry-after`` then says when to come back.
    """
    if attempt >= max_retries or not _retryable(exc):
        return None
    after = _retry_after(exc) if isinstance(exc, openai.APIStatusError) else None
    delay = after if after is not None else min(_MAX_BACKOFF, 0.5 * 2**attempt)
    delay *= 1 if after is not None else random.uniform(0.75, 1.0)
    return delay if delay < remaining else None


def _retryable(exc: openai.OpenAIError) -> bool:
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if not isinstance(exc, openai.APIStatusError):
        return False
    if exc.status_code == 429:
        return exc.code != "insufficient_quota"
    return exc.status_code in (408, 409) or exc.status_code >= 500


def failed(model: str, exc: openai.OpenAIError, *, retried: bool) -> AgentError:
    """What an upstream failure means for the caller.

    A request the upstream refuses as invalid (typically a conversation
    longer than its context) is the caller's to fix: a :class:`UserError`
    with the upstream's param. A rate limit is worth retrying later
    (:class:`ModelBusy`; ``retried`` says whether our own retries are spent),
    except an exhausted quota. Anything else (our key, the upstream's health,
    the network) is a :class:`ModelError`.
    """
    if isinstance(exc, openai.APIStatusError):
        _log_status(model, exc)
    if isinstance(exc, openai.BadRequestError | openai.UnprocessableEntityError):
        return UserError(
            f"upstream model {model!r} refused the request: {scrub(_message(exc))}",
            param=exc.param,
        )
    if isinstance(exc, openai.RateLimitError) and exc.code != "insufficient_quota":
        return ModelBusy(
            f"upstream model {model!r} is rate limited: {scrub(_message(exc))}",
            retry_after=_retry_after(exc),
            retried=retried,
        )
    if isinstance(exc, openai.APIStatusError):
        return ModelError(
            f"upstream model {model!r} failed with status {exc.status_code}: {scrub(_message(exc))}"
        )
    what = _what_happened(exc)
    logger.warning("upstream model %r at %s: %s (%s)", model, _url(exc), what, _causes(exc)[-1])
    return ModelError(f"upstream model {model!r} failed: {what}")


def _log_status(model: str, exc: openai.APIStatusError) -> None:
    """Log an upstream's refusal with its status and answer: the client's message has
    neither the address nor the body, and a 401 or 404 is the operator's to fix."""
    try:
        body = exc.response.text
    except Exception:  # a body that cannot be decoded: the SDK's reading of it
        body = str(exc.body)
    excerpt = " ".join(redact(body).split())
    if len(excerpt) > _EXCERPT_CHARS:
        excerpt = excerpt[:_EXCERPT_CHARS] + "..."
    # Refusals of the request itself are the client's to fix, and told to it in full.
    clients = exc.status_code in (400, 422) or (
        exc.status_code == 429 and exc.code != "insufficient_quota"
    )
    level = logging.INFO if clients else logging.WARNING
    logger.log(
        level,
        "upstream model %r at %s answered %d%s: %s",
        model,
        _url(exc),
        exc.status_code,
        _STATUS_HINTS.get(exc.status_code, ""),
        excerpt or "(empty body)",
    )


_STATUS_HINTS = {
    401: " (the upstream refused the key: check OPENAI_API_KEY or model_settings.api_key)",
    403: " (the key may not use this model or endpoint)",
    404: " (check the model name and model_settings.base_url)",
}


def _url(exc: openai.OpenAIError) -> str:
    request = getattr(exc, "request", None)
    return str(request.url) if request is not None else "the upstream"


def _what_happened(exc: openai.OpenAIError) -> str:
    """Say what happened in words; the SDK's messages hide it ("Connection error.")."""
    causes = _causes(exc)
    names = " ".join(type(c).__name__ for c in causes)
    if any(isinstance(c, socket.gaierror) for c in causes) or "DNS" in names:
        # getaddrinfo's codes are no errno: os.strerror(-2) is "Unknown error -2".
        gai = next((c for c in causes if isinstance(c, socket.gaierror)), None)
        text = gai.strerror if gai is not None else None
        return f"cannot resolve the upstream's host name ({text or 'unknown host'})"
    # The innermost: aiohttp's wrappers are SSLErrors too, without OpenSSL's reason.
    tls = next((c for c in reversed(causes) if isinstance(c, ssl.SSLError)), None)
    if tls is not None:  # before the errno: an SSLError's is OpenSSL's, not the system's
        return _tls_failure(tls)
    errno = next((c.errno for c in causes if isinstance(c, OSError) and c.errno), None)
    if errno is not None:
        # The aiohttp transport reports a refused connection as a time-out: the errno tells.
        # (Not the exception's own text: aiohttp's names the address.)
        return f"cannot connect to the upstream ({os.strerror(errno)})"
    if any(word in names for word in ("Payload", "TransferEncoding", "IncompleteRead")):
        return "the upstream's answer was cut short"
    if "Disconnected" in names or "RemoteProtocol" in names:
        return "the upstream closed the connection"
    if isinstance(exc, openai.APITimeoutError) or "Timeout" in names:
        return "the upstream did not answer in time"
    if "Connect" in names:
        return "cannot connect to the upstream"
    return scrub(str(exc))


def _tls_failure(exc: ssl.SSLError) -> str:
    """A TLS failure in words (os.strerror of its errno, OpenSSL's code, said
    "Operation not permitted")."""
    if isinstance(exc, ssl.SSLCertVerificationError):
        why = exc.verify_message or "certificate verify failed"
        return f"the upstream's TLS certificate was refused ({why})"
    # Set by OpenSSL; an SSLError made in Python (a wrapper's) has none.
    reason = str(getattr(exc, "reason", None) or "")
    if reason == "WRONG_VERSION_NUMBER":  # a plain HTTP server at an https:// URL
        return "TLS with the upstream failed: it does not speak TLS (http://, not https://?)"
    reason = reason.replace("_", " ").lower()
    return f"TLS with the upstream failed ({reason or scrub(str(exc))})"


def _causes(exc: BaseException) -> list[BaseException]:
    """``exc`` and what caused it, explicitly or while handling, outermost first."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _message(exc: openai.APIStatusError) -> str:
    """The upstream's own error message (the SDK's prefixes it with the whole body)."""
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return str(body["message"])
    return exc.message


def _retry_after(exc: openai.APIStatusError) -> float | None:
    header = exc.response.headers.get("retry-after")
    try:
        return max(0.0, float(header)) if header else None
    except ValueError:  # an HTTP date: rare from model servers
        return None


MALFORMED = (LookupError, TypeError, AttributeError, ValueError)
"""What reading an answer that is not a completion raises (wrong shape, bad JSON, bad SSE)."""


def malformed(model: str, exc: Exception) -> ModelError:
    """The ModelError for ``exc``, one of :data:`MALFORMED`."""
    return ModelError(
        f"upstream model {model!r} sent a malformed response "
        f"({type(exc).__name__}: {scrub(str(exc))})"
    )


@contextmanager
def malformed_answers(model: str) -> Iterator[None]:
    """Answers that are not completions (wrong shape, bad JSON, bad SSE) → a ModelError."""
    try:
        yield
    except MALFORMED as exc:
        raise malformed(model, exc) from exc
