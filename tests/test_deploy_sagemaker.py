"""The SageMaker deploy script against the AWS API models (botocore's, offline), and the example clients'
protocol against a real local server's SageMaker routes."""

from __future__ import annotations

import datetime
import importlib.util
import sys
from pathlib import Path

import httpx
import pytest
import websockets.sync.client as ws_client
from server_harness import start_server

botocore = pytest.importorskip("botocore", reason="pip install -e '.[deploy]'")
from botocore.session import get_session  # noqa: E402
from botocore.stub import Stubber  # noqa: E402
from botocore.validate import validate_parameters  # noqa: E402

SAGEMAKER_DIR = Path(__file__).resolve().parent.parent / "deploy" / "sagemaker"


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, SAGEMAKER_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while it executes
    spec.loader.exec_module(module)
    return module


deploy = load("deploy_endpoint")
response_client = load("client_response_stream")
bidi_client = load("client_bidirectional")

PLAN = deploy.EndpointPlan(
    name="sonare",
    image_uri="123456789012.dkr.ecr.us-east-1.amazonaws.com/sonare:0.1.0",
    role_arn="arn:aws:iam::123456789012:role/SonareSageMaker",
    model_data_url="s3://bucket/sonare/model.tar.gz",
    stamp="20261129-120000",
)


def client(service: str):
    session = get_session()
    return session.create_client(
        service, region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing"
    )


def assert_valid(service: str, operation: str, params: dict) -> None:
    model = get_session().get_service_model(service)
    validate_parameters(params, model.operation_model(operation).input_shape)  # raises on any mismatch


@pytest.mark.parametrize(
    ("service", "operation", "build"),
    [
        ("sagemaker", "CreateModel", deploy.model_request),
        ("sagemaker", "CreateEndpointConfig", deploy.endpoint_config_request),
        ("sagemaker", "CreateEndpoint", deploy.create_endpoint_request),
        ("sagemaker", "UpdateEndpoint", deploy.update_endpoint_request),
        ("application-autoscaling", "RegisterScalableTarget", deploy.scalable_target_request),
        ("application-autoscaling", "PutScalingPolicy", deploy.scaling_policy_request),
    ],
)
def test_requests_match_the_aws_api_shapes(service, operation, build):
    assert_valid(service, operation, build(PLAN))


def test_the_shapes_check_catches_a_wrong_field():
    broken = deploy.endpoint_config_request(PLAN)
    broken["ProductionVariants"][0]["RoutingConfig"] = {"Strategy": "LEAST_OUTSTANDING_REQUESTS"}
    with pytest.raises(botocore.exceptions.ParamValidationError):
        assert_valid("sagemaker", "CreateEndpointConfig", broken)


def test_endpoint_config_routes_by_outstanding_requests_on_two_or_more_instances():
    (variant,) = deploy.endpoint_config_request(PLAN)["ProductionVariants"]
    routing = get_session().get_service_model("sagemaker").shape_for("ProductionVariantRoutingConfig")
    assert variant["RoutingConfig"]["RoutingStrategy"] in routing.members["RoutingStrategy"].enum
    assert variant["RoutingConfig"]["RoutingStrategy"] == "LEAST_OUTSTANDING_REQUESTS"
    assert variant["InitialInstanceCount"] >= 2
    assert variant["ContainerStartupHealthCheckTimeoutInSeconds"] >= 300
    # An update keeps the capacity the endpoint has scaled to.
    assert deploy.endpoint_config_request(PLAN, instances=7)["ProductionVariants"][0]["InitialInstanceCount"] == 7
    with pytest.raises(ValueError, match="two instances"):
        deploy.EndpointPlan(name="x", image_uri="i", role_arn="r", min_instances=1)


def test_scaling_tracks_concurrent_requests_with_a_known_metric():
    policy = deploy.scaling_policy_request(PLAN)["TargetTrackingScalingPolicyConfiguration"]
    metric = policy["PredefinedMetricSpecification"]["PredefinedMetricType"]
    known = get_session().get_service_model("application-autoscaling").shape_for("MetricType").enum
    assert metric in known and "ConcurrentRequests" in metric
    assert 0 < policy["TargetValue"] <= PLAN.tts_slots
    assert policy["ScaleInCooldown"] > policy["ScaleOutCooldown"]


def test_the_drain_timeout_reaches_the_container():
    env = deploy.model_request(PLAN)["PrimaryContainer"]["Environment"]
    assert env["SONARE_DRAIN_TIMEOUT"] == str(PLAN.drain_timeout_s)
    assert int(env["SONARE_TTS_SLOTS"]) == PLAN.tts_slots


def endpoint_description(status: str, instances: int = 2) -> dict:
    now = datetime.datetime(2026, 11, 29, tzinfo=datetime.UTC)
    return {
        "EndpointName": PLAN.name,
        "EndpointArn": f"arn:aws:sagemaker:us-east-1:123456789012:endpoint/{PLAN.name}",
        "EndpointConfigName": PLAN.version_name,
        "EndpointStatus": status,
        "CreationTime": now,
        "LastModifiedTime": now,
        "ProductionVariants": [{"VariantName": "AllTraffic", "CurrentInstanceCount": instances}],
    }


def stub_common_tail(sm: Stubber, aas: Stubber, status_sequence: list[str]) -> None:
    for status in status_sequence:
        sm.add_response("describe_endpoint", endpoint_description(status), {"EndpointName": PLAN.name})
    aas.add_response("register_scalable_target", {}, deploy.scalable_target_request(PLAN))
    aas.add_response(
        "put_scaling_policy",
        {"PolicyARN": "arn:aws:autoscaling:us-east-1:123456789012:scalingPolicy:x", "Alarms": []},
        deploy.scaling_policy_request(PLAN),
    )


def test_deploy_creates_model_config_endpoint_then_autoscaling_in_order(monkeypatch):
    monkeypatch.setattr("time.sleep", lambda s: None)  # the waiter's pause between polls
    sagemaker, autoscaling = client("sagemaker"), client("application-autoscaling")
    with Stubber(sagemaker) as sm, Stubber(autoscaling) as aas:
        sm.add_client_error(
            "describe_endpoint",
            "ValidationException",
            "Could not find endpoint",
            expected_params={"EndpointName": "sonare"},
        )
        sm.add_response(
            "create_model", {"ModelArn": "arn:aws:sagemaker:us-east-1:1:model/m"}, deploy.model_request(PLAN)
        )
        sm.add_response(
            "create_endpoint_config",
            {"EndpointConfigArn": "arn:aws:sagemaker:us-east-1:1:endpoint-config/c"},
            deploy.endpoint_config_request(PLAN),
        )
        sm.add_response(
            "create_endpoint",
            {"EndpointArn": "arn:aws:sagemaker:us-east-1:1:endpoint/e"},
            deploy.create_endpoint_request(PLAN),
        )
        stub_common_tail(sm, aas, ["Creating", "InService"])
        assert deploy.deploy(PLAN, sagemaker, autoscaling, log=lambda *_: None) == "created"
        sm.assert_no_pending_responses()
        aas.assert_no_pending_responses()


def test_deploy_updates_an_existing_endpoint_one_instance_at_a_time(monkeypatch):
    monkeypatch.setattr("time.sleep", lambda s: None)
    sagemaker, autoscaling = client("sagemaker"), client("application-autoscaling")
    with Stubber(sagemaker) as sm, Stubber(autoscaling) as aas:
        sm.add_response("describe_endpoint", endpoint_description("InService", instances=5), {"EndpointName": "sonare"})
        sm.add_response(
            "create_model", {"ModelArn": "arn:aws:sagemaker:us-east-1:1:model/m"}, deploy.model_request(PLAN)
        )
        sm.add_response(
            "create_endpoint_config",
            {"EndpointConfigArn": "arn:aws:sagemaker:us-east-1:1:endpoint-config/c"},
            deploy.endpoint_config_request(PLAN, instances=5),
        )
        aas.add_response(
            "deregister_scalable_target",
            {},
            {
                "ServiceNamespace": "sagemaker",
                "ResourceId": PLAN.resource_id,
                "ScalableDimension": deploy.SCALABLE_DIMENSION,
            },
        )
        update = deploy.update_endpoint_request(PLAN)
        assert update["DeploymentConfig"]["RollingUpdatePolicy"]["MaximumBatchSize"] == {
            "Type": "INSTANCE_COUNT",
            "Value": 1,
        }
        sm.add_response("update_endpoint", {"EndpointArn": "arn:aws:sagemaker:us-east-1:1:endpoint/e"}, update)
        stub_common_tail(sm, aas, ["Updating", "InService"])
        assert deploy.deploy(PLAN, sagemaker, autoscaling, log=lambda *_: None) == "updated"
        sm.assert_no_pending_responses()


def test_dry_run_prints_every_request(capsys):
    argv = ["--name", "sonare", "--image-uri", PLAN.image_uri, "--role-arn", PLAN.role_arn, "--dry-run"]
    assert deploy.main(argv) == 0
    printed = capsys.readouterr().out
    for operation in ("create_model", "create_endpoint_config", "create_endpoint", "put_scaling_policy"):
        assert operation in printed


# -- the example clients against a real server's SageMaker routes ------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    running = start_server(tmp_path_factory.mktemp("sagemaker-clients"))
    yield running
    running.stop()


def test_response_stream_request_streams_pcm_from_invocations(server):
    body = response_client.tts_request("Hello from the endpoint.", sample_rate=24000)
    collector = response_client.PcmCollector(24000)
    with httpx.stream("POST", f"{server.http}/invocations", json=body, timeout=30) as response:
        assert response.status_code == 200
        for part in response.iter_bytes():
            collector.feed(part)
    assert collector.first_audio_s is not None and collector.seconds > 0.1


def test_bidirectional_messages_drive_the_bidirectional_stream_route(server):
    frames = bidi_client.TtsFrames()
    with ws_client.connect(f"{server.ws}/invocations-bidirectional-stream?protocol=tts") as ws:
        for message in bidi_client.context_messages("Thanks for calling, how can I help?"):
            ws.send(message)  # SageMaker relays each UTF8 PayloadPart as one text message
        while not frames.done:
            frames.feed(ws.recv(timeout=30))
    assert frames.error is None
    assert len(frames.pcm) / 2 / 24000 > 0.2 and frames.first_audio_s is not None
