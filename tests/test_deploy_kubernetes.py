"""The Kubernetes manifests, validated offline: core kinds against the Kubernetes JSON schemas (strict, so a
misspelt field fails), the KEDA and Prometheus Operator resources against the parts of their CRD schemas
they use, and the timing and naming relations between them checked against the server's own code."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import jsonschema
import pytest
import referencing
import yaml

kubernetes_validate = pytest.importorskip("kubernetes_validate", reason="pip install -e '.[deploy]'")

from sonare.engine.metrics import LATENCY_BUCKETS  # noqa: E402
from sonare.server.config import ServerConfig  # noqa: E402
from sonare.server.runner import CLOSE_GRACE_S  # noqa: E402

K8S = Path(__file__).resolve().parent.parent / "deploy" / "kubernetes"
# The oldest Kubernetes still supported by EKS and GKE at the time of writing, and the newest schemas bundled.
KUBERNETES_VERSIONS = ["1.29.0", kubernetes_validate.latest_version()]
CRD_KINDS = {"ScaledObject", "ServiceMonitor", "PrometheusRule"}


def load(relative: str) -> dict:
    return yaml.safe_load((K8S / relative).read_text())


def manifests() -> list[str]:
    skip = {"kustomization.yaml"}
    return sorted(
        str(p.relative_to(K8S)) for p in K8S.rglob("*.yaml") if p.name not in skip and "patches" not in p.parts
    )


@pytest.fixture(scope="module")
def deployment() -> dict:
    return load("deployment.yaml")


def container(deployment: dict) -> dict:
    (only,) = deployment["spec"]["template"]["spec"]["containers"]
    return only


def env(deployment: dict) -> dict[str, object]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container(deployment)["env"]}


def server_metric_names() -> set[str]:
    """Every sample name the server exports (histogram _bucket/_sum/_count, counter _total included)."""
    from sonare.server.service import Service

    registry = Service(ServerConfig()).registry
    return {sample_name for metric in registry.collect() for sample_name in _sample_names(metric)}


def _sample_names(metric) -> set[str]:
    base = metric.name
    if metric.type == "histogram":
        return {base + suffix for suffix in ("_bucket", "_sum", "_count")}
    if metric.type == "counter":
        return {base + "_total", base}
    return {base}


def promql_metrics(expr: str) -> set[str]:
    return set(re.findall(r"\b(sonare_[a-z_]+)\b", expr))


# -- schema validation ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("relative", manifests())
def test_core_manifests_match_the_kubernetes_schemas(relative, version):
    for doc in yaml.safe_load_all((K8S / relative).read_text()):
        if doc["kind"] in CRD_KINDS:
            continue
        kubernetes_validate.validate(doc, version, strict=True)


def test_kustomization_lists_every_default_resource_and_nothing_missing():
    kustomization = load("kustomization.yaml")
    listed = kustomization["resources"]
    assert all((K8S / r).is_file() for r in listed)
    # Alternatives and ingress choices stay out of the default set; everything else is in it.
    top_level = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    assert set(listed) == top_level
    assert kustomization["images"][0]["name"] == container(load("deployment.yaml"))["image"]


def crd_validator(schema: dict) -> jsonschema.Draft202012Validator:
    """A validator whose schema may refer to Kubernetes definitions (e.g. HPA behavior, which KEDA embeds)."""
    version = kubernetes_validate.latest_version()
    defs = kubernetes_validate.utils.schema_contents(
        f"kubernetes-json-schema/v{version}-local-strict/_definitions.json", version
    )
    registry = referencing.Resource.from_contents(defs) @ referencing.Registry()
    return jsonschema.Draft202012Validator(schema, registry=registry)


def closed(properties: dict, required: list[str] = ()) -> dict:
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


HPA_BEHAVIOR = (
    "https://kubernetes.io/api/_definitions.json#/$defs/io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerBehavior"
)
STRING, INT = {"type": "string"}, {"type": "integer"}
LABELS = {"type": "object", "additionalProperties": {"type": "string"}}
METADATA = closed({"name": STRING, "namespace": STRING, "labels": LABELS, "annotations": LABELS}, ["name"])

# The fields of keda.sh/v1alpha1 ScaledObject (KEDA 2.x CRD) these manifests may use.
SCALED_OBJECT = closed(
    {
        "apiVersion": {"const": "keda.sh/v1alpha1"},
        "kind": {"const": "ScaledObject"},
        "metadata": METADATA,
        "spec": closed(
            {
                "scaleTargetRef": closed({"apiVersion": STRING, "kind": STRING, "name": STRING}, ["name"]),
                "pollingInterval": INT,
                "cooldownPeriod": INT,
                "initialCooldownPeriod": INT,
                "minReplicaCount": INT,
                "maxReplicaCount": INT,
                "advanced": closed(
                    {
                        "restoreToOriginalReplicaCount": {"type": "boolean"},
                        "horizontalPodAutoscalerConfig": closed(
                            {
                                "name": STRING,
                                "behavior": {"$ref": HPA_BEHAVIOR},
                            }
                        ),
                    }
                ),
                "triggers": {
                    "type": "array",
                    "minItems": 1,
                    "items": closed(
                        {
                            "type": STRING,
                            "name": STRING,
                            "metricType": {"enum": ["AverageValue", "Value", "Utilization"]},
                            # KEDA trigger metadata is a map of strings: numbers must be quoted.
                            "metadata": {"type": "object", "additionalProperties": {"type": "string"}},
                            "authenticationRef": closed({"name": STRING, "kind": STRING}, ["name"]),
                        },
                        ["type", "metadata"],
                    ),
                },
            },
            ["scaleTargetRef", "triggers"],
        ),
    },
    ["apiVersion", "kind", "metadata", "spec"],
)

# monitoring.coreos.com/v1 ServiceMonitor and PrometheusRule (Prometheus Operator CRDs), the fields used.
SERVICE_MONITOR = closed(
    {
        "apiVersion": {"const": "monitoring.coreos.com/v1"},
        "kind": {"const": "ServiceMonitor"},
        "metadata": METADATA,
        "spec": closed(
            {
                "selector": closed({"matchLabels": LABELS}, ["matchLabels"]),
                "namespaceSelector": closed({"matchNames": {"type": "array", "items": STRING}}),
                "endpoints": {
                    "type": "array",
                    "minItems": 1,
                    "items": closed(
                        {
                            "port": STRING,
                            "path": STRING,
                            "interval": {"type": "string", "pattern": "^[0-9]+(ms|s|m|h)$"},
                            "scrapeTimeout": {"type": "string", "pattern": "^[0-9]+(ms|s|m|h)$"},
                            "authorization": closed(
                                {"type": STRING, "credentials": closed({"name": STRING, "key": STRING}, ["key"])}
                            ),
                        },
                        ["port"],
                    ),
                },
            },
            ["selector", "endpoints"],
        ),
    },
    ["apiVersion", "kind", "metadata", "spec"],
)
PROMETHEUS_RULE = closed(
    {
        "apiVersion": {"const": "monitoring.coreos.com/v1"},
        "kind": {"const": "PrometheusRule"},
        "metadata": METADATA,
        "spec": closed(
            {
                "groups": {
                    "type": "array",
                    "minItems": 1,
                    "items": closed(
                        {
                            "name": STRING,
                            "interval": STRING,
                            "rules": {
                                "type": "array",
                                "minItems": 1,
                                "items": closed(
                                    {
                                        "alert": STRING,
                                        "record": STRING,
                                        "expr": STRING,
                                        "for": {"type": "string", "pattern": "^[0-9]+(ms|s|m|h|d)$"},
                                        "labels": LABELS,
                                        "annotations": LABELS,
                                    },
                                    ["expr"],
                                ),
                            },
                        },
                        ["name", "rules"],
                    ),
                }
            },
            ["groups"],
        ),
    },
    ["apiVersion", "kind", "metadata", "spec"],
)


@pytest.mark.parametrize(
    ("relative", "schema"),
    [
        ("keda-scaledobject.yaml", SCALED_OBJECT),
        ("servicemonitor.yaml", SERVICE_MONITOR),
        ("prometheusrule.yaml", PROMETHEUS_RULE),
    ],
)
def test_custom_resources_match_their_crd_fields(relative, schema):
    crd_validator(schema).validate(load(relative))


def test_crd_checks_catch_a_misspelt_field():
    broken = load("keda-scaledobject.yaml")
    broken["spec"]["maxReplicas"] = 20  # the HPA's spelling, not KEDA's
    with pytest.raises(jsonschema.ValidationError, match="maxReplicas"):
        crd_validator(SCALED_OBJECT).validate(broken)
    typo = load("keda-scaledobject.yaml")
    typo["spec"]["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]["scaleDown"]["stabilizationWindow"] = 60
    with pytest.raises(jsonschema.ValidationError, match="stabilizationWindow"):
        crd_validator(SCALED_OBJECT).validate(typo)


# -- relations between the manifests and the server --------------------------------------------------------


def test_grace_period_outlasts_prestop_plus_drain(deployment):
    spec = deployment["spec"]["template"]["spec"]
    prestop = container(deployment)["lifecycle"]["preStop"]["exec"]["command"]
    assert prestop[0] == "sleep"
    drain = float(env(deployment)["SONARE_DRAIN_TIMEOUT"])
    assert spec["terminationGracePeriodSeconds"] > float(prestop[1]) + drain + CLOSE_GRACE_S
    assert drain > 0


def test_rolling_update_never_removes_capacity_first(deployment):
    assert deployment["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
    assert deployment["spec"]["template"]["spec"]["topologySpreadConstraints"]


def test_probes_use_the_servers_own_endpoints(deployment):
    from sonare.server.app import create_app
    from sonare.server.service import Service

    config = ServerConfig()
    routes = {route.path for route in create_app(config, Service(config)).routes}
    c = container(deployment)
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    probes = {kind: c[kind]["httpGet"] for kind in ("startupProbe", "readinessProbe", "livenessProbe")}
    assert {kind: probe["path"] for kind, probe in probes.items()} == {
        "startupProbe": "/ready",
        "readinessProbe": "/ready",
        "livenessProbe": "/live",
    }
    assert all(probe["path"] in routes and probe["port"] in ports for probe in probes.values())
    assert ports["http"] == 8080


def test_weights_are_a_shared_read_only_volume_not_at_the_sagemaker_path(deployment):
    c = container(deployment)
    mount = next(m for m in c["volumeMounts"] if m["name"] == "weights")
    volume = next(v for v in deployment["spec"]["template"]["spec"]["volumes"] if v["name"] == "weights")
    assert mount["readOnly"] and volume["persistentVolumeClaim"]["readOnly"]
    assert volume["persistentVolumeClaim"]["claimName"] == load("weights-pvc.yaml")["metadata"]["name"]
    assert env(deployment)["SONARE_MODEL_DIR"] == mount["mountPath"] != "/opt/ml/model"


def test_service_pdb_and_monitor_select_the_pods(deployment):
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    service = load("service.yaml")
    assert service["spec"]["selector"].items() <= pod_labels.items()
    assert load("pdb.yaml")["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
    monitor = load("servicemonitor.yaml")["spec"]
    assert monitor["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert {e["port"] for e in monitor["endpoints"]} <= {p["name"] for p in service["spec"]["ports"]}
    # The scrape credential comes from the same secret as the server's keys.
    secret = env(deployment)["SONARE_API_KEYS"]["secretKeyRef"]["name"]
    assert monitor["endpoints"][0]["authorization"]["credentials"]["name"] == secret


def test_autoscaling_targets_the_deployment_on_active_streams_below_the_slot_count(deployment):
    names = server_metric_names()
    slots = int(env(deployment)["SONARE_TTS_SLOTS"])
    keda = load("keda-scaledobject.yaml")["spec"]
    assert keda["scaleTargetRef"]["name"] == deployment["metadata"]["name"]
    assert keda["minReplicaCount"] >= 2
    (trigger,) = keda["triggers"]
    assert promql_metrics(trigger["metadata"]["query"]) == {"sonare_active_streams"} <= names
    assert 0 < float(trigger["metadata"]["threshold"]) < slots
    hpa = load("alternatives/hpa-custom-metrics.yaml")["spec"]
    assert hpa["scaleTargetRef"]["name"] == deployment["metadata"]["name"]
    assert hpa["metrics"][0]["pods"]["metric"]["name"] == "sonare_active_streams"
    assert float(hpa["metrics"][0]["pods"]["target"]["averageValue"]) == float(trigger["metadata"]["threshold"])


def test_alert_rules_query_metrics_the_server_exports():
    names = server_metric_names()
    rules = [rule for group in load("prometheusrule.yaml")["spec"]["groups"] for rule in group["rules"]]
    alerts = {rule["alert"]: rule["expr"] for rule in rules}
    assert {"SonareTimeToFirstAudioHigh", "SonareUnderruns", "SonareSaturated"} <= alerts.keys()
    for expr in alerts.values():
        assert promql_metrics(expr) and promql_metrics(expr) <= names, expr
    ttfa = alerts["SonareTimeToFirstAudioHigh"]
    assert "histogram_quantile(0.95" in ttfa and "sonare_time_to_first_audio_seconds_bucket" in ttfa
    threshold = float(ttfa.rsplit(">", 1)[1])
    assert threshold == 0.1 and threshold in LATENCY_BUCKETS


def test_load_balancers_keep_draining_streams_and_idle_sockets(deployment):
    prestop = float(container(deployment)["lifecycle"]["preStop"]["exec"]["command"][1])
    drain = float(env(deployment)["SONARE_DRAIN_TIMEOUT"])
    idle = ServerConfig().ws_idle_timeout
    alb = load("ingress/aws-alb.yaml")["metadata"]["annotations"]
    attributes = dict(
        pair.split("=") for pair in alb["alb.ingress.kubernetes.io/target-group-attributes"].strip().split(",")
    )
    assert float(attributes["deregistration_delay.timeout_seconds"]) >= prestop + drain
    assert attributes["load_balancing.algorithm.type"] == "least_outstanding_requests"
    lb_idle = float(alb["alb.ingress.kubernetes.io/load-balancer-attributes"].split("=")[1])
    assert lb_idle >= idle
    assert alb["alb.ingress.kubernetes.io/healthcheck-path"] == "/ready"
    nginx = load("ingress/nginx.yaml")["metadata"]["annotations"]
    assert float(nginx["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= idle
    assert nginx["nginx.ingress.kubernetes.io/proxy-buffering"] == "off"


def strategic_merge(base: dict, patch: dict) -> dict:
    """Kubernetes' strategic merge for what the patches use: maps merge, containers merge by name."""
    merged = copy.deepcopy(base)
    for key, value in patch.items():
        if key == "containers":
            by_name = {c["name"]: c for c in merged[key]}
            for item in value:
                by_name[item["name"]] = strategic_merge(by_name.get(item["name"], {}), item)
            merged[key] = list(by_name.values())
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = strategic_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_gpu_patch_yields_a_valid_deployment_with_one_gpu(deployment, version):
    patched = strategic_merge(deployment, load("patches/gpu.yaml"))
    kubernetes_validate.validate(patched, version, strict=True)
    resources = container(patched)["resources"]
    assert resources["limits"]["nvidia.com/gpu"] == "1" == resources["requests"]["nvidia.com/gpu"]
    # The patch adds to the container; it must not lose the probes or the drain settings.
    assert container(patched)["lifecycle"] == container(deployment)["lifecycle"]
    assert env(patched) == env(deployment)
