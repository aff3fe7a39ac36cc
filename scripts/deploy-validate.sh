#!/usr/bin/env bash
# Renders every kustomization under deploy/kubernetes and validates the objects offline
# (kubernetes-models, the prometheus-operator, Knative and KEDA models, the CRD schemas of KServe
# and KEDA's HTTP add-on), then each deploy/sagemaker request against the AWS API's input shapes
# (botocore, when installed): deploy/validate.
set -euo pipefail
cd "$(dirname "$0")/../deploy/validate"
npm ci --no-audit --no-fund --silent
node validate.mjs
for f in ../sagemaker/*.json; do
  python3 -m json.tool "$f" >/dev/null || { echo "FAIL: $f is not JSON"; exit 1; }
done
echo "deploy/sagemaker: $(ls ../sagemaker/*.json | wc -l) JSON files parse"
python3 sagemaker_requests.py ../sagemaker/*.json
