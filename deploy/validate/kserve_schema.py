#!/usr/bin/env python3
"""Extracts the openAPIV3Schema of KServe's InferenceService and ServingRuntime CRDs into
kserve-schema.json, which validate.mjs checks the KServe overlay against offline.

  python3 kserve_schema.py KSERVE_CHECKOUT > kserve-schema.json

Reads charts/kserve-crd/templates/serving.kserve.io_{inferenceservices,servingruntimes}.yaml.
Descriptions are dropped, and so are the InferenceService's transformer and explainer (the
overlay uses only a predictor; the checker then refuses those fields rather than passing them
unchecked), which keeps the file about 250 KB.
"""
import json
import sys

import yaml

from crd_schema import strip


def main(checkout):
    out = {}
    for plural in ("inferenceservices", "servingruntimes"):
        path = f"{checkout}/charts/kserve-crd/templates/serving.kserve.io_{plural}.yaml"
        with open(path) as f:
            crd = yaml.safe_load(f)
        kind = crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            schema = strip(version["schema"]["openAPIV3Schema"])
            if kind == "InferenceService":
                spec = schema["properties"]["spec"]["properties"]
                for dropped in ("transformer", "explainer"):
                    spec.pop(dropped, None)
            out[f"serving.kserve.io/{version['name']}/{kind}"] = schema
    json.dump(out, sys.stdout, separators=(",", ":"), sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1])
