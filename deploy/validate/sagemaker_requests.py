#!/usr/bin/env python3
"""Validates each request file in deploy/sagemaker against the AWS API's own input shape, offline:
botocore ships the service models the AWS CLI sends with (`aws ... --cli-input-json file://F`
goes through the same validation before any call). The file name says the call:
NN-NAME.OPERATION[.VARIANT].json, e.g. 05-scale-to-zero.put-scaling-policy.step.json.

  python3 sagemaker_requests.py deploy/sagemaker/*.json

Exits 0 with a note when botocore is not installed (the files are then only parsed as JSON by
deploy-validate.sh); 1 when a file fails or names an unknown call.
"""
import json
import os
import sys

CALLS = {  # the CLI's operation name -> (service, API operation)
    "create-model": ("sagemaker", "CreateModel"),
    "create-endpoint-config": ("sagemaker", "CreateEndpointConfig"),
    "create-endpoint": ("sagemaker", "CreateEndpoint"),
    "create-inference-component": ("sagemaker", "CreateInferenceComponent"),
    "invoke-endpoint": ("sagemaker-runtime", "InvokeEndpoint"),
    "register-scalable-target": ("application-autoscaling", "RegisterScalableTarget"),
    "put-scaling-policy": ("application-autoscaling", "PutScalingPolicy"),
    "put-metric-alarm": ("cloudwatch", "PutMetricAlarm"),
}


def main(paths):
    try:
        import botocore.session
        from botocore.validate import ParamValidator
    except ImportError:
        print("deploy/sagemaker: botocore not installed, request shapes not checked")
        return 0
    session = botocore.session.get_session()
    failed = 0
    for path in paths:
        parts = os.path.basename(path).split(".")
        call = CALLS.get(parts[1] if len(parts) > 2 else "")
        if call is None:
            print(f"FAIL {path}: no known call in its name")
            failed += 1
            continue
        shape = session.get_service_model(call[0]).operation_model(call[1]).input_shape
        with open(path) as f:
            params = json.load(f)
        if call[1] == "InvokeEndpoint":  # a blob: the CLI reads it from a file or a string
            params["Body"] = params.get("Body", "").encode()
        report = ParamValidator().validate(params, shape)
        if report.has_errors():
            print(f"FAIL {path} ({call[0]} {call[1]}):\n{report.generate_report()}")
            failed += 1
    # The validator must refuse a broken request, or passing means nothing.
    broken = {"ServiceNamespace": "sagemaker", "ResourceId": "inference-component/x",
              "ScalableDimension": "sagemaker:inference-component:DesiredCopyCount",
              "MinCapacity": "0"}
    shape = session.get_service_model("application-autoscaling").operation_model(
        "RegisterScalableTarget").input_shape
    if not ParamValidator().validate(broken, shape).has_errors():
        print("FAIL: the validator accepted a broken request")
        failed += 1
    if failed:
        return 1
    print(f"deploy/sagemaker: {len(paths)} requests match the AWS API shapes (botocore "
          f"{botocore.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
