// src/otlp against the tests' own decoder and a loopback receiver: both encodings carry every
// span field, the OTEL_* environment is read as the specification says, the exporter retries
// what the OTLP specification calls retryable and nothing else, and the tracer drops (and
// counts) rather than block.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <thread>

#include "otlp/config.h"
#include "otlp/encode.h"
#include "otlp/exporter.h"
#include "tests/trace/otlp_decode.h"
#include "tests/trace/otlp_receiver.h"
#include "trace/tracer.h"

namespace onepass::otlp {
namespace {

using namespace std::chrono_literals;
using testing::DecodedExport;
using testing::OtlpReceiver;

Environment env_of(std::map<std::string, std::string> values) {
  return [values](const char* name) -> std::optional<std::string> {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

std::vector<trace::SpanData> sample_spans() {
  const auto parent =
      trace::parse_traceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
  trace::SpanData server;
  server.trace_id = parent->trace_id;
  server.span_id = trace::random_span_id();
  server.parent_span_id = parent->span_id;
  server.parent_remote = true;
  server.trace_state = "congo=t61rcWkgMzE";
  server.flags = trace::kSampledFlag;
  server.name = "POST /embed";
  server.kind = trace::SpanKind::kServer;
  server.start_unix_ns = 1700000000000000000ULL;
  server.end_unix_ns = 1700000000123456789ULL;
  server.set("http.route", "/embed")
      .set("http.response.status_code", 503)
      .set("ratio", 0.5)
      .set("ok", false)
      .set("text", "caf\xc3\xa9 \"quoted\"");
  server.status = trace::StatusCode::kError;
  server.status_message = "model failed";
  trace::SpanData batch;
  batch.trace_id = trace::random_trace_id();
  batch.span_id = trace::random_span_id();
  batch.flags = trace::kSampledFlag;
  batch.name = "onepass.forward";
  batch.start_unix_ns = 5;
  batch.end_unix_ns = 6;
  batch.set("onepass.batch.tokens", std::int64_t{-3});  // a negative int64 survives too
  batch.links.push_back({server.trace_id, server.span_id, "", trace::kSampledFlag});
  return {server, batch};
}

void expect_decoded(const DecodedExport& decoded, const std::vector<trace::SpanData>& spans) {
  EXPECT_EQ(decoded.resource.at("service.name"), "svc");
  EXPECT_EQ(decoded.scope_name, "onepass");
  ASSERT_EQ(decoded.spans.size(), spans.size());
  const auto& s = decoded.spans[0];
  EXPECT_EQ(s.trace_id, "0af7651916cd43dd8448eb211c80319c");
  EXPECT_EQ(s.span_id, trace::to_hex(spans[0].span_id));
  EXPECT_EQ(s.parent_span_id, "b7ad6b7169203331");
  EXPECT_EQ(s.trace_state, "congo=t61rcWkgMzE");
  EXPECT_EQ(s.name, "POST /embed");
  EXPECT_EQ(s.kind, 2);
  EXPECT_EQ(s.start_unix_ns, 1700000000000000000ULL);
  EXPECT_EQ(s.end_unix_ns, 1700000000123456789ULL);
  EXPECT_EQ(s.attributes.at("http.route"), "/embed");
  EXPECT_EQ(s.attributes.at("http.response.status_code"), "503");
  EXPECT_EQ(s.attributes.at("ratio"), std::to_string(0.5));
  EXPECT_EQ(s.attributes.at("ok"), "false");
  EXPECT_EQ(s.attributes.at("text"), "caf\xc3\xa9 \"quoted\"");
  EXPECT_EQ(s.status_code, 2);
  EXPECT_EQ(s.status_message, "model failed");
  EXPECT_EQ(s.flags, 0x301u);  // sampled, parent known to be remote
  const auto& b = decoded.spans[1];
  EXPECT_EQ(b.parent_span_id, "");
  EXPECT_EQ(b.attributes.at("onepass.batch.tokens"), "-3");
  ASSERT_EQ(b.links.size(), 1u);
  EXPECT_EQ(b.links[0].first, s.trace_id);
  EXPECT_EQ(b.links[0].second, s.span_id);
  EXPECT_EQ(b.flags, 0x101u);
  EXPECT_EQ(b.status_code, 0);
}

TEST(OtlpEncode, ProtobufAndJsonCarryEverySpanField) {
  const Resource resource{{{"service.name", std::string("svc")}}};
  const auto spans = sample_spans();
  expect_decoded(testing::decode_protobuf(encode_protobuf(resource, spans)), spans);
  expect_decoded(testing::decode_json(encode_json(resource, spans)), spans);
}

TEST(OtlpConfig, NothingSetMeansNoTracing) {
  EXPECT_FALSE(tracing_config("", env_of({})).enabled);
  EXPECT_FALSE(tracer_from_environment("", env_of({{"OTEL_SERVICE_NAME", "x"}})));
  EXPECT_FALSE(tracing_config("http://c:4318", env_of({{"OTEL_SDK_DISABLED", "TRUE"}})).enabled);
  EXPECT_FALSE(tracing_config("", env_of({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"},
                                          {"OTEL_TRACES_EXPORTER", "none"}}))
                   .enabled);
}

TEST(OtlpConfig, EndpointsHeadersProtocolAndResource) {
  auto config = tracing_config(
      "", env_of({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/"},
                  {"OTEL_EXPORTER_OTLP_HEADERS", "api-key=a%3Db, x = 1"},
                  {"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x=2"},
                  {"OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"},
                  {"OTEL_RESOURCE_ATTRIBUTES", "service.name=r,deployment.environment=prod"},
                  {"OTEL_SERVICE_NAME", "embedder"},
                  {"OTEL_BSP_MAX_QUEUE_SIZE", "10"},
                  {"OTEL_BSP_SCHEDULE_DELAY", "250"}}));
  ASSERT_TRUE(config.enabled);
  EXPECT_EQ(config.endpoint, "http://collector:4318/v1/traces");
  EXPECT_EQ(config.exporter.protocol, Protocol::kHttpJson);
  const http::Headers expected{{"api-key", "a=b"}, {"x", "2"}};
  EXPECT_EQ(config.exporter.headers, expected);
  std::map<std::string, std::string> resource;
  for (const auto& a : config.exporter.resource.attributes)
    resource[a.key] = std::get<std::string>(a.value);
  EXPECT_EQ(resource.at("service.name"), "embedder");
  EXPECT_EQ(resource.at("deployment.environment"), "prod");
  EXPECT_EQ(config.batch.max_queue_size, 10u);
  EXPECT_EQ(config.batch.max_export_batch_size, 10u);
  EXPECT_EQ(config.batch.schedule_delay, 250ms);

  // The traces endpoint is used as it is; the flag wins over both.
  config =
      tracing_config("", env_of({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:1"},
                                 {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://b:2/custom"}}));
  EXPECT_EQ(config.endpoint, "https://b:2/custom");
  EXPECT_EQ(config.exporter.protocol, Protocol::kHttpProtobuf);
  config = tracing_config("http://flag:3",
                          env_of({{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://b:2/x"}}));
  EXPECT_EQ(config.endpoint, "http://flag:3/v1/traces");
}

TEST(OtlpConfig, RefusesWhatItCannotUseNamingTheVariable) {
  const auto message = [](std::map<std::string, std::string> values) {
    try {
      tracing_config("http://c:4318", env_of(std::move(values)));
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message({{"OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"}}).find("OTEL_EXPORTER_OTLP_PROTOCOL"),
            std::string::npos);
  EXPECT_NE(message({{"OTEL_TRACES_SAMPLER", "maybe"}}).find("OTEL_TRACES_SAMPLER"),
            std::string::npos);
  EXPECT_NE(message({{"OTEL_BSP_MAX_QUEUE_SIZE", "0"}}).find("OTEL_BSP_MAX_QUEUE_SIZE"),
            std::string::npos);
  EXPECT_NE(message({{"OTEL_EXPORTER_OTLP_HEADERS", "novalue"}}).find("OTEL_EXPORTER_OTLP_HEADERS"),
            std::string::npos);
  EXPECT_THROW(tracing_config("ftp://c", env_of({})), std::exception);
}

ExporterOptions options_for(const OtlpReceiver& receiver) {
  ExporterOptions options;
  options.url = http::Url::parse(receiver.url() + "/v1/traces");
  options.headers = {{"authorization", "Bearer k"}};
  options.resource.attributes = {{"service.name", std::string("svc")}};
  options.initial_backoff = 20ms;
  options.timeout = 2s;
  return options;
}

TEST(OtlpExporter, RetriesRetryableStatusesThenDelivers) {
  OtlpReceiver receiver;
  receiver.answer(503, 0ms, 2);  // twice 503, then 200
  HttpExporter exporter(options_for(receiver));
  const auto spans = sample_spans();
  EXPECT_TRUE(exporter.export_spans(spans, std::chrono::steady_clock::now() + 5s));
  const auto exports = receiver.exports();
  ASSERT_EQ(exports.size(), 3u);
  EXPECT_EQ(exports[2].path, "/v1/traces");
  EXPECT_EQ(exports[2].content_type, "application/x-protobuf");
  bool auth = false;
  for (const auto& [name, value] : exports[2].headers)
    auth |= name == "authorization" && value == "Bearer k";
  bool agent = false;
  for (const auto& [name, value] : exports[2].headers)
    agent |= name == "user-agent" && value.rfind("onepass-otlp/", 0) == 0;
  EXPECT_TRUE(agent);  // OTLP exporters name themselves
  EXPECT_TRUE(auth);
  expect_decoded(testing::decode(exports[2]), spans);
}

TEST(OtlpExporter, DoesNotRetryOtherStatusesAndStopsAtTheDeadline) {
  OtlpReceiver receiver;
  receiver.answer(400);
  HttpExporter exporter(options_for(receiver));
  EXPECT_FALSE(exporter.export_spans(sample_spans(), std::chrono::steady_clock::now() + 5s));
  EXPECT_EQ(receiver.count(), 1u);

  // 429 asking for 10 s: more than the deadline leaves, so the batch fails now.
  receiver.answer(429, 0ms, -1, 10);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(exporter.export_spans(sample_spans(), start + 2s));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
  EXPECT_EQ(receiver.count(), 2u);

  // 502 every time: retried with backoff until the deadline.
  receiver.answer(502);
  EXPECT_FALSE(exporter.export_spans(sample_spans(), std::chrono::steady_clock::now() + 400ms));
  EXPECT_GE(receiver.count(), 4u);
}

TEST(OtlpExporter, ACollectorThatIsDownFailsTheBatchInTime) {
  std::string url;
  {
    OtlpReceiver gone;  // a port that was just free, and is closed again
    url = gone.url();
  }
  ExporterOptions options;
  options.url = http::Url::parse(url + "/v1/traces");
  options.initial_backoff = 20ms;
  HttpExporter exporter(options);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(exporter.export_spans(sample_spans(), start + 300ms));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST(Tracer, DropsWhenTheQueueIsFullAndFlushesWhatIsQueued) {
  OtlpReceiver receiver;
  receiver.answer(200, 300ms);  // a slow collector
  trace::BatchOptions batch;
  batch.max_queue_size = 4;
  batch.max_export_batch_size = 2;
  batch.schedule_delay = 60s;  // only a flush or a full batch (2 spans) sends
  const auto before = trace::counters();
  trace::Tracer tracer(trace::Sampler(), batch,
                       std::make_unique<HttpExporter>(options_for(receiver)));
  const auto spans = sample_spans();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 40; ++i) tracer.record(spans[1]);
  // record() never waited for the slow collector.
  EXPECT_LT(std::chrono::steady_clock::now() - start, 200ms);
  EXPECT_TRUE(tracer.flush(std::chrono::steady_clock::now() + 5s));
  const auto after = trace::counters();
  const auto exported = after.exported - before.exported;
  const auto dropped = after.dropped_queue_full - before.dropped_queue_full;
  EXPECT_GT(dropped, 0u);
  EXPECT_EQ(exported + dropped, 40u);
  std::size_t received = 0;
  for (const auto& e : receiver.exports()) received += testing::decode(e).spans.size();
  EXPECT_EQ(received, exported);
}

TEST(Tracer, ShutdownStopsAtItsDeadline) {
  OtlpReceiver receiver;
  receiver.answer(200, 1s);  // slower than the deadlines below
  trace::BatchOptions batch;
  batch.max_export_batch_size = 2;
  batch.schedule_delay = 60s;  // only a flush or a full batch (2 spans) sends
  auto tracer = std::make_unique<trace::Tracer>(
      trace::Sampler(), batch, std::make_unique<HttpExporter>(options_for(receiver)));
  // An export the flush starts gets the flush's deadline: the POST gives up in time.
  const auto failures = trace::counters().export_failures;
  auto start = std::chrono::steady_clock::now();
  tracer->record(sample_spans()[0]);
  tracer->flush(start + 200ms);  // the POST and this wait end at the same deadline
  // The POST gave up then, long before the collector's answer would have come.
  for (int i = 0; i < 50 && trace::counters().export_failures == failures; ++i)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(trace::counters().export_failures, failures + 1);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 700ms);
  // An export already waiting on the collector when shutdown begins is not waited for.
  tracer->record(sample_spans()[0]);
  tracer->record(sample_spans()[1]);
  ASSERT_TRUE(receiver.wait_for(2, 2s));
  start = std::chrono::steady_clock::now();
  EXPECT_FALSE(tracer->shutdown(start + 200ms));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 700ms);
  tracer.reset();  // waits for that POST, then ends

  // With a prompt collector, shutdown sends what is queued and stops.
  OtlpReceiver prompt;
  trace::Tracer quick(trace::Sampler(), trace::BatchOptions{},
                      std::make_unique<HttpExporter>(options_for(prompt)));
  quick.record(sample_spans()[0]);
  EXPECT_TRUE(quick.shutdown(std::chrono::steady_clock::now() + 5s));
  ASSERT_EQ(prompt.count(), 1u);
  EXPECT_EQ(testing::decode(prompt.exports()[0]).spans.size(), 1u);
}

TEST(Tracer, ChildrenShareTheTraceAndFollowTheSampler) {
  trace::Tracer tracer(trace::Sampler::from_names("parentbased_always_off", ""), {}, nullptr);
  auto parent = trace::parse_traceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
  parent->trace_state = "a=b";
  const auto child = tracer.start(&*parent);
  EXPECT_EQ(child.trace_id, parent->trace_id);
  EXPECT_NE(child.span_id, parent->span_id);
  EXPECT_TRUE(child.sampled());
  EXPECT_EQ(child.trace_state, "a=b");
  const auto root = tracer.start(nullptr);
  EXPECT_NE(root.trace_id, parent->trace_id);
  EXPECT_FALSE(root.sampled());
}

}  // namespace
}  // namespace onepass::otlp
