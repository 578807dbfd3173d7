#!/usr/bin/env python3
"""Deploy Sonare to a SageMaker real-time endpoint, or roll an existing one onto a new image or settings.

Creates a model (the image, optional weights from S3, the server's settings), an endpoint config (at least
two instances, least-outstanding-requests routing, a start-up health check long enough to load and warm the
models), the endpoint (or updates it one instance at a time), and target-tracking autoscaling on concurrent
requests per instance: each open stream, response-streamed or bidirectional, is one concurrent request.

    python deploy/sagemaker/deploy_endpoint.py --name sonare \\
        --image-uri 123456789012.dkr.ecr.us-east-1.amazonaws.com/sonare:0.1.0-sagemaker \\
        --role-arn arn:aws:iam::123456789012:role/SonareSageMaker --region us-east-1
    ... --dry-run      # print the requests instead of sending them

Names carry a timestamp, so each run makes a new model and endpoint config and the endpoint moves to them.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass

VARIANT = "AllTraffic"
SCALABLE_DIMENSION = "sagemaker:variant:DesiredInstanceCount"
# Concurrent requests (in flight, streams included) per instance, sampled every 10 s: streams are the load.
SCALING_METRIC = "SageMakerVariantConcurrentRequestsPerModelHighResolution"


@dataclass(frozen=True)
class EndpointPlan:
    name: str
    image_uri: str
    role_arn: str
    model_data_url: str | None = None  # s3://.../model.tar.gz, unpacked at /opt/ml/model; None: weights in the image
    instance_type: str = "ml.c7i.4xlarge"
    min_instances: int = 2
    max_instances: int = 10
    target_streams_per_instance: float = 12.0  # 75% of the slots below
    tts_slots: int = 16
    stt_slots: int = 16
    threads: int = 15  # the instance's vCPUs minus one for the event loop (ml.c7i.4xlarge: 16)
    drain_timeout_s: int = 90
    startup_health_check_timeout_s: int = 600
    stamp: str = ""

    def __post_init__(self):
        if self.min_instances < 2:
            raise ValueError("at least two instances: one must keep serving while the other is replaced")
        if self.max_instances < self.min_instances:
            raise ValueError("max_instances must be at least min_instances")
        if not 0 < self.target_streams_per_instance <= self.tts_slots:
            raise ValueError("the scaling target must be between 0 and the stream slots per instance")

    @property
    def version_name(self) -> str:
        return f"{self.name}-{self.stamp}" if self.stamp else self.name

    @property
    def resource_id(self) -> str:
        return f"endpoint/{self.name}/variant/{VARIANT}"


def model_request(plan: EndpointPlan) -> dict:
    container = {
        "Image": plan.image_uri,
        "Mode": "SingleModel",
        "Environment": {
            "SONARE_TTS_SLOTS": str(plan.tts_slots),
            "SONARE_STT_SLOTS": str(plan.stt_slots),
            "SONARE_MAX_BATCH": str(max(plan.tts_slots, plan.stt_slots)),
            "SONARE_THREADS": str(plan.threads),
            "SONARE_DRAIN_TIMEOUT": str(plan.drain_timeout_s),
            "SONARE_LOG_FORMAT": "json",
        },
    }
    if plan.model_data_url:
        container["ModelDataUrl"] = plan.model_data_url
    return {"ModelName": plan.version_name, "ExecutionRoleArn": plan.role_arn, "PrimaryContainer": container}


def endpoint_config_request(plan: EndpointPlan, instances: int | None = None) -> dict:
    variant = {
        "VariantName": VARIANT,
        "ModelName": plan.version_name,
        "InstanceType": plan.instance_type,
        "InitialInstanceCount": max(plan.min_instances, instances or 0),
        # Each stream is one outstanding request: send new ones to the least busy instance.
        "RoutingConfig": {"RoutingStrategy": "LEAST_OUTSTANDING_REQUESTS"},
        # /ping turns 200 once the models are loaded and warmed up.
        "ContainerStartupHealthCheckTimeoutInSeconds": plan.startup_health_check_timeout_s,
    }
    if plan.model_data_url:
        variant["ModelDataDownloadTimeoutInSeconds"] = plan.startup_health_check_timeout_s
    return {"EndpointConfigName": plan.version_name, "ProductionVariants": [variant]}


def create_endpoint_request(plan: EndpointPlan) -> dict:
    return {"EndpointName": plan.name, "EndpointConfigName": plan.version_name}


def update_endpoint_request(plan: EndpointPlan) -> dict:
    """Replace instances one at a time; each old one gets SIGTERM and drains its streams."""
    return {
        "EndpointName": plan.name,
        "EndpointConfigName": plan.version_name,
        "DeploymentConfig": {
            "RollingUpdatePolicy": {
                "MaximumBatchSize": {"Type": "INSTANCE_COUNT", "Value": 1},
                "WaitIntervalInSeconds": 60,
                "MaximumExecutionTimeoutInSeconds": 3600,
            }
        },
    }


def scalable_target_request(plan: EndpointPlan) -> dict:
    return {
        "ServiceNamespace": "sagemaker",
        "ResourceId": plan.resource_id,
        "ScalableDimension": SCALABLE_DIMENSION,
        "MinCapacity": plan.min_instances,
        "MaxCapacity": plan.max_instances,
    }


def scaling_policy_request(plan: EndpointPlan) -> dict:
    return {
        "PolicyName": f"{plan.name}-concurrent-streams",
        "ServiceNamespace": "sagemaker",
        "ResourceId": plan.resource_id,
        "ScalableDimension": SCALABLE_DIMENSION,
        "PolicyType": "TargetTrackingScaling",
        "TargetTrackingScalingPolicyConfiguration": {
            "TargetValue": plan.target_streams_per_instance,
            "PredefinedMetricSpecification": {"PredefinedMetricType": SCALING_METRIC},
            # Out fast (an instance takes minutes to start); in slowly (each removal waits for a drain).
            "ScaleOutCooldown": 60,
            "ScaleInCooldown": 600,
        },
    }


def current_instances(sagemaker, name: str) -> int | None:
    """The endpoint's running instance count, or None if there is no such endpoint."""
    from botocore.exceptions import ClientError

    try:
        endpoint = sagemaker.describe_endpoint(EndpointName=name)
    except ClientError as exc:
        if exc.response["Error"]["Code"] == "ValidationException":
            return None
        raise
    return sum(v.get("CurrentInstanceCount", 0) for v in endpoint.get("ProductionVariants", []))


def deploy(plan: EndpointPlan, sagemaker, autoscaling, wait: bool = True, log=print) -> str:
    """Create or update the endpoint and its autoscaling; returns "created" or "updated"."""
    instances = current_instances(sagemaker, plan.name)
    sagemaker.create_model(**model_request(plan))
    sagemaker.create_endpoint_config(**endpoint_config_request(plan, instances))
    if instances is None:
        log(f"creating endpoint {plan.name} on {plan.version_name}")
        sagemaker.create_endpoint(**create_endpoint_request(plan))
        action = "created"
    else:
        # SageMaker refuses to update an endpoint that is a registered scalable target.
        log(f"updating endpoint {plan.name} to {plan.version_name}, one instance at a time")
        autoscaling.deregister_scalable_target(
            ServiceNamespace="sagemaker", ResourceId=plan.resource_id, ScalableDimension=SCALABLE_DIMENSION
        )
        sagemaker.update_endpoint(**update_endpoint_request(plan))
        action = "updated"
    # Autoscaling can only register an endpoint that is in service.
    if wait:
        sagemaker.get_waiter("endpoint_in_service").wait(
            EndpointName=plan.name, WaiterConfig={"Delay": 30, "MaxAttempts": 120}
        )
    autoscaling.register_scalable_target(**scalable_target_request(plan))
    autoscaling.put_scaling_policy(**scaling_policy_request(plan))
    log(f"endpoint {plan.name} {action}; autoscaling {plan.min_instances}-{plan.max_instances} instances")
    return action


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--name", required=True, help="endpoint name")
    p.add_argument("--image-uri", required=True, help="ECR image built with --build-arg SERVICE_USER=root")
    p.add_argument("--role-arn", required=True, help="execution role that can pull the image (and read the S3 model)")
    p.add_argument("--model-data-url", help="s3://.../model.tar.gz with tts/ and stt/ weights (default: the image's)")
    p.add_argument("--region")
    p.add_argument("--instance-type", default=EndpointPlan.instance_type)
    p.add_argument("--min-instances", type=int, default=EndpointPlan.min_instances)
    p.add_argument("--max-instances", type=int, default=EndpointPlan.max_instances)
    p.add_argument("--target-streams", type=float, default=EndpointPlan.target_streams_per_instance)
    p.add_argument("--tts-slots", type=int, default=EndpointPlan.tts_slots)
    p.add_argument("--stt-slots", type=int, default=EndpointPlan.stt_slots)
    p.add_argument("--threads", type=int, default=EndpointPlan.threads)
    p.add_argument("--drain-timeout", type=int, default=EndpointPlan.drain_timeout_s)
    p.add_argument("--dry-run", action="store_true", help="print the requests; send nothing")
    return p.parse_args(argv)


def plan_from(args: argparse.Namespace) -> EndpointPlan:
    return EndpointPlan(
        name=args.name,
        image_uri=args.image_uri,
        role_arn=args.role_arn,
        model_data_url=args.model_data_url,
        instance_type=args.instance_type,
        min_instances=args.min_instances,
        max_instances=args.max_instances,
        target_streams_per_instance=args.target_streams,
        tts_slots=args.tts_slots,
        stt_slots=args.stt_slots,
        threads=args.threads,
        drain_timeout_s=args.drain_timeout,
        stamp=time.strftime("%Y%m%d-%H%M%S", time.gmtime()),
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    plan = plan_from(args)
    if args.dry_run:
        requests = {
            "sagemaker.create_model": model_request(plan),
            "sagemaker.create_endpoint_config": endpoint_config_request(plan),
            "sagemaker.create_endpoint": create_endpoint_request(plan),
            "application-autoscaling.register_scalable_target": scalable_target_request(plan),
            "application-autoscaling.put_scaling_policy": scaling_policy_request(plan),
        }
        print(json.dumps(requests, indent=2))
        return 0
    import boto3

    session = boto3.Session(region_name=args.region)
    deploy(plan, session.client("sagemaker"), session.client("application-autoscaling"), wait=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
