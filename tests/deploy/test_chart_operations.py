"""The chart's operating options: PDB, HPA metrics, ingress annotations, scraper auth,
LoadBalancer hosts, agents' Python code, the migration Job, managed stores. Each rendered, linted
and validated."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import helm_python
import kubernetes_validate
import pytest
import yaml

from agenthost.adapters.mcp.settings import Settings as MCPSettings
from agenthost.app.build import load_agents
from agenthost.app.settings import Settings
from tests.deploy.chart import CHART, all_on, container, env_of, one, render

SCALED = {
    "sessionStore": {"backend": "redis", "redis": {"url": "redis://r:6379/0"}},
    "a2aTaskStore": {"backend": "postgresql", "postgresql": {"url": "postgresql+asyncpg://p/a"}},
}


def checked(values: dict[str, Any]) -> list[dict[str, Any]]:
    """Render ``values`` after ``helm lint --strict``; every built-in kind schema-validated."""
    report = helm_python.lint(CHART, values, strict=True)
    assert report["errors"] == [] and not [m for m in report["messages"] if m["severity"] >= 2]
    objects = render(values)
    for obj in objects:
        if obj["kind"] != "ServiceMonitor":  # a CRD: no schema in kubernetes-validate
            kubernetes_validate.validate(obj, kubernetes_validate.latest_version(), strict=True)
    return objects


def kinds(objects: list[dict[str, Any]]) -> list[str]:
    return [o["kind"] for o in objects]


# --- PodDisruptionBudget ---


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({}, False),
        ({"replicaCount": 2, **SCALED}, True),
        ({"autoscaling": {"enabled": True}, **SCALED}, True),
        ({"replicaCount": 2, **SCALED, "podDisruptionBudget": {"enabled": False}}, False),
        ({"podDisruptionBudget": {"enabled": True}}, True),
    ],
    ids=["one-pod", "replicas", "autoscaling", "forced-off", "forced-on"],
)
def test_a_pdb_comes_with_more_than_one_pod(values: dict[str, Any], expected: bool) -> None:
    objects = checked(values)
    assert ("PodDisruptionBudget" in kinds(objects)) is expected
    if expected:
        pdb = one(objects, "PodDisruptionBudget")["spec"]
        assert pdb["maxUnavailable"] == 1
        pod_labels = one(objects, "Deployment")["spec"]["template"]["metadata"]["labels"]
        assert pdb["selector"]["matchLabels"].items() <= pod_labels.items()


# --- HorizontalPodAutoscaler ---


def test_the_hpa_scales_on_cpu_by_default() -> None:
    hpa = one(checked({"autoscaling": {"enabled": True}, **SCALED}), "HorizontalPodAutoscaler")
    (metric,) = hpa["spec"]["metrics"]
    assert metric["resource"] == {
        "name": "cpu",
        "target": {"type": "Utilization", "averageUtilization": 70},
    }


def test_the_hpa_can_scale_on_runs_in_flight_beside_or_instead_of_cpu() -> None:
    values: dict[str, Any] = {
        "autoscaling": {"enabled": True, "runsInFlight": {"enabled": True, "averageValue": 4}},
        **SCALED,
    }
    metrics = one(checked(values), "HorizontalPodAutoscaler")["spec"]["metrics"]
    assert [m["type"] for m in metrics] == ["Resource", "Pods"]
    assert metrics[1]["pods"] == {
        "metric": {"name": "agenthost_active_runs"},
        "target": {"type": "AverageValue", "averageValue": "4"},
    }
    values["autoscaling"]["targetCPUUtilizationPercentage"] = None
    metrics = one(checked(values), "HorizontalPodAutoscaler")["spec"]["metrics"]
    assert [m["type"] for m in metrics] == ["Pods"]


def test_the_hpa_metric_is_one_the_app_exports() -> None:
    from prometheus_client import generate_latest

    from agenthost.app.metrics import Metrics

    exported = generate_latest(Metrics(agents=["echo"]).registry).decode()
    name = yaml.safe_load((CHART / "values.yaml").read_text())["autoscaling"]["runsInFlight"]
    assert f"# TYPE {name['metricName']} gauge" in exported
    # The README's prometheus-adapter rule serves that gauge, summed over its labels per pod.
    readme = (CHART / "README.md").read_text()
    block = readme.split("```yaml\nrules:", 1)[1].split("```", 1)[0]
    (rule,) = yaml.safe_load("rules:" + block)["rules"]["custom"]
    assert rule["seriesQuery"].startswith(name["metricName"] + "{")
    assert rule["resources"]["overrides"]["pod"] == {"resource": "pod"}
    assert rule["metricsQuery"].startswith("sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)")


def test_an_hpa_without_a_metric_is_refused() -> None:
    values = {"autoscaling": {"enabled": True, "targetCPUUtilizationPercentage": None}, **SCALED}
    with pytest.raises(helm_python.HelmError, match="autoscaling needs a metric"):
        render(values)


# --- Ingress ---


def test_the_ingress_lets_streams_run_and_bodies_reach_the_app() -> None:
    annotations = one(checked({"ingress": {"enabled": True}}), "Ingress")["metadata"]["annotations"]
    prefix = "nginx.ingress.kubernetes.io/"
    assert annotations[prefix + "proxy-buffering"] == "off"
    assert int(annotations[prefix + "proxy-read-timeout"]) >= 3600
    assert int(annotations[prefix + "proxy-send-timeout"]) >= 3600
    # Above the app's own bound, so the app (not the controller) refuses a big body.
    assert int(annotations[prefix + "proxy-body-size"]) > Settings().max_body_bytes
    bigger = {"ingress": {"enabled": True}, "settings": {"max_body_bytes": 16777216}}
    annotations = one(render(bigger), "Ingress")["metadata"]["annotations"]
    assert int(annotations[prefix + "proxy-body-size"]) > 16777216


def test_ingress_annotations_of_your_own_win_and_others_controllers_can_go_without() -> None:
    values: dict[str, Any] = {
        "ingress": {
            "enabled": True,
            "annotations": {"nginx.ingress.kubernetes.io/proxy-read-timeout": "7200", "a/b": "c"},
        }
    }
    annotations = one(checked(values), "Ingress")["metadata"]["annotations"]
    assert annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"] == "7200"
    assert annotations["a/b"] == "c"
    values["ingress"]["nginxAnnotations"] = False
    annotations = one(checked(values), "Ingress")["metadata"]["annotations"]
    assert annotations == values["ingress"]["annotations"]


# --- ServiceMonitor ---


def test_the_service_monitor_can_send_an_api_key() -> None:
    monitor = {"enabled": True, "bearerTokenSecret": {"name": "scraper", "key": "api-key"}}
    objects = checked({"metrics": {"serviceMonitor": monitor}})
    (endpoint,) = one(objects, "ServiceMonitor")["spec"]["endpoints"]
    assert endpoint["authorization"] == {
        "type": "Bearer",
        "credentials": {"name": "scraper", "key": "api-key"},
    }
    plain = checked({"metrics": {"serviceMonitor": {"enabled": True}}})
    assert "authorization" not in one(plain, "ServiceMonitor")["spec"]["endpoints"][0]


# --- LoadBalancer ---


def test_a_load_balancers_names_are_allowed_hosts() -> None:
    values = {"service": {"type": "LoadBalancer", "hosts": ["agents.example.com", "203.0.113.7"]}}
    env = env_of(container(checked(values)))
    allowed = Settings(allowed_hosts=env["AGENTHOST_ALLOWED_HOSTS"]).allowed_hosts  # type: ignore[arg-type]
    assert {"agents.example.com", "203.0.113.7"} <= set(allowed)
    mcp = MCPSettings(allowed_hosts=env["AGENTHOST_MCP_ALLOWED_HOSTS"]).allowed_hosts  # type: ignore[arg-type]
    assert {"agents.example.com", "203.0.113.7"} <= set(mcp)


def test_a_load_balancer_without_its_names_is_refused() -> None:
    with pytest.raises(helm_python.HelmError, match=r"service\.hosts"):
        render({"service": {"type": "LoadBalancer"}})


# --- Python code of import: agents ---

MODULE = "def shout(text: str) -> str:\n    return text.upper() + '!'\n"


def test_agent_modules_from_values_are_mounted_on_pythonpath(tmp_path: Path) -> None:
    agents = "agents:\n  - {name: shout, import: 'loud_agents:shout'}\n"
    values = {"agentCode": {"files": {"loud_agents.py": MODULE}}, "config": {"agents": agents}}
    objects = checked(values)
    main = container(objects)
    assert env_of(main)["PYTHONPATH"] == "/etc/agenthost/python"
    (mount,) = [m for m in main["volumeMounts"] if m["mountPath"] == "/etc/agenthost/python"]
    assert mount["readOnly"] is True
    pod = one(objects, "Deployment")["spec"]["template"]
    volume = next(v for v in pod["spec"]["volumes"] if v["name"] == mount["name"])
    code = one(objects, "ConfigMap", volume["configMap"]["name"])
    assert "checksum/code" in pod["metadata"]["annotations"]
    # What the pod would see loads as an agent (a fresh module name: no import cache).
    (tmp_path / "code").mkdir()
    for name, source in code["data"].items():
        (tmp_path / "code" / name).write_text(source)
    (tmp_path / "agents.yaml").write_text(
        one(objects, "ConfigMap", "demo-agenthost")["data"]["agents.yaml"]
    )
    import sys

    sys.path.insert(0, str(tmp_path / "code"))
    try:
        _, registry = load_agents(tmp_path / "agents.yaml")
    finally:
        sys.path.remove(str(tmp_path / "code"))
        sys.modules.pop("loud_agents", None)
    assert list(registry) == ["shout"]


@pytest.mark.parametrize(
    ("code", "source"),
    [
        ({"existingConfigMap": "my-code"}, {"configMap": {"name": "my-code"}}),
        (
            {"volume": {"persistentVolumeClaim": {"claimName": "agents-code"}}},
            {"persistentVolumeClaim": {"claimName": "agents-code"}},
        ),
    ],
    ids=["configmap", "volume"],
)
def test_agent_code_can_come_from_your_configmap_or_any_volume(
    code: dict[str, Any], source: dict[str, Any]
) -> None:
    objects = checked({"agentCode": code})
    pod = one(objects, "Deployment")["spec"]["template"]["spec"]
    (volume,) = [v for v in pod["volumes"] if v["name"] == "agent-code"]
    assert {k: v for k, v in volume.items() if k != "name"} == source
    assert env_of(container(objects))["PYTHONPATH"] == "/etc/agenthost/python"
    assert kinds(objects).count("ConfigMap") == 1  # the agents file's only


def test_no_agent_code_no_pythonpath_and_two_sources_are_refused() -> None:
    assert "PYTHONPATH" not in env_of(container(render()))
    with pytest.raises(helm_python.HelmError, match="one of files, existingConfigMap or volume"):
        render({"agentCode": {"files": {"a.py": "x = 1\n"}, "existingConfigMap": "b"}})
    with pytest.raises(helm_python.HelmError, match=r"invalid propertyName .not a module\.txt"):
        render({"agentCode": {"files": {"not a module.txt": ""}}})


# --- The migration Job (a Helm hook) ---

HOOK = {
    "helm.sh/hook": "pre-install,pre-upgrade",
    "helm.sh/hook-delete-policy": "before-hook-creation,hook-succeeded",
}


def hook_weight(obj: dict[str, Any]) -> int:
    annotations = obj["metadata"]["annotations"]
    assert annotations.items() >= HOOK.items()
    return int(annotations["helm.sh/hook-weight"])


def test_a_migration_job_runs_agenthost_migrate_before_install_and_upgrade(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    objects = checked({"replicaCount": 2, **SCALED})
    job = one(objects, "Job")
    assert job["metadata"]["name"] == "demo-agenthost-migrate"
    pod = job["spec"]["template"]["spec"]
    (main,) = pod["containers"]
    assert main["command"] == ["agenthost", "migrate"]
    assert main["image"] == container(objects)["image"]
    # Hooks run before the release's objects exist: not the chart's ServiceAccount, no
    # agents file, and the URL from a Secret that is itself a hook, made before the Job.
    assert "serviceAccountName" not in pod and pod["automountServiceAccountToken"] is False
    assert pod["restartPolicy"] == "Never"
    assert not [m for m in main["volumeMounts"] if m["mountPath"].startswith("/etc/agenthost")]
    (url,) = [e for e in main["env"] if e["name"] == "AGENTHOST_A2A_TASK_STORE"]
    ref = url["valueFrom"]["secretKeyRef"]
    secret = one(objects, "Secret", ref["name"])
    assert secret["stringData"][ref["key"]] == SCALED["a2aTaskStore"]["postgresql"]["url"]
    assert hook_weight(secret) < hook_weight(job)
    # The pod is no Service's or PDB's: it lacks the Deployment's selector labels.
    selector = one(objects, "Service")["spec"]["selector"]
    assert not selector.items() <= job["spec"]["template"]["metadata"]["labels"].items()
    # The same limits as the app's pods: non-root, read-only root, a writable /tmp.
    assert main["securityContext"] == container(objects)["securityContext"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert {"name": "TMPDIR", "value": "/tmp"} in main["env"]
    # The command is one the CLI has, reading the variable the Job sets.
    from agenthost.app.cli import main as agenthost

    monkeypatch.setenv("AGENTHOST_A2A_TASK_STORE", "memory")
    assert agenthost(main["command"][1:]) == 0


def test_the_migration_job_reads_your_secret_when_you_have_one() -> None:
    values = yaml.safe_load((CHART / "values-managed.yaml").read_text())
    objects = checked(values)
    main = one(objects, "Job")["spec"]["template"]["spec"]["containers"][0]
    ref = next(e for e in main["env"] if e["name"] == "AGENTHOST_A2A_TASK_STORE")
    store = values["a2aTaskStore"]["postgresql"]
    assert ref["valueFrom"]["secretKeyRef"] == {
        "name": store["existingSecret"],
        "key": store["secretKey"],
    }
    assert not [o for o in objects if o["kind"] == "Secret"]  # no hook Secret either


@pytest.mark.parametrize(
    "values",
    [
        {},
        {**SCALED, "migrations": {"enabled": False}},
        {
            "replicaCount": 2,
            "sessionStore": SCALED["sessionStore"],
            "settings": {"adapters": ["openai"]},
        },
    ],
    ids=["defaults", "turned-off", "redis-only"],
)
def test_no_migration_job_without_postgresql_or_when_turned_off(values: dict[str, Any]) -> None:
    objects = checked(values)
    assert "Job" not in kinds(objects)
    assert not [o for o in objects if "helm.sh/hook" in o["metadata"].get("annotations", {})]


# --- Managed Redis and PostgreSQL ---


def test_the_managed_stores_example_renders_and_validates() -> None:
    values = yaml.safe_load((CHART / "values-managed.yaml").read_text())
    objects = checked(values)
    refs = {
        v["name"]: v["valueFrom"]["secretKeyRef"]
        for v in container(objects)["env"]
        if v["name"] in ("AGENTHOST_SESSION_STORE", "AGENTHOST_A2A_TASK_STORE")
    }
    assert (
        refs["AGENTHOST_SESSION_STORE"]["name"] == values["sessionStore"]["redis"]["existingSecret"]
    )
    assert (
        refs["AGENTHOST_A2A_TASK_STORE"]["name"]
        == (values["a2aTaskStore"]["postgresql"]["existingSecret"])
    )
    assert "PodDisruptionBudget" in kinds(objects) and "HorizontalPodAutoscaler" in kinds(objects)
    assert "Job" in kinds(objects)  # agenthost migrate, before the pods
    # No store URL (a password) is in the chart's output: the Secrets are the operator's.
    assert not [o for o in objects if o["kind"] == "Secret"]


def test_all_on_still_renders_every_new_option() -> None:
    objects = checked(all_on())
    assert "PYTHONPATH" in env_of(container(objects))
    assert [m["type"] for m in one(objects, "HorizontalPodAutoscaler")["spec"]["metrics"]] == [
        "Resource",
        "Pods",
    ]
