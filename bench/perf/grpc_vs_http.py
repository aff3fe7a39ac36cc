# KServe v2 over REST and over gRPC, side by side on one `onepass serve`: batch-1 latency (p50,
# p90, the two protocols interleaved call by call) and samples/s with 64 calls in flight (twice
# each, alternating). The clients are Python's http.client and Debian's grpcio, so the figures
# include each client's own cost; they compare the protocols, not the server's ceiling.
# usage: /usr/bin/python3 bench/perf/grpc_vs_http.py ONEPASS MODEL_DIR [CALLS]
import http.client
import importlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import grpc

ONEPASS, MODEL = sys.argv[1:3]
CALLS = int(sys.argv[3]) if len(sys.argv) > 3 else 500
PROTO_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "src", "api", "kserve_grpc")
work = tempfile.mkdtemp()
subprocess.run(["protoc", "-I", PROTO_DIR, "--python_out", work, "grpc_predict_v2.proto"],
               check=True)
sys.path.insert(0, work)
pb = importlib.import_module("grpc_predict_v2_pb2")

child = subprocess.Popen([ONEPASS, "serve", "--host", "127.0.0.1", "--port", "0", "--grpc-port",
                          "0", "--model", "m=" + MODEL, "--log-level", "warn"],
                         stdout=subprocess.PIPE, text=True)
for line in child.stdout:
    m = re.match(r"grpc listening on 127\.0\.0\.1:(\d+)", line)
    if m:
        grpc_port = int(m.group(1))
    m = re.match(r"listening on 127\.0\.0\.1:(\d+)", line)
    if m:
        http_port = int(m.group(1))
        break

text = "A man is playing a guitar on a busy street corner."
body = json.dumps({"inputs": [{"name": "text", "shape": [1], "datatype": "BYTES",
                               "data": [text]}]})
request = pb.ModelInferRequest(model_name="m")
request.inputs.add(name="text", datatype="BYTES", shape=[1]).contents.bytes_contents.append(
    text.encode())
channel = grpc.insecure_channel("127.0.0.1:%d" % grpc_port)
infer = channel.unary_unary("/inference.GRPCInferenceService/ModelInfer",
                            request_serializer=lambda m: m.SerializeToString(),
                            response_deserializer=pb.ModelInferResponse.FromString)
local = threading.local()


def http_call():
    if not hasattr(local, "connection"):
        local.connection = http.client.HTTPConnection("127.0.0.1", http_port)
    local.connection.request("POST", "/v2/models/m/infer", body,
                             {"Content-Type": "application/json"})
    response = local.connection.getresponse()
    response.read()
    assert response.status == 200, response.status


def grpc_call():
    infer(request)


deadline = time.time() + 120
while True:  # the model loads after the port opens
    try:
        http_call()
        break
    except (AssertionError, ConnectionError):
        if time.time() > deadline:
            raise
        del local.connection
        time.sleep(0.1)
for _ in range(50):
    http_call()
    grpc_call()
latencies = {"http": [], "grpc": []}
for _ in range(CALLS):
    for name, call in (("http", http_call), ("grpc", grpc_call)):
        start = time.perf_counter()
        call()
        latencies[name].append(time.perf_counter() - start)
for name, values in latencies.items():
    values.sort()
    print("%s batch-1 p50 %.3f ms p90 %.3f ms" % (name, statistics.median(values) * 1e3,
                                                    values[int(len(values) * 0.9)] * 1e3))
for name, call in (("http", http_call), ("grpc", grpc_call)) * 2:
    with ThreadPoolExecutor(64) as pool:
        start = time.perf_counter()
        list(pool.map(lambda _: call(), range(CALLS * 4)))
        elapsed = time.perf_counter() - start
    print("%s 64 in flight: %.0f samples/s" % (name, CALLS * 4 / elapsed))
child.terminate()
child.wait()
