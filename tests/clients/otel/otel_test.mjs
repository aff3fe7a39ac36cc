// A real OpenTelemetry client starts the trace: the Node SDK (@opentelemetry/sdk-node, exact
// version in package.json; Node 18 and 20) with its HTTP instrumentation wraps a call to
// `onepass serve` in a CLIENT span and sends its `traceparent`. onepass exports over OTLP/HTTP
// (http/json) to a loopback receiver in this process, and its request span must be the child of
// that CLIENT span, in the client's trace, with its phases under it and its forward pass linked.
// usage: node otel_test.mjs ONEPASS_BINARY FIXTURE_MODELS_DIR
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { NodeSDK, api, tracing } from "@opentelemetry/sdk-node";
import { HttpInstrumentation } from "@opentelemetry/instrumentation-http";
import { check, startServe } from "./serve.mjs";

const [binary, models] = process.argv.slice(2);

// The collector: every OTLP/JSON export onepass sends.
const received = [];
const collector = createServer((req, res) => {
  let body = "";
  req.on("data", (d) => (body += d));
  req.on("end", () => {
    if (req.url === "/v1/traces" && req.headers["content-type"] === "application/json")
      received.push(JSON.parse(body));
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
});
await new Promise((r) => collector.listen(0, "127.0.0.1", r));
const collectorUrl = `http://127.0.0.1:${collector.address().port}`;

const memory = new tracing.InMemorySpanExporter();
const sdk = new NodeSDK({
  serviceName: "otel-client-test",
  spanProcessors: [new tracing.SimpleSpanProcessor(memory)],
  instrumentations: [new HttpInstrumentation()],
});
sdk.start();
// Required after start(), so that the instrumentation has patched it.
const http = createRequire(import.meta.url)("node:http");

process.env.OTEL_EXPORTER_OTLP_PROTOCOL = "http/json";
process.env.OTEL_BSP_SCHEDULE_DELAY = "50";
const server = await startServe(binary, [
  "--model", `nli=${models}/bert-tiny-nli`, "--otlp-endpoint", collectorUrl,
]);

function post(path, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: "127.0.0.1", port: server.port, path, method: "POST",
        headers: { "content-type": "application/json" } },
      (res) => {
        let text = "";
        res.on("data", (d) => (text += d));
        res.on("end", () => resolve({ status: res.statusCode, text }));
      });
    req.on("error", reject);
    req.end(body);
  });
}

try {
  const tracer = api.trace.getTracer("otel-client-test");
  const answer = await tracer.startActiveSpan("classify a pair", async (span) => {
    try {
      return await post("/predict", JSON.stringify({ inputs: "a man is eating food" }));
    } finally {
      span.end();
    }
  });
  check(answer.status === 200, `POST /predict answered ${answer.status}: ${answer.text}`);

  const client = memory.getFinishedSpans().find((s) => s.kind === api.SpanKind.CLIENT);
  check(client !== undefined, "the HTTP instrumentation recorded no CLIENT span");
  const traceId = client.spanContext().traceId;
  const clientSpanId = client.spanContext().spanId;

  // onepass's spans of that trace, as the receiver decoded them.
  const spansOf = () => received.flatMap((r) => r.resourceSpans.flatMap(
    (rs) => rs.scopeSpans.flatMap((ss) => ss.spans)));
  let request;
  for (let i = 0; i < 200 && !request; ++i) {
    request = spansOf().find((s) => s.traceId === traceId && s.kind === 2);
    if (!request) await new Promise((r) => setTimeout(r, 25));
  }
  check(request !== undefined, `onepass exported no server span in the client's trace ${traceId}`);
  check(request.parentSpanId === clientSpanId,
        `onepass's span has parent ${request.parentSpanId}, the client's span is ${clientSpanId}`);
  check(request.name === "POST /predict", `server span named ${request.name}`);
  const attribute = (s, key) => s.attributes.find((a) => a.key === key)?.value;
  check(attribute(request, "http.response.status_code")?.intValue === "200",
        "the server span's status code");
  const children = spansOf().filter((s) => s.parentSpanId === request.spanId).map((s) => s.name);
  for (const phase of ["onepass.tokenize", "onepass.inference", "onepass.format"])
    check(children.includes(phase), `no ${phase} under the request span (got ${children})`);
  const forward = spansOf().find((s) => s.name === "onepass.forward" &&
      (s.links ?? []).some((l) => l.traceId === traceId && l.spanId === request.spanId));
  check(forward !== undefined, "no forward pass linked to the request span");
  console.log(`ok: onepass's request span ${request.spanId} is the child of the client's ` +
              `${clientSpanId} in trace ${traceId}`);
} finally {
  server.stop();
  await sdk.shutdown();
  collector.close();
}
