#!/usr/bin/env python3
"""Extracts the openAPIV3Schema of each version of the given CRD files into one JSON object keyed
"group/version/Kind", which validate.mjs checks custom resources against offline (as it does
KServe's, kserve_schema.py). Descriptions are dropped.

  python3 crd_schema.py CRD.yaml... > schema.json

keda-http-schema.json: config/crd/bases/http.keda.sh_httpscaledobjects.yaml of
kedacore/http-add-on at 59b2f6a (the HTTPScaledObject; no npm package models it).
"""
import json
import sys

import yaml


def strip(node):
    if isinstance(node, dict):
        return {k: strip(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [strip(v) for v in node]
    return node


def main(paths):
    out = {}
    for path in paths:
        with open(path) as f:
            crd = yaml.safe_load(f)
        group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            out[f"{group}/{version['name']}/{kind}"] = strip(version["schema"]["openAPIV3Schema"])
    json.dump(out, sys.stdout, separators=(",", ":"), sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
