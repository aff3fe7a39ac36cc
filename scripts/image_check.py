#!/usr/bin/env python3
"""Checks for scripts/image-test.sh, against a running onepass container (standard library only).

  image_check.py ping URL                      /ping 200 within 60 s, each try answered in 2 s
  image_check.py load URL NAME PATH            SageMaker multi-model load (POST /models)
  image_check.py golden URL MODEL_DIR ROUTE IDS every golden case's label and score; writes the
                                               X-Request-Id of each answer to IDS
  image_check.py logs LOG IDS                  every line but "[grpc ]listening on" is JSON; start,
                                               model load, one request line per id, drain
  image_check.py probes URL POD_YAML           each probe of the pod spec's first container
                                               (httpGet path) answers 200 within its timeout
  image_check.py grpc HOST:PORT MODEL          the gRPC port: inference.GRPCInferenceService's
                                               ServerLive and ModelReady answer true (Debian's
                                               python3-grpcio; the only check that needs it)
"""
import json
import sys
import time
import urllib.error
import urllib.request


def request(url, method="GET", body=None, headers=None, timeout=10):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def fail(message):
    print("FAIL:", message)
    sys.exit(1)


def ping(url):
    deadline = time.time() + 60
    while time.time() < deadline:
        t0 = time.time()
        try:
            status, _, _ = request(url + "/ping", timeout=2)
        except OSError:
            status = None  # not listening yet, or no answer within 2 s
        took = time.time() - t0
        if status is not None and took > 2:
            fail(f"/ping took {took:.2f} s")
        if status == 200:
            print(f"/ping 200 in {took * 1000:.1f} ms")
            return
        time.sleep(0.2)
    fail("/ping never answered 200")


def load(url, name, path):
    status, _, body = request(url + "/models", "POST", {"model_name": name, "url": path}, timeout=60)
    if status != 200:
        fail(f"POST /models: {status} {body[:300]!r}")
    status, _, body = request(url + "/models")
    names = [m.get("modelName") for m in json.loads(body).get("models", [])]
    if name not in names:
        fail(f"GET /models does not list {name}: {body[:300]!r}")
    print(f"loaded {name} from {path}")


def golden(url, model_dir, route, ids_file):
    with open(model_dir + "/golden.json") as f:
        cases = json.load(f)["cases"]
    ids = []
    checked = 0
    for i, case in enumerate(cases):
        # As in serve_goldens_test: cases reproducible from text (not truncated, same ids from
        # tokenizer.json as from the slow tokenizer).
        if "probs" not in case or "truncation" in case or "fast_input_ids" in case:
            continue
        if "pair" in case:
            inputs = {"text": case["pair"][0], "text_pair": case["pair"][1]}
        else:
            inputs = case["text"]
        request_id = f"image-test-{i}"
        status, headers, body = request(url + route, "POST", {"inputs": inputs},
                                        {"X-Request-Id": request_id})
        if status != 200:
            fail(f"{route} case {case['id']}: {status} {body[:300]!r}")
        echoed = {k.lower(): v for k, v in headers.items()}.get("x-request-id")
        if echoed != request_id:
            fail(f"X-Request-Id not echoed: {echoed!r}")
        ids.append(request_id)
        answer = json.loads(body)
        answer = answer[0] if isinstance(answer, list) else answer
        best = max(case["probs"])
        if answer["label"] != case["label"] or abs(answer["score"] - best) > 1e-4:
            fail(f"case {case['id']}: got {answer}, golden {case['label']} {best}")
        checked += 1
    if checked == 0:
        fail("no golden case checked")
    with open(ids_file, "w") as f:
        f.write("\n".join(ids))
    print(f"{route}: {checked} golden cases match")


def logs(log_file, ids_file):
    with open(ids_file) as f:
        ids = [line for line in f.read().split("\n") if line]
    events = []
    with open(log_file, errors="replace") as f:
        for line in f:
            line = line.strip()
            # The two plain lines a start prints to stdout: the HTTP port's and the gRPC port's.
            if not line or line.startswith(("listening on", "grpc listening on")):
                continue
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:
                fail(f"log line is not JSON: {line[:200]}")
    names = [e.get("event") for e in events]
    for needed in ("start", "listening", "model_load", "drain", "stopped"):
        if needed not in names:
            fail(f"no '{needed}' log line in {names}")
    for request_id in ids:
        lines = [e for e in events if e.get("event") == "request" and e.get("request_id") == request_id]
        if len(lines) != 1 or lines[0].get("status") != 200:
            fail(f"request {request_id}: {len(lines)} log lines {lines}")
    phases = [e.get("phase") for e in events if e.get("event") == "drain"]
    if phases[:1] != ["begin"] or "done" not in phases:
        fail(f"drain phases {phases}")
    print(f"{len(events)} JSON log lines; {len(ids)} request lines; drain {phases}")


def probes(url, pod_yaml):
    # The rendered Deployment is YAML written by js-yaml; the probes are found without a YAML
    # parser (standard library only): each "xxxProbe:" block's "path:" and "timeoutSeconds:".
    found = {}
    current = None
    with open(pod_yaml) as f:
        for line in f:
            text = line.strip()
            if text.endswith("Probe:"):
                current = text[:-1]
                found[current] = {"timeout": 1.0}
            elif current and text.startswith("path:"):
                found[current]["path"] = text.split(":", 1)[1].strip()
            elif current and text.startswith("timeoutSeconds:"):
                found[current]["timeout"] = float(text.split(":", 1)[1])
    if sorted(found) != ["livenessProbe", "readinessProbe", "startupProbe"]:
        fail(f"probes in the pod spec: {sorted(found)}")
    for name, probe in sorted(found.items()):
        t0 = time.time()
        status, _, _ = request(url + probe["path"], timeout=probe["timeout"])
        if status != 200:
            fail(f"{name} {probe['path']}: {status}")
        print(f"{name} {probe['path']}: 200 in {(time.time() - t0) * 1000:.1f} ms")


def grpc_ready(address, model):
    import grpc  # noqa: PLC0415 (python3-grpcio: only this check needs it)

    # Raw messages, so no generated code: ModelReadyRequest's `name` is field 1 (a string), and
    # both answers are `bool live|ready = 1`, true on the wire as 08 01.
    name = model.encode()
    calls = {"ServerLive": b"", "ModelReady": b"\x0a" + bytes([len(name)]) + name}
    with grpc.insecure_channel(address) as channel:
        for method, request in calls.items():
            call = channel.unary_unary(f"/inference.GRPCInferenceService/{method}")
            t0 = time.time()
            answer = call(request, timeout=10)
            if answer != b"\x08\x01":
                fail(f"gRPC {method}: {answer!r}, not true")
            print(f"gRPC {method}: true in {(time.time() - t0) * 1000:.1f} ms")


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    commands = {"ping": ping, "load": load, "golden": golden, "logs": logs, "probes": probes,
                "grpc": grpc_ready}
    commands[command](*args)
