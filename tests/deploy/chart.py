"""The Helm chart rendered offline (Helm's own Go engine through helm-python-sdk)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import helm_python
import yaml

CHART = Path(__file__).parents[2] / "deploy" / "helm" / "agenthost"
RELEASE = "demo"
NAMESPACE = "agents"

# Every option on: what `helm template` must also render and validate.
ALL_ON: dict[str, Any] = {
    "replicaCount": 3,
    "workers": "auto",
    "image": {"repository": "registry.example.com/agenthost", "tag": "1.2.3"},
    "imagePullSecrets": [{"name": "registry"}],
    "config": {"agents": "agents:\n  - {name: echo, model: echo, description: Repeats.}\n"},
    "settings": {
        "adapters": ["openai", "a2a", "mcp"],
        "log_level": "debug",
        "drain_seconds": 15,
        "graceful_shutdown_seconds": 20,
        "max_body_bytes": 8388608,
        "cors_origins": ["https://app.example.com", "https://admin.example.com"],
        "access_log": False,
    },
    "apiKeys": {"keys": {"alice": "sk-alice-0123456789", "bob": "sk-bob-0123456789"}},
    "secretEnv": {
        "values": {"OPENAI_API_KEY": "sk-upstream", "OPENAI_BASE_URL": "http://llm:8080/v1"},
        "existingSecrets": ["more-model-keys"],
    },
    "extraEnv": [{"name": "OTEL_SERVICE_NAME", "value": "agenthost"}],
    "a2a": {"grpc": {"enabled": True, "port": 50051}},
    "service": {
        "type": "LoadBalancer",
        "annotations": {"example.com/lb": "internal"},
        "hosts": ["lb.example.com", "203.0.113.7"],
    },
    "ingress": {
        "enabled": True,
        "className": "nginx",
        "annotations": {"nginx.ingress.kubernetes.io/proxy-buffering": "off"},
        "hosts": [{"host": "agents.example.com", "paths": [{"path": "/", "pathType": "Prefix"}]}],
        "tls": [{"secretName": "agents-tls", "hosts": ["agents.example.com"]}],
    },
    "autoscaling": {
        "enabled": True,
        "minReplicas": 2,
        "maxReplicas": 6,
        "runsInFlight": {"enabled": True, "averageValue": 4},
    },
    "agentCode": {
        "files": {"my_agents.py": "def shout(text: str) -> str:\n    return text.upper()\n"}
    },
    "sessionStore": {"backend": "redis", "redis": {"existingSecret": "agenthost-redis"}},
    "a2aTaskStore": {
        "backend": "postgresql",
        "postgresql": {"url": "postgresql+asyncpg://agenthost:pw@postgres/agenthost"},
    },
    "podDisruptionBudget": {"enabled": True, "maxUnavailable": 1},
    "serviceAccount": {"annotations": {"example.com/role": "agents"}},
    "terminationGracePeriodSeconds": 60,
    "tmp": {"medium": "Memory"},
    "networkPolicy": {
        "enabled": True,
        "from": [{"namespaceSelector": {"matchLabels": {"name": "ingress-nginx"}}}],
        "egress": [{"ports": [{"port": 53, "protocol": "UDP"}, {"port": 443}]}],
    },
    "podAnnotations": {"example.com/scrape": "true"},
    "podLabels": {"team": "agents"},
    "nodeSelector": {"kubernetes.io/os": "linux"},
    "tolerations": [{"key": "agents", "operator": "Exists", "effect": "NoSchedule"}],
    "affinity": {
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 100,
                    "podAffinityTerm": {
                        "topologyKey": "kubernetes.io/hostname",
                        "labelSelector": {"matchLabels": {"app.kubernetes.io/name": "agenthost"}},
                    },
                }
            ]
        }
    },
    "topologySpreadConstraints": [
        {
            "maxSkew": 1,
            "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": {"app.kubernetes.io/name": "agenthost"}},
        }
    ],
    "priorityClassName": "agents",
}


def all_on() -> dict[str, Any]:
    """A fresh copy of :data:`ALL_ON` to change in a test."""
    return copy.deepcopy(ALL_ON)


def render_files(values: dict[str, Any] | None = None) -> dict[str, str]:
    """``helm template``: template path → rendered text (NOTES.txt included)."""
    with helm_python.Chart.load(CHART) as chart:
        return chart.render(values or {}, name=RELEASE, namespace=NAMESPACE, is_install=True)


def render(values: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The Kubernetes objects the chart renders with ``values``."""
    objects: list[dict[str, Any]] = []
    for path, text in sorted(render_files(values).items()):
        if path.endswith(".yaml"):
            objects += [doc for doc in yaml.safe_load_all(text) if doc]
    return objects


def one(objects: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    """The single object of ``kind`` (and ``name``, if given)."""
    found = [o for o in objects if o["kind"] == kind and name in (None, o["metadata"]["name"])]
    assert len(found) == 1, f"{len(found)} {kind} objects named {name}"
    return found[0]


def container(objects: list[dict[str, Any]]) -> dict[str, Any]:
    """The agenthost container of the Deployment."""
    pod = one(objects, "Deployment")["spec"]["template"]["spec"]
    (main,) = pod["containers"]
    result: dict[str, Any] = main
    return result


def env_of(main: dict[str, Any]) -> dict[str, str]:
    """The container's plain environment variables."""
    return {e["name"]: e["value"] for e in main.get("env", []) if "value" in e}
