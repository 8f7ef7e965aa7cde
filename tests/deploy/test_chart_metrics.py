"""The chart's scraping options: pod annotations and a ServiceMonitor, both off by default."""

from __future__ import annotations

import helm_python
import kubernetes_validate

from tests.deploy.chart import CHART, all_on, one, render

ON = {"scrapeAnnotations": True, "serviceMonitor": {"enabled": True, "labels": {"release": "kps"}}}


def test_scraping_is_off_by_default() -> None:
    objects = render()
    assert not [o for o in objects if o["kind"] == "ServiceMonitor"]
    annotations = one(objects, "Deployment")["spec"]["template"]["metadata"]["annotations"]
    assert not any(key.startswith("prometheus.io/") for key in annotations)


def test_annotations_and_a_service_monitor_point_at_metrics() -> None:
    values = {**all_on(), "metrics": ON}
    report = helm_python.lint(CHART, values, strict=True)
    assert report["errors"] == [] and not [m for m in report["messages"] if m["severity"] >= 2]
    objects = render(values)
    pod = one(objects, "Deployment")["spec"]["template"]
    annotations = pod["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert annotations["prometheus.io/path"] == "/metrics"
    (port,) = [p for p in pod["spec"]["containers"][0]["ports"] if p["name"] == "http"]
    assert annotations["prometheus.io/port"] == str(port["containerPort"])
    monitor = one(objects, "ServiceMonitor")
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["metadata"]["labels"]["release"] == "kps"
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint == {"port": "http", "path": "/metrics", "interval": "30s"}
    service = one(objects, "Service")
    assert (
        monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    )
    assert "http" in [p["name"] for p in service["spec"]["ports"]]
    for obj in objects:
        if obj["kind"] != "ServiceMonitor":  # a CRD: no schema in kubernetes-validate
            kubernetes_validate.validate(obj, kubernetes_validate.latest_version(), strict=True)
