"""KServe's v2 gRPC protocol with Debian's grpcio (python3-grpcio), a client not written here,
against the real `onepass serve --grpc-port`: one server for the whole file, which
tei_checks.py also drives through TEI's tei.v1 services.

The message classes come from the repository's .proto through protoc's own Python generator at
test time (python3-grpc-tools is too old for Debian's protobuf runtime), and the calls go through
grpcio's generic unary-unary stubs, so the wire names and field numbers are the ones a Triton or
KServe client uses.

usage: kserve_grpc_test.py ONEPASS PROTO_DIR FIXTURES_DIR WORK_DIR [PROTOC]
"""

import concurrent.futures
import importlib
import json
import os
import re
import signal
import struct
import subprocess
import sys
import threading
import time
import urllib.request

import grpc
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ONEPASS, PROTO_DIR, FIXTURES, WORK = sys.argv[1:5]
PROTOC = sys.argv[5] if len(sys.argv) > 5 else "protoc"
KEY = "grpc-test-key"
AUTH = (("authorization", "Bearer " + KEY),)
SERVICE = "/inference.GRPCInferenceService/"

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL: " + message, file=sys.stderr)
    return condition


def load_messages():
    os.makedirs(WORK, exist_ok=True)
    subprocess.run([PROTOC, "-I", PROTO_DIR, "--python_out", WORK, "grpc_predict_v2.proto"],
                   check=True)
    sys.path.insert(0, WORK)
    return importlib.import_module("grpc_predict_v2_pb2")


pb = load_messages()


# An OTLP/HTTP JSON receiver on loopback: the server exports its spans here, so the trace of a
# call that carries `traceparent` metadata can be checked (docs/tracing.md).
received_spans = []
spans_lock = threading.Lock()


class OtlpReceiver(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            doc = json.loads(body)
            with spans_lock:
                for rs in doc.get("resourceSpans", []):
                    for ss in rs.get("scopeSpans", []):
                        received_spans.extend(ss.get("spans", []))
        except ValueError:
            pass
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


receiver = ThreadingHTTPServer(("127.0.0.1", 0), OtlpReceiver)
threading.Thread(target=receiver.serve_forever, daemon=True).start()


def start_server():
    args = [ONEPASS, "serve", "--host", "127.0.0.1", "--port", "0", "--grpc-port", "0",
            "--model", "nli=" + os.path.join(FIXTURES, "bert-tiny-nli"),
            "--model", "embed=" + os.path.join(FIXTURES, "bert-tiny-embed"),
            "--model", "ner=" + os.path.join(FIXTURES, "bert-tiny-ner"),
            "--model", "rerank=" + os.path.join(FIXTURES, "bert-tiny-rerank"),
            "--model", "splade=" + os.path.join(FIXTURES, "bert-tiny-splade"),
            "--api-key", KEY, "--max-concurrent-requests", "64", "--enable-model-management",
            "--payload-limit", str(1 << 20), "--log-level", "warn"]
    # The log goes to a file: a pipe nobody reads would fill and stall the server.
    log = open(os.path.join(WORK, "serve.log"), "w")
    env = dict(os.environ,
               OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="http://127.0.0.1:%d/v1/traces"
               % receiver.server_address[1],
               OTEL_EXPORTER_OTLP_PROTOCOL="http/json", OTEL_BSP_SCHEDULE_DELAY="50")
    child = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=log, text=True, env=env)
    grpc_port = http_port = None
    for line in child.stdout:
        m = re.match(r"grpc listening on 127\.0\.0\.1:(\d+)", line)
        if m:
            grpc_port = int(m.group(1))
        m = re.match(r"listening on 127\.0\.0\.1:(\d+)", line)
        if m:
            http_port = int(m.group(1))
            break
    if grpc_port is None:
        child.kill()
        raise SystemExit("onepass serve printed no gRPC address; see " + log.name)
    return child, grpc_port, http_port


server, port, http_port = start_server()
channel = grpc.insecure_channel("127.0.0.1:%d" % port,
                                options=[("grpc.max_send_message_length", 64 << 20),
                                         ("grpc.max_receive_message_length", 64 << 20)])
grpc.channel_ready_future(channel).result(timeout=30)


def rpc(name, response_class):
    return channel.unary_unary(SERVICE + name,
                               request_serializer=lambda m: m.SerializeToString(),
                               response_deserializer=response_class.FromString)


ServerLive = rpc("ServerLive", pb.ServerLiveResponse)
ServerReady = rpc("ServerReady", pb.ServerReadyResponse)
ServerMetadata = rpc("ServerMetadata", pb.ServerMetadataResponse)
ModelReady = rpc("ModelReady", pb.ModelReadyResponse)
ModelMetadata = rpc("ModelMetadata", pb.ModelMetadataResponse)
ModelInfer = rpc("ModelInfer", pb.ModelInferResponse)
RepositoryModelLoad = rpc("RepositoryModelLoad", pb.RepositoryModelLoadResponse)
RepositoryModelUnload = rpc("RepositoryModelUnload", pb.RepositoryModelUnloadResponse)


def golden(folder):
    with open(os.path.join(FIXTURES, folder, "golden.json")) as f:
        return json.load(f)


def raw_bytes(values):
    return b"".join(struct.pack("<I", len(v)) + v for v in values)


def ids_request(model, cases, raw=False, datatype="INT64"):
    """Every case's ids, padded to the longest with attention_mask 0."""
    width = max(len(c["input_ids"]) for c in cases)
    tensors = {"input_ids": [], "attention_mask": [], "token_type_ids": []}
    for c in cases:
        n = len(c["input_ids"])
        types = c.get("token_type_ids", [0] * n)
        tensors["input_ids"] += c["input_ids"] + [0] * (width - n)
        tensors["attention_mask"] += [1] * n + [0] * (width - n)
        tensors["token_type_ids"] += types + [0] * (width - n)
    request = pb.ModelInferRequest(model_name=model, id="ids-%d" % len(cases))
    for name, values in tensors.items():
        tensor = request.inputs.add(name=name, datatype=datatype, shape=[len(cases), width])
        if raw:
            request.raw_input_contents.append(
                struct.pack("<%d%s" % (len(values), "q" if datatype == "INT64" else "i"), *values))
        elif datatype == "INT64":
            tensor.contents.int64_contents.extend(values)
        else:
            tensor.contents.int_contents.extend(values)
    return request


def text_request(model, texts, pairs=None, raw=False, column=False):
    request = pb.ModelInferRequest(model_name=model)
    for name, values in (("text", texts), ("text_pair", pairs)):
        if values is None:
            continue
        encoded = [v.encode() for v in values]
        tensor = request.inputs.add(name=name, datatype="BYTES",
                                    shape=[len(values), 1] if column else [len(values)])
        if raw:
            request.raw_input_contents.append(raw_bytes(encoded))
        else:
            tensor.contents.bytes_contents.extend(encoded)
    return request


def fp32_output(response, index=0):
    out = response.outputs[index]
    if len(response.raw_output_contents) > 0:
        raw = response.raw_output_contents[index]
        values = list(struct.unpack("<%df" % (len(raw) // 4), raw))
    else:
        values = list(out.contents.fp32_contents)
    return list(out.shape), values


def close(got, want, tolerance=1e-4):
    return len(got) == len(want) and all(abs(g - w) <= tolerance for g, w in zip(got, want))


def status_of(call):
    try:
        call()
    except grpc.RpcError as e:
        return e.code(), e.details()
    return grpc.StatusCode.OK, ""


# --- health and metadata ------------------------------------------------------------------
check(ServerLive(pb.ServerLiveRequest()).live, "ServerLive answers live without a key")
# The models load after the ports open: ready once they have (no key needed).
deadline = time.time() + 120
while not ServerReady(pb.ServerReadyRequest()).ready and time.time() < deadline:
    time.sleep(0.05)
check(ServerReady(pb.ServerReadyRequest()).ready, "ServerReady answers ready without a key")
meta = ServerMetadata(pb.ServerMetadataRequest(), metadata=AUTH)
check(meta.name == "onepass" and meta.version != "", "ServerMetadata names onepass: %s" % meta)
check(ModelReady(pb.ModelReadyRequest(name="nli"), metadata=AUTH).ready, "nli is ready")
model_meta = ModelMetadata(pb.ModelMetadataRequest(name="nli"), metadata=AUTH)
check([o.name for o in model_meta.outputs] == ["logits"] and
      list(model_meta.outputs[0].shape) == [-1, 3], "nli's metadata: %s" % model_meta.outputs)
check([i.name for i in model_meta.inputs][:2] == ["text", "text_pair"], "inputs listed")

# --- every golden case of the classifier, as ids (contents INT64, raw INT32) and as text ----
nli = golden("bert-tiny-nli")
cases = nli["cases"]
for start in range(0, len(cases), 32):  # --max-client-batch-size 32
    chunk = cases[start:start + 32]
    for raw, datatype in ((False, "INT64"), (True, "INT32")):
        response = ModelInfer(ids_request("nli", chunk, raw, datatype), metadata=AUTH)
        shape, values = fp32_output(response)
        check(response.model_name == "nli" and response.id == "ids-%d" % len(chunk),
              "model name and id echoed")
        check(response.outputs[0].name == "logits" and response.outputs[0].datatype == "FP32",
              "the output is logits FP32")
        check(len(response.raw_output_contents) == (1 if raw else 0),
              "raw in, raw out; contents in, contents out")
        check(shape == [len(chunk), 3], "logits shape %s" % shape)
        for i, c in enumerate(chunk):
            check(close(values[i * 3:i * 3 + 3], c["logits"]),
                  "nli %s ids raw=%s: %s vs %s" % (c["id"], raw, values[i * 3:i * 3 + 3],
                                                   c["logits"]))

# Text cases the tokenizer reads whole (no truncation; the empty text is refused as over REST),
# and whose golden ids are the ones tokenizer.json gives (not so where the slow tokenizer that
# made the golden differs: "fast_input_ids").
readable = [c for c in cases if "truncation" not in c and "fast_input_ids" not in c]
singles = [c for c in readable if "text" in c and c["text"]]
pairs = [c for c in readable if "pair" in c and all(c["pair"])]
for raw, column in ((False, False), (True, True)):
    response = ModelInfer(text_request("nli", [c["text"] for c in singles], raw=raw,
                                       column=column), metadata=AUTH)
    shape, values = fp32_output(response)
    check(shape == [len(singles), 3], "text logits shape %s" % shape)
    for i, c in enumerate(singles):
        check(close(values[i * 3:i * 3 + 3], c["logits"]), "nli text %s raw=%s" % (c["id"], raw))
    response = ModelInfer(text_request("nli", [c["pair"][0] for c in pairs],
                                       [c["pair"][1] for c in pairs], raw=raw, column=column),
                          metadata=AUTH)
    shape, values = fp32_output(response)
    for i, c in enumerate(pairs):
        check(close(values[i * 3:i * 3 + 3], c["logits"]), "nli pair %s raw=%s" % (c["id"], raw))

# --- every golden case of the embedder (mean pooling) -----------------------------------
embed = golden("bert-tiny-embed")
for start in range(0, len(embed["cases"]), 32):
    chunk = embed["cases"][start:start + 32]
    response = ModelInfer(ids_request("embed", chunk, raw=True), metadata=AUTH)
    shape, values = fp32_output(response)
    width = len(chunk[0]["embedding"]["mean"])
    check(response.outputs[0].name == "embeddings" and shape == [len(chunk), width],
          "embeddings shape %s" % shape)
    for i, c in enumerate(chunk):
        check(close(values[i * width:(i + 1) * width], c["embedding"]["mean"]),
              "embed %s" % c["id"])

# --- a token classifier: every output, raw and in contents, as REST answers the same inputs --
def rest_infer(model, body):
    request = urllib.request.Request(
        "http://127.0.0.1:%d/v2/models/%s/infer" % (http_port, model), json.dumps(body).encode(),
        {"Content-Type": "application/json", "Authorization": "Bearer " + KEY})
    return json.load(urllib.request.urlopen(request))


def output_values(response, index):
    out = response.outputs[index]
    if len(response.raw_output_contents) == 0:
        return (list(out.contents.fp32_contents) or list(out.contents.int64_contents) or
                [b.decode() for b in out.contents.bytes_contents])
    raw = response.raw_output_contents[index]
    if out.datatype == "FP32":
        return list(struct.unpack("<%df" % (len(raw) // 4), raw))
    if out.datatype == "INT64":
        return list(struct.unpack("<%dq" % (len(raw) // 8), raw))
    values, at = [], 0
    while at < len(raw):
        (length,) = struct.unpack_from("<I", raw, at)
        values.append(raw[at + 4:at + 4 + length].decode())
        at += 4 + length
    return values


ner_texts = ["John Smith lives in Berlin.", "Hello"]
rest = rest_infer("ner", {"inputs": [{"name": "text", "shape": [2], "datatype": "BYTES",
                                      "data": ner_texts}]})
for raw in (False, True):
    response = ModelInfer(text_request("ner", ner_texts, raw=raw), metadata=AUTH)
    names = [o.name for o in response.outputs]
    check(names == [o["name"] for o in rest["outputs"]], "ner outputs %s" % names)
    for i, want in enumerate(rest["outputs"]):
        out = response.outputs[i]
        check(list(out.shape) == want["shape"] and out.datatype == want["datatype"],
              "ner %s shape %s" % (out.name, list(out.shape)))
        got = output_values(response, i)
        if out.datatype == "FP32":
            check(close(got, want["data"], 1e-6), "ner %s raw=%s as REST" % (out.name, raw))
        else:
            check(got == want["data"], "ner %s raw=%s: %s vs %s" % (out.name, raw, got, want["data"]))

# --- 64 concurrent calls, each its own answer ----------------------------------------------
futures = []
for k in range(64):
    c = cases[k % len(cases)]
    futures.append((c, ModelInfer.future(ids_request("nli", [c], raw=k % 2 == 1), metadata=AUTH)))
for c, future in futures:
    shape, values = fp32_output(future.result(timeout=120))
    check(shape == [1, 3] and close(values, c["logits"]), "concurrent %s" % c["id"])

# --- errors: the status and a message, and the server keeps serving -----------------------
def infer_status(request, metadata=AUTH, **kwargs):
    return status_of(lambda: ModelInfer(request, metadata=metadata, **kwargs))


one = ids_request("nli", cases[:1])
code, _ = infer_status(one, metadata=())
check(code == grpc.StatusCode.UNAUTHENTICATED, "no key: %s" % code)
code, _ = infer_status(one, metadata=(("authorization", "Bearer wrong"),))
check(code == grpc.StatusCode.UNAUTHENTICATED, "wrong key: %s" % code)
code, _ = status_of(lambda: ServerMetadata(pb.ServerMetadataRequest()))
check(code == grpc.StatusCode.UNAUTHENTICATED, "metadata needs the key too: %s" % code)

code, message = infer_status(ids_request("nope", cases[:1]))
check(code == grpc.StatusCode.NOT_FOUND and "nope" in message, "unknown model: %s" % code)
code, _ = infer_status(pb.ModelInferRequest(model_name="nope"))  # no inputs either
check(code == grpc.StatusCode.NOT_FOUND, "an unknown model is found missing first: %s" % code)
code, _ = status_of(lambda: ModelMetadata(pb.ModelMetadataRequest(name="nope"), metadata=AUTH))
check(code == grpc.StatusCode.NOT_FOUND, "unknown model's metadata: %s" % code)

bad = pb.ModelInferRequest(model_name="nli")
bad.inputs.add(name="pixels", datatype="FP32", shape=[1]).contents.fp32_contents.append(1.0)
code, message = infer_status(bad)
check(code == grpc.StatusCode.INVALID_ARGUMENT and "unknown input 'pixels'" in message,
      "unknown input: %s %s" % (code, message))

outside = ids_request("nli", cases[:1])
outside.inputs[0].contents.int64_contents[1] = 10 ** 6
code, message = infer_status(outside)
check(code == grpc.StatusCode.INVALID_ARGUMENT and message, "id outside the vocabulary: %s" % code)

asked = ids_request("nli", cases[:1])
asked.outputs.add(name="embeddings")
code, message = infer_status(asked)
check(code == grpc.StatusCode.INVALID_ARGUMENT and "unknown output" in message,
      "unknown output: %s %s" % (code, message))

cut = text_request("nli", ["a text"], raw=True)
cut.raw_input_contents[0] = cut.raw_input_contents[0][:-2]
code, message = infer_status(cut)
check(code == grpc.StatusCode.INVALID_ARGUMENT and "raw_input_contents" in message,
      "a raw BYTES element cut short: %s %s" % (code, message))

long_text = text_request("nli", ["word " * 2000])
code, message = infer_status(long_text)
check(code == grpc.StatusCode.INVALID_ARGUMENT, "an over-long text: %s %s" % (code, message))

# A message four times the server's HTTP/2 stream window (256 KiB) arrives whole: the window
# reopens as it comes. It is refused for its length, not lost to the deadline.
code, message = infer_status(text_request("nli", ["word " * 200000]), timeout=20)
check(code == grpc.StatusCode.INVALID_ARGUMENT, "a 1 MB message: %s %s" % (code, message))

huge = text_request("nli", ["x" * (2 << 20)])
code, _ = infer_status(huge)
check(code == grpc.StatusCode.RESOURCE_EXHAUSTED, "past --payload-limit: %s" % code)

# 32 texts of 300 tokens take far longer than a millisecond: the deadline passes in flight.
long_case = next(c for c in cases if c["id"] == "long_300")
code, _ = infer_status(text_request("nli", [long_case["text"]] * 32), timeout=0.001)
check(code == grpc.StatusCode.DEADLINE_EXCEEDED, "a deadline that passed: %s" % code)

# Under load, calls with a 1 ms deadline are DEADLINE_EXCEEDED (the ones that reached the
# runtime's queue are dropped there before their forward pass, onepass_expired_requests_total),
# the load itself is answered in full, and the server keeps serving.
def expired_total():
    text = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % http_port).read().decode()
    m = re.search(r'^onepass_expired_requests_total\{model="nli"\} (\d+)', text, re.M)
    return int(m.group(1)) if m else None


expired_before = expired_total()
check(expired_before is not None, "/metrics has onepass_expired_requests_total for nli")
busy = text_request("nli", [long_case["text"]] * 8)
load = [ModelInfer.future(busy, metadata=AUTH) for _ in range(24)]
hurried = [ModelInfer.future(text_request("nli", [long_case["text"]]), metadata=AUTH,
                             timeout=0.001) for _ in range(16)]
for future in hurried:
    code, _ = status_of(future.result)
    check(code == grpc.StatusCode.DEADLINE_EXCEEDED, "a 1 ms deadline under load: %s" % code)
for future in load:
    shape, _ = fp32_output(future.result(timeout=120))
    check(shape == [8, 3], "the load beside the hurried calls: shape %s" % shape)
shape, values = fp32_output(ModelInfer(ids_request("nli", cases[:1]), metadata=AUTH))
check(close(values, cases[0]["logits"]), "still serving after the deadlines")
expired_after = expired_total()
check(expired_after is not None and expired_after >= expired_before,
      "the expired count never goes down: %s -> %s" % (expired_before, expired_after))
print("deadline case: %s of 16 hurried calls dropped in the runtime's queue"
      % (expired_after - expired_before if expired_after is not None else "?"))

# --- the repository: unload, then load back from the folder it was served from ------------
unloaded = RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name="embed"), metadata=AUTH)
check(unloaded.model_name == "embed" and unloaded.isUnloaded, "unload: %s" % unloaded)
code, _ = infer_status(ids_request("embed", embed["cases"][:1]))
check(code == grpc.StatusCode.NOT_FOUND, "an unloaded model: %s" % code)
code, _ = status_of(lambda: RepositoryModelUnload(
    pb.RepositoryModelUnloadRequest(model_name="embed"), metadata=AUTH))
check(code == grpc.StatusCode.NOT_FOUND, "unload twice: %s" % code)
loaded = RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name="embed"), metadata=AUTH,
                             timeout=120)
check(loaded.model_name == "embed" and loaded.isLoaded, "load: %s" % loaded)
first = embed["cases"][0]
shape, values = fp32_output(ModelInfer(ids_request("embed", [first]), metadata=AUTH))
check(close(values, first["embedding"]["mean"]), "embed answers its golden after the reload")
code, _ = status_of(lambda: RepositoryModelLoad(
    pb.RepositoryModelLoadRequest(model_name="never-served"), metadata=AUTH))
check(code == grpc.StatusCode.NOT_FOUND, "load a name never served: %s" % code)

# Admission: far more calls than --max-concurrent-requests 64 at once; the ones past the limit
# are RESOURCE_EXHAUSTED, the rest answered in full.
heavy = text_request("nli", [long_case["text"]] * 8)
flood = [ModelInfer.future(heavy, metadata=AUTH) for _ in range(200)]
refused = answered = 0
for future in flood:
    try:
        shape, _ = fp32_output(future.result(timeout=300))
        answered += check(shape == [8, 3], "flood answer shape %s" % shape)
    except grpc.RpcError as e:
        refused += check(e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and
                         "too many requests in flight" in e.details(),
                         "flood refusal: %s %s" % (e.code(), e.details()))
check(refused > 0 and answered > 0, "flood: %d refused, %d answered" % (refused, answered))

# --- tracing: a call's server span is the child of its `traceparent` metadata, and the
# runtime's spans of its request are the server span's children or link to it -------------------
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
ModelInfer(ids_request("nli", cases[:2]), metadata=AUTH + (
    ("traceparent", "00-%s-%s-01" % (TRACE_ID, PARENT_ID)),))
server_span = None
deadline = time.time() + 10
while time.time() < deadline:
    with spans_lock:
        traced = [sp for sp in received_spans if sp.get("traceId") == TRACE_ID]
    server_span = next((sp for sp in traced if sp.get("parentSpanId") == PARENT_ID), None)
    if server_span is not None and any(sp.get("parentSpanId") == server_span["spanId"]
                                       for sp in traced):
        break
    time.sleep(0.05)
if check(server_span is not None, "no server span is the child of the call's traceparent"):
    check(server_span["name"] == "inference.GRPCInferenceService/ModelInfer",
          "server span name %s" % server_span["name"])
    check(server_span["kind"] == 2, "server span kind %s" % server_span["kind"])
    attributes = {a["key"]: a["value"] for a in server_span.get("attributes", [])}
    check(attributes.get("rpc.system") == {"stringValue": "grpc"},
          "rpc.system %s" % attributes.get("rpc.system"))
    check(attributes.get("gen_ai.request.model") == {"stringValue": "nli"},
          "model attribute %s" % attributes.get("gen_ai.request.model"))
    with spans_lock:
        children = [sp for sp in received_spans if sp.get("parentSpanId") == server_span["spanId"]]
        linked = [sp for sp in received_spans
                  if any(link.get("spanId") == server_span["spanId"]
                         for link in sp.get("links", []))]
    check(len(children) > 0, "no runtime span is a child of the gRPC call's span")
    check(len(linked) > 0, "no forward-pass span links to the gRPC call's span")

# --- TEI's tei.v1 services on the same port (tei_checks.py) --------------------------------
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tei_checks  # noqa: E402


def spans_now():
    with spans_lock:
        return list(received_spans)


tei = tei_checks.TeiChecks(channel, http_port, KEY, FIXTURES,
                           os.path.join(PROTO_DIR, "..", "tei_grpc"), WORK, PROTOC, check,
                           spans_now)
tei_heavy, TeiRerank = tei.run()

# --- the bench's gRPC client against a gRPC server not written here --------------------------
# `onepass bench` speaks gRPC on onepass's own HTTP/2 (src/http2), as `serve` does. Here grpcio's
# server (gRPC C-core: HPACK with its dynamic table and Huffman strings, its pings and window
# updates, trailers) stands between the bench and onepass, a generic proxy that forwards each
# call's raw messages and metadata to onepass and brings its answers and status back; the bench
# checks every answer against the fixture's outputs.
FORWARDED = ("authorization", "x-request-id", "x-amzn-sagemaker-target-model")


class Proxy(grpc.GenericRpcHandler):
    def service(self, details):
        method = details.method
        metadata = [(k, v) for k, v in details.invocation_metadata if k in FORWARDED]

        def unary(request, context):
            try:
                return channel.unary_unary(method)(request, metadata=metadata, timeout=60)
            except grpc.RpcError as e:
                context.abort(e.code(), e.details())

        def stream(requests, context):
            try:
                yield from channel.stream_stream(method)(requests, metadata=metadata, timeout=60)
            except grpc.RpcError as e:
                context.abort(e.code(), e.details())

        if method.endswith("Stream"):
            return grpc.stream_stream_rpc_method_handler(stream)
        return grpc.unary_unary_rpc_method_handler(unary)


proxy = grpc.server(concurrent.futures.ThreadPoolExecutor(max_workers=16))
proxy.add_generic_rpc_handlers((Proxy(),))
proxy_port = proxy.add_insecure_port("127.0.0.1:0")
proxy.start()
for dialect, model, extra in (("kserve-grpc", ["--model", "nli"], []),
                              ("tei-grpc", ["--target-model", "embed"], ["--batch-size", "4"])):
    results = os.path.join(WORK, "bench-%s.json" % dialect)
    run = subprocess.run([ONEPASS, "bench", "--endpoint", "grpc://127.0.0.1:%d" % proxy_port,
                          "--dialect", dialect, "--api-key", KEY, "-n", "64", "--concurrency",
                          "16", "--warmup", "0", "--no-progress", "-o", results] + model + extra,
                         capture_output=True, text=True, timeout=120)
    check(run.returncode == 0, "bench %s through grpcio's server: exit %d %s" %
          (dialect, run.returncode, run.stderr[-500:]))
    if run.returncode == 0:
        measured = json.load(open(results))["endpoints"][0]["runs"][0]
        check(measured["errors"]["total"] == 0 and not measured["mismatches"] and
              measured["requests"] == 64,
              "bench %s through grpcio's server: %s errors, %s mismatches, %s requests" %
              (dialect, measured["errors"], measured["mismatches"], measured["requests"]))
proxy.stop(0)

# The server still answers after every error above.
shape, values = fp32_output(ModelInfer(ids_request("nli", cases[:1]), metadata=AUTH))
check(close(values, cases[0]["logits"]), "still serving")

# --- drain: calls in flight when SIGTERM comes are answered, then the process exits 0 -------
inflight = [ModelInfer.future(heavy, metadata=AUTH) for _ in range(16)]
tei_inflight = [TeiRerank.future(tei_heavy, metadata=tei.md("rerank")) for _ in range(8)]
time.sleep(0.05)
server.send_signal(signal.SIGTERM)
done_ok = 0
for future in inflight:
    try:
        shape, _ = fp32_output(future.result(timeout=120))
        done_ok += shape == [8, 3]
    except grpc.RpcError as e:
        # Sent after the drain began: refused, never cut off half-way.
        check(e.code() == grpc.StatusCode.UNAVAILABLE, "drain: %s %s" % (e.code(), e.details()))
check(done_ok > 0, "drain: calls in flight answered (%d)" % done_ok)
tei_ok = 0
for future in tei_inflight:
    try:
        tei_ok += len(future.result(timeout=120).ranks) == 8
    except grpc.RpcError as e:
        check(e.code() == grpc.StatusCode.UNAVAILABLE, "TEI drain: %s %s" % (e.code(), e.details()))
check(tei_ok > 0, "drain: TEI calls in flight answered (%d)" % tei_ok)
check(server.wait(timeout=60) == 0, "serve exits 0 after the drain")

if failures:
    print("%d failures" % len(failures), file=sys.stderr)
    sys.exit(1)
print("kserve gRPC client test passed (flood: %d refused, %d answered)" % (refused, answered))
