"""The Helm chart: lint, render, validate against the Kubernetes schemas, and agree with the app."""

from __future__ import annotations

import itertools
import shlex
from pathlib import Path
from typing import Any

import helm_python
import kubernetes_validate
import pytest
import yaml

from agenthost.app.build import load_agents
from agenthost.app.principals import read_keys_file
from agenthost.app.server import PUBLIC_PATHS
from agenthost.app.settings import Settings, known_variables, unknown_variables
from tests.deploy.chart import (
    ALL_ON,
    CHART,
    all_on,
    container,
    env_of,
    one,
    render,
    render_files,
)

# Settings the chart sets that land with another branch (the A2A adapter's
# gRPC server). Empty this set once it is merged.
REPO = CHART.parents[2]
DEFAULTS: dict[str, Any] = {}
VARIANTS = pytest.mark.parametrize("values", [DEFAULTS, ALL_ON], ids=["defaults", "all-on"])


@VARIANTS
def test_helm_lint_finds_nothing_wrong(values: dict[str, Any]) -> None:
    report = helm_python.lint(CHART, values, strict=True)
    problems = [m for m in report["messages"] if m["severity"] >= 2]
    assert report["errors"] == [] and problems == []


@VARIANTS
def test_every_object_validates_against_the_kubernetes_schemas(values: dict[str, Any]) -> None:
    objects = render(values)
    # The newest Kubernetes, and the oldest the chart declares (kubeVersion).
    oldest = yaml.safe_load((CHART / "Chart.yaml").read_text())["kubeVersion"]
    assert oldest == ">=1.25.0-0"
    for version in (kubernetes_validate.latest_version(), "1.25.0"):
        for obj in objects:
            # strict: an unknown field (a typo in a template) is an error too.
            kubernetes_validate.validate(obj, version, strict=True)
    kinds = sorted(o["kind"] for o in objects)
    if values is ALL_ON:
        assert kinds == [
            "ConfigMap",
            "ConfigMap",  # the agents' Python modules
            "Deployment",
            "HorizontalPodAutoscaler",
            "Ingress",
            "Job",  # agenthost migrate, a pre-install and pre-upgrade hook
            "NetworkPolicy",
            "PodDisruptionBudget",
            "Secret",
            "Secret",
            "Secret",  # the stores' URLs
            "Secret",  # the PostgreSQL URL for the hook, made before the release's objects
            "Service",
            "ServiceAccount",
        ]
    else:
        assert kinds == ["ConfigMap", "Deployment", "Service", "ServiceAccount"]


def test_a_template_mistake_would_fail_the_schema_check() -> None:
    deployment = one(render(), "Deployment")
    deployment["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, kubernetes_validate.latest_version(), strict=True)


@VARIANTS
def test_probes_and_ports_are_the_apps(values: dict[str, Any]) -> None:
    objects = render(values)
    main = container(objects)
    ports = {p["name"]: p["containerPort"] for p in main["ports"]}
    assert int(env_of(main)["AGENTHOST_PORT"]) == ports["http"] == 8000
    assert main["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert main["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert main["startupProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    # The probes need no API key, and the startup probe waits minutes for a local model.
    assert {"/healthz", "/readyz"} <= set(PUBLIC_PATHS)
    startup = main["startupProbe"]
    assert startup["periodSeconds"] * startup["failureThreshold"] >= 120
    service = one(objects, "Service")
    assert {p["name"]: p["targetPort"] for p in service["spec"]["ports"]}["http"] == "http"


def test_the_grpc_port_reaches_the_service_and_the_a2a_setting() -> None:
    objects = render(ALL_ON)
    main = container(objects)
    env = env_of(main)
    grpc = next(p for p in main["ports"] if p["name"] == "grpc")
    assert env["AGENTHOST_A2A_GRPC_PORT"] == str(grpc["containerPort"]) == "50051"
    assert env["AGENTHOST_A2A_GRPC_HOST"] == "0.0.0.0"
    service_ports = one(objects, "Service")["spec"]["ports"]
    assert {"name": "grpc", "port": 50051, "targetPort": "grpc"}.items() <= service_ports[1].items()
    assert not any(p["name"] == "grpc" for p in container(render())["ports"])
    assert "AGENTHOST_A2A_GRPC_PORT" not in env_of(container(render()))


@VARIANTS
def test_the_grace_period_outlasts_the_drain_and_the_graceful_shutdown(
    values: dict[str, Any],
) -> None:
    objects = render(values)
    env = env_of(container(objects))
    pod = one(objects, "Deployment")["spec"]["template"]["spec"]
    needed = float(env["AGENTHOST_DRAIN_SECONDS"]) + float(
        env["AGENTHOST_GRACEFUL_SHUTDOWN_SECONDS"]
    )
    assert float(env["AGENTHOST_DRAIN_SECONDS"]) > 0
    assert pod["terminationGracePeriodSeconds"] > needed


def test_a_grace_period_too_short_for_the_drain_is_refused() -> None:
    values = all_on()
    values["terminationGracePeriodSeconds"] = 35  # = 15 drain + 20 graceful
    with pytest.raises(helm_python.HelmError, match="must exceed"):
        render(values)


def test_rollouts_keep_every_pod_until_its_successor_is_ready() -> None:
    strategy = one(render(), "Deployment")["spec"]["strategy"]
    assert strategy == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1},
    }


@VARIANTS
def test_the_container_runs_as_non_root_on_a_read_only_root(values: dict[str, Any]) -> None:
    objects = render(values)
    pod = one(objects, "Deployment")["spec"]["template"]["spec"]
    main = container(objects)
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] == 10001  # the Dockerfile's user
    assert main["securityContext"]["readOnlyRootFilesystem"] is True
    assert main["securityContext"]["allowPrivilegeEscalation"] is False
    assert main["securityContext"]["capabilities"]["drop"] == ["ALL"]
    # The one writable place is an emptyDir, and TMPDIR names it.
    mounts = {m["mountPath"]: m for m in main["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert "emptyDir" in volumes[mounts["/tmp"]["name"]]
    assert env_of(main)["TMPDIR"] == "/tmp"
    assert all(m.get("readOnly") for path, m in mounts.items() if path != "/tmp")
    assert pod["automountServiceAccountToken"] is False


def _mounted_file(objects: list[dict[str, Any]], path: str) -> tuple[str, str]:
    """The (volume kind, key) a container path comes from."""
    main = container(objects)
    pod = one(objects, "Deployment")["spec"]["template"]["spec"]
    folder, _, filename = path.rpartition("/")
    (mount,) = [m for m in main["volumeMounts"] if m["mountPath"] == folder]
    volume = next(v for v in pod["volumes"] if v["name"] == mount["name"])
    source = volume.get("configMap") or volume["secret"]
    (item,) = [i for i in source["items"] if i["path"] == filename]
    return source.get("name") or source["secretName"], item["key"]


@VARIANTS
def test_the_agents_file_is_where_agenthost_config_points(
    values: dict[str, Any], tmp_path: Path
) -> None:
    objects = render(values)
    configmap_name, key = _mounted_file(objects, env_of(container(objects))["AGENTHOST_CONFIG"])
    configmap = one(objects, "ConfigMap", configmap_name)
    # The file the pod gets is one the app loads.
    (tmp_path / key).write_text(configmap["data"][key])
    _, registry = load_agents(tmp_path / key)
    expected = ["echo"] if values is ALL_ON else ["echo", "assistant"]
    assert list(registry) == expected


def test_an_existing_configmap_replaces_the_charts() -> None:
    objects = render({"config": {"existingConfigMap": "my-agents", "key": "prod.yaml"}})
    assert not [o for o in objects if o["kind"] == "ConfigMap"]
    env = env_of(container(objects))
    assert _mounted_file(objects, env["AGENTHOST_CONFIG"]) == ("my-agents", "prod.yaml")


def test_the_api_keys_secret_becomes_the_keys_file(tmp_path: Path) -> None:
    objects = render(ALL_ON)
    env = env_of(container(objects))
    secret_name, key = _mounted_file(objects, env["AGENTHOST_API_KEYS_FILE"])
    secret = one(objects, "Secret", secret_name)
    keys_file = tmp_path / key
    keys_file.write_text(secret["stringData"][key])
    assert Settings(api_keys_file=keys_file).principals() == {
        "sk-alice-0123456789": "alice",
        "sk-bob-0123456789": "bob",
    }
    assert read_keys_file(keys_file) == ["alice:sk-alice-0123456789", "bob:sk-bob-0123456789"]
    # No keys: no Secret, no keys file, auth off.
    assert "AGENTHOST_API_KEYS_FILE" not in env_of(container(render()))


def test_an_existing_api_keys_secret_is_mounted_instead() -> None:
    objects = render({"apiKeys": {"existingSecret": "prod-keys", "secretKey": "keys.txt"}})
    assert not [o for o in objects if o["kind"] == "Secret"]
    env = env_of(container(objects))
    assert _mounted_file(objects, env["AGENTHOST_API_KEYS_FILE"]) == ("prod-keys", "keys.txt")


def test_model_keys_reach_the_environment_from_secrets() -> None:
    objects = render(ALL_ON)
    main = container(objects)
    refs = [source["secretRef"]["name"] for source in main["envFrom"]]
    assert refs == ["demo-agenthost-env", "more-model-keys"]
    secret = one(objects, "Secret", "demo-agenthost-env")
    assert secret["stringData"] == {
        "OPENAI_API_KEY": "sk-upstream",
        "OPENAI_BASE_URL": "http://llm:8080/v1",
    }
    # Secrets never appear as plain values in the pod spec.
    assert "sk-upstream" not in yaml.safe_dump(one(objects, "Deployment"))


@VARIANTS
def test_every_agenthost_variable_is_a_setting_the_app_reads(values: dict[str, Any]) -> None:
    env = env_of(container(render(values)))
    fields = set(known_variables())  # the process's settings and each protocol's
    assert unknown_variables(env) == []  # what the app warns of at start
    # And the app accepts their values (paths aside, which exist only in the pod).
    known = {k[len("AGENTHOST_") :].lower(): v for k, v in env.items() if k in fields}
    known.pop("api_keys_file", None)
    settings = Settings(**known)  # type: ignore[arg-type]
    assert settings.port == 8000 and settings.host == "0.0.0.0"
    if values is ALL_ON:
        assert settings.adapters == ["openai", "a2a", "mcp"]
        assert settings.cors_origins == ["https://app.example.com", "https://admin.example.com"]
        assert settings.max_body_bytes == 8388608 and settings.access_log is False
        assert settings.workers == "auto"


@pytest.mark.parametrize(
    ("values", "error"),
    [
        ({"settings": {"port": 9000}}, "propertyName 'port'"),
        ({"settings": {"adapters": ["smtp"]}}, "/settings/adapters/0"),
        ({"sessionStore": {"backend": "mongodb"}}, "/sessionStore/backend"),
        ({"sessionStore": {"backend": "redis"}}, "needs sessionStore.redis.existingSecret or"),
        ({"replicaCount": 2}, "needs sessionStore.backend: redis: with memory each pod"),
        ({"autoscaling": {"enabled": True}}, "needs sessionStore.backend: redis"),
        (
            {
                "replicaCount": 2,
                "sessionStore": {"backend": "redis", "redis": {"url": "redis://r:6379/0"}},
            },
            "with the a2a adapter needs a2aTaskStore.backend: postgresql",
        ),
        ({"apiKeys": {"keys": {"alice": "has space"}}}, "/apiKeys/keys/alice"),
        ({"workers": 2}, "workers other than 1 needs sessionStore.backend: redis"),
        ({"workers": "auto"}, "workers other than 1 needs sessionStore.backend: redis"),
        ({"workers": 0}, "/workers"),
        ({"replicas": 2}, "'replicas' not allowed"),
    ],
)
def test_values_the_app_cannot_use_are_refused(values: dict[str, Any], error: str) -> None:
    with pytest.raises(helm_python.HelmError, match=error):
        render(values)


def test_grpc_without_the_a2a_adapter_is_refused() -> None:
    with pytest.raises(helm_python.HelmError, match="a2a"):
        render({"a2a": {"grpc": {"enabled": True}}, "settings": {"adapters": ["openai"]}})


def test_the_notes_say_where_each_protocol_is() -> None:
    notes = render_files(ALL_ON)["agenthost/templates/NOTES.txt"]
    assert "https://agents.example.com/v1" in notes
    assert "https://agents.example.com/a2a/AGENT" in notes
    assert "https://agents.example.com/mcp" in notes
    assert "demo-agenthost.agents.svc:50051" in notes
    assert "Sessions: in Redis, shared by every replica" in notes
    assert "A2A tasks: in PostgreSQL, shared by every replica" in notes
    default = render_files()["agenthost/templates/NOTES.txt"]
    assert "port-forward svc/demo-agenthost 8000:80" in default
    assert "Auth is OFF" in default
    assert all(path in default for path in ("/v1", "/a2a/AGENT", "/mcp", "/acp", "/v1/messages"))


def test_the_chart_readme_documents_every_value() -> None:
    readme = (CHART / "README.md").read_text()
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    missing = [key for key in values if f"`{key}" not in readme]
    assert missing == []


def _readme_install_values(readme: Path) -> dict[str, Any]:
    """The values of the README's ``helm install`` command, as Helm parses them."""
    text = readme.read_text().replace("\\\n", " ")
    (command,) = [line for line in text.splitlines() if line.startswith("helm install agents")]
    words = shlex.split(command.replace("$OPENAI_API_KEY", "sk-from-env"))
    values: dict[str, Any] = {}
    for flag, argument in itertools.pairwise(words):
        if flag == "--set":
            _merge(values, helm_python.parse_set_string(argument))
        elif flag == "--set-file":
            key, _, path = argument.partition("=")
            _merge(values, _nested(key.split("."), (REPO / path).read_text()))
    return values


def _nested(keys: list[str], value: Any) -> dict[str, Any]:
    return {keys[0]: _nested(keys[1:], value) if len(keys) > 1 else value}


def _merge(into: dict[str, Any], more: dict[str, Any]) -> None:
    for key, value in more.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


@pytest.mark.parametrize(
    "readme", [REPO / "docs" / "deploy.md", CHART / "README.md"], ids=["docs", "chart"]
)
def test_the_readmes_helm_install_command_works(readme: Path, tmp_path: Path) -> None:
    values = _readme_install_values(readme)
    objects = render(values)
    for obj in objects:
        kubernetes_validate.validate(obj, kubernetes_validate.latest_version(), strict=True)
    config = one(objects, "ConfigMap")["data"]["agents.yaml"]
    assert config == (REPO / "config" / "agents.yaml").read_text()
    secret = one(objects, "Secret", "demo-agenthost-env")
    assert secret["stringData"]["OPENAI_API_KEY"] == "sk-from-env"
    assert container(objects)["image"].startswith("registry.example.com/agenthost:")


def test_every_protocol_is_served_by_default_like_compose() -> None:
    env = env_of(container(render()))
    assert Settings(adapters=env["AGENTHOST_ADAPTERS"]).adapters == Settings().adapters  # type: ignore[arg-type]
    assert env["AGENTHOST_ADAPTERS"] == "openai,a2a,mcp,acp,ag_ui,ai_sdk,anthropic,orchestrate"


def test_mcp_accepts_the_ingress_hosts_and_the_services_names() -> None:
    values = all_on()
    values["ingress"]["hosts"].append(
        {"host": "mcp.example.org", "paths": [{"path": "/", "pathType": "Prefix"}]}
    )
    values["settings"]["mcp_allowed_hosts"] = ["extra.example.net"]
    env = env_of(container(render(values)))
    hosts = Settings(mcp_allowed_hosts=env["AGENTHOST_MCP_ALLOWED_HOSTS"]).protocol("mcp")
    hosts = hosts.allowed_hosts  # type: ignore[attr-defined]
    assert hosts == [
        "demo-agenthost",
        "demo-agenthost.agents",
        "demo-agenthost.agents.svc",
        "demo-agenthost.agents.svc.cluster.local",
        "agents.example.com",
        "mcp.example.org",
        "lb.example.com",  # service.hosts: the LoadBalancer's names
        "203.0.113.7",
        "extra.example.net",
    ]
    # Without an ingress, in-cluster clients still reach /mcp through the Service.
    default = env_of(container(render()))["AGENTHOST_MCP_ALLOWED_HOSTS"]
    assert default.split(",")[-1] == "demo-agenthost.agents.svc.cluster.local"


def test_every_surface_accepts_the_ingress_hosts_the_services_names_and_the_pod_ip() -> None:
    values = all_on()
    values["ingress"]["hosts"].append(
        {"host": "mcp.example.org", "paths": [{"path": "/", "pathType": "Prefix"}]}
    )
    values["settings"]["allowed_hosts"] = ["extra.example.net"]
    rendered = container(render(values))
    env = env_of(rendered)
    hosts = Settings(allowed_hosts=env["AGENTHOST_ALLOWED_HOSTS"]).allowed_hosts  # type: ignore[arg-type]
    assert hosts == [
        "demo-agenthost",
        "demo-agenthost.agents",
        "demo-agenthost.agents.svc",
        "demo-agenthost.agents.svc.cluster.local",
        "agents.example.com",
        "mcp.example.org",
        "lb.example.com",
        "203.0.113.7",
        "$(AGENTHOST_POD_IP)",
        "extra.example.net",
    ]
    # Kubernetes expands $(AGENTHOST_POD_IP) only from an entry listed before it.
    names = [entry["name"] for entry in rendered["env"]]
    assert names.index("AGENTHOST_POD_IP") < names.index("AGENTHOST_ALLOWED_HOSTS")
    pod_ip = next(entry for entry in rendered["env"] if entry["name"] == "AGENTHOST_POD_IP")
    assert pod_ip["valueFrom"] == {"fieldRef": {"fieldPath": "status.podIP"}}
    # Without an ingress: the Service's names and the pod's IP.
    default = env_of(container(render()))["AGENTHOST_ALLOWED_HOSTS"]
    assert default.split(",")[-2:] == [
        "demo-agenthost.agents.svc.cluster.local",
        "$(AGENTHOST_POD_IP)",
    ]


def test_a2a_cards_name_the_ingress_host() -> None:
    assert env_of(container(render(ALL_ON)))["AGENTHOST_A2A_PUBLIC_URL"] == (
        "https://agents.example.com"
    )
    values = all_on()
    values["ingress"]["tls"] = []
    assert env_of(container(render(values)))["AGENTHOST_A2A_PUBLIC_URL"] == (
        "http://agents.example.com"
    )
    values["settings"]["a2a_public_url"] = "https://public.example.org/ai"
    env = env_of(container(render(values)))
    assert env["AGENTHOST_A2A_PUBLIC_URL"] == "https://public.example.org/ai"
    # No ingress: cards take the URL from each request.
    assert "AGENTHOST_A2A_PUBLIC_URL" not in env_of(container(render()))


def test_settings_of_every_kind_render_as_the_app_reads_them() -> None:
    # Helm < 3.9 evaluated each argument of `and`: `floor` of a string or a bool
    # broke the render. Each kind next to a whole and a fractional number.
    values = {
        "settings": {
            "log_level": "debug",
            "access_log": False,
            "max_body_bytes": 8388608,
            "session_ttl": 1.5,
            "cors_origins": ["https://a.example.com"],
        }
    }
    env = env_of(container(render(values)))
    assert env["AGENTHOST_ACCESS_LOG"] == "false"
    assert env["AGENTHOST_MAX_BODY_BYTES"] == "8388608"
    assert env["AGENTHOST_SESSION_TTL"] == "1.5"
    assert env["AGENTHOST_CORS_ORIGINS"] == "https://a.example.com"


def test_the_network_policy_admits_the_service_ports_only() -> None:
    assert not [o for o in render() if o["kind"] == "NetworkPolicy"]
    policy = one(render(ALL_ON), "NetworkPolicy")["spec"]
    assert policy["podSelector"]["matchLabels"]["app.kubernetes.io/instance"] == "demo"
    assert policy["policyTypes"] == ["Ingress", "Egress"]
    (rule,) = policy["ingress"]
    assert [p["port"] for p in rule["ports"]] == ["http", "grpc"]
    assert rule["from"] == ALL_ON["networkPolicy"]["from"]
    assert policy["egress"] == ALL_ON["networkPolicy"]["egress"]


def test_the_minimum_helm_version_is_stated_and_checked() -> None:
    helpers = (CHART / "templates" / "_helpers.tpl").read_text()
    assert 'semverCompare ">=3.8.0-0" .Capabilities.HelmVersion.Version' in helpers
    assert "Helm 3.8 or newer" in (CHART / "README.md").read_text()
    assert "eq . (floor .)" not in helpers.replace("if eq . (floor .)", "")


def test_the_playground_is_off_unless_asked_for() -> None:
    assert env_of(container(render()))["AGENTHOST_PLAYGROUND"] == "false"
    on = env_of(container(render({"settings": {"playground": True}})))
    assert on["AGENTHOST_PLAYGROUND"] == "true"
    assert Settings(playground=on["AGENTHOST_PLAYGROUND"]).playground is True  # type: ignore[arg-type]


def _secret_ref(objects: list[dict[str, Any]], name: str) -> dict[str, Any]:
    (variable,) = [v for v in container(objects)["env"] if v["name"] == name]
    ref: dict[str, Any] = variable["valueFrom"]["secretKeyRef"]
    return ref


def test_shared_stores_reach_the_app_from_secrets() -> None:
    objects = render(ALL_ON)
    # An existing Secret for Redis, the chart's own for PostgreSQL.
    assert _secret_ref(objects, "AGENTHOST_SESSION_STORE") == {
        "name": "agenthost-redis",
        "key": "url",
    }
    assert _secret_ref(objects, "AGENTHOST_A2A_TASK_STORE") == {
        "name": "demo-agenthost-stores",
        "key": "a2a-task-store",
    }
    secrets = [
        o for o in objects if o["kind"] == "Secret" and o["metadata"]["name"].endswith("-stores")
    ]
    assert secrets[0]["stringData"] == {
        "a2a-task-store": "postgresql+asyncpg://agenthost:pw@postgres/agenthost"
    }
    settings = Settings(
        session_store="redis://r:6379/0",
        a2a_task_store=secrets[0]["stringData"]["a2a-task-store"],
    )
    assert settings.session_store.startswith("redis://")


def test_one_replica_keeps_the_in_memory_stores() -> None:
    objects = render({})
    names = {v["name"] for v in container(objects)["env"]}
    assert not names & {"AGENTHOST_SESSION_STORE", "AGENTHOST_A2A_TASK_STORE"}
    notes = render_files()["agenthost/templates/NOTES.txt"]
    assert "Sessions: in each pod's memory" in notes


def test_the_ingress_turns_response_buffering_off_for_streams() -> None:
    values = {"ingress": {"enabled": True}}
    annotations = one(render(values), "Ingress")["metadata"]["annotations"]
    assert annotations["nginx.ingress.kubernetes.io/proxy-buffering"] == "off"
