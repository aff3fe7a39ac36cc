// Tracing end to end: `onepass serve` exporting to a loopback OTLP receiver in this process.
// The caller's traceparent makes the request span its child, the runtime's phases are children
// of the request span, each forward pass is linked to the requests it served, the log line names
// the trace; and a collector that refuses, is slow or is down costs spans (counted in /metrics),
// never requests.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/server/metrics_scrape.h"
#include "tests/support/http_client.h"
#include "tests/support/paths.h"
#include "tests/support/serve_process.h"
#include "tests/trace/otlp_decode.h"
#include "tests/trace/otlp_receiver.h"

namespace onepass::testing {
namespace {

using namespace std::chrono_literals;

constexpr const char* kBody = R"({"inputs":"a man is eating food"})";
constexpr const char* kCallerA = "0af7651916cd43dd8448eb211c80319c";
constexpr const char* kCallerB = "4bf92f3577b34da6a3ce929d0e0e4736";
constexpr const char* kUnsampled = "11111111111111111111111111111111";
constexpr const char* kParentSpan = "b7ad6b7169203331";

HttpHeaders traced(const std::string& trace_id, const char* flags = "01",
                   const std::string& state = {}) {
  HttpHeaders headers{{{"traceparent", "00-" + trace_id + "-" + kParentSpan + "-" + flags}}};
  if (!state.empty()) headers.fields.emplace_back("tracestate", state);
  return headers;
}

std::vector<DecodedSpan> spans_of(const std::vector<DecodedSpan>& spans, const std::string& trace) {
  std::vector<DecodedSpan> out;
  std::copy_if(spans.begin(), spans.end(), std::back_inserter(out),
               [&](const DecodedSpan& s) { return s.trace_id == trace; });
  return out;
}

// Polls the receiver until `done(spans)` holds; the spans seen last.
template <class Done>
std::vector<DecodedSpan> wait_spans(const OtlpReceiver& receiver, Done done) {
  std::vector<DecodedSpan> spans;
  for (int i = 0; i < 200; ++i) {
    spans = all_spans(receiver.exports());
    if (done(spans)) break;
    std::this_thread::sleep_for(25ms);
  }
  return spans;
}

double metric(const ServeProcess& server, const std::string& name, const std::string& label = {}) {
  return metric_sum(get(server.port(), "/metrics").body, name, label);
}

const DecodedSpan* find_named(const std::vector<DecodedSpan>& spans, const std::string& name) {
  for (const auto& s : spans)
    if (s.name == name) return &s;
  return nullptr;
}

TEST(TraceServe, RequestSpansFollowTheCallerAndLinkTheirBatch) {
  OtlpReceiver receiver;
  // --max-wait-ms lets the two concurrent requests share a batch.
  ServeProcess server({"--model", "nli=" + fixture_model("bert-tiny-nli"), "--max-wait-ms", "50",
                       "--otlp-endpoint", receiver.url(), "--log-format", "json"},
                      {"OTEL_BSP_SCHEDULE_DELAY=50", "OTEL_SERVICE_NAME=embedder-under-test"});
  ASSERT_TRUE(server.wait_ready());
  std::thread other([&] {
    EXPECT_EQ(post_json(server.port(), "/predict", kBody, traced(kCallerB)).status, 200);
  });
  EXPECT_EQ(post_json(server.port(), "/predict", kBody, traced(kCallerA, "01", "congo=t61rcWkgMzE"))
                .status,
            200);
  other.join();
  EXPECT_EQ(post_json(server.port(), "/predict", kBody, traced(kUnsampled, "00")).status, 200);
  // An unknown model: a 4xx, recorded with its status and message.
  EXPECT_EQ(post_json(server.port(), "/v2/models/nope/infer", "{}", traced(kCallerB)).status, 404);

  const auto spans = wait_spans(receiver, [](const std::vector<DecodedSpan>& all) {
    std::size_t answers = 0;  // the two /predict and the 404 (the readiness polls are traced too)
    for (const auto& s : all) answers += s.kind == 2 && s.name != "GET /ping" ? 1 : 0;
    return answers >= 3 && find_named(all, "onepass.forward") != nullptr;
  });
  for (const char* caller : {kCallerA, kCallerB}) {
    const auto trace = spans_of(spans, caller);
    const auto request = std::find_if(trace.begin(), trace.end(), [](const DecodedSpan& s) {
      return s.kind == 2 && s.name == "POST /predict";
    });
    ASSERT_NE(request, trace.end()) << caller;
    EXPECT_EQ(request->parent_span_id, kParentSpan);
    EXPECT_EQ(request->flags & 0x300u, 0x300u);  // the parent is remote
    EXPECT_EQ(request->attributes.at("http.route"), "/predict");
    EXPECT_EQ(request->attributes.at("http.request.method"), "POST");
    EXPECT_EQ(request->attributes.at("http.response.status_code"), "200");
    EXPECT_EQ(request->attributes.at("gen_ai.request.model"), "nli");
    EXPECT_EQ(request->attributes.at("onepass.dialect"), "tei");
    EXPECT_EQ(request->attributes.at("onepass.inputs"), "1");
    EXPECT_GT(std::stoi(request->attributes.at("gen_ai.usage.input_tokens")), 2);
    if (std::string(caller) == kCallerA) {
      EXPECT_EQ(request->trace_state, "congo=t61rcWkgMzE");
    }
    // The phases, each a child of the request span and inside it.
    for (const char* phase : {"onepass.admission", "onepass.tokenize", "onepass.queue",
                              "onepass.inference", "onepass.format"}) {
      const DecodedSpan* child = find_named(trace, phase);
      ASSERT_NE(child, nullptr) << phase;
      EXPECT_EQ(child->parent_span_id, request->span_id) << phase;
      EXPECT_GE(child->start_unix_ns + 1000000, request->start_unix_ns) << phase;
      EXPECT_LE(child->end_unix_ns, request->end_unix_ns + 1000000) << phase;
    }
    // Linked from the forward pass that computed it.
    bool linked = false;
    for (const auto& s : spans) {
      if (s.name != "onepass.forward") continue;
      for (const auto& [trace_id, span_id] : s.links)
        linked |= trace_id == caller && span_id == request->span_id;
      EXPECT_EQ(s.attributes.at("onepass.model.architecture"), "BertForSequenceClassification");
      EXPECT_EQ(s.attributes.at("onepass.precision"), "fp32");
      EXPECT_GT(std::stoi(s.attributes.at("onepass.batch.tokens")), 0);
      EXPECT_LE(s.links.size(), std::stoul(s.attributes.at("onepass.batch.requests")));
    }
    EXPECT_TRUE(linked) << caller;
  }
  // The caller did not sample this one: nothing recorded, nothing linked to it.
  EXPECT_TRUE(spans_of(spans, kUnsampled).empty());
  for (const auto& s : spans)
    for (const auto& link : s.links) EXPECT_NE(link.first, kUnsampled);
  // The refusal: its status, no error status (a client's error), and why.
  const auto refused = std::find_if(spans.begin(), spans.end(), [](const DecodedSpan& s) {
    return s.kind == 2 && s.attributes.count("http.response.status_code") &&
           s.attributes.at("http.response.status_code") == "404";
  });
  ASSERT_NE(refused, spans.end());
  EXPECT_EQ(refused->trace_id, kCallerB);
  EXPECT_EQ(refused->attributes.at("error.type"), "404");
  EXPECT_FALSE(refused->attributes.at("onepass.error.message").empty());
  EXPECT_EQ(refused->status_code, 0);

  // The start-up load, a trace of its own.
  const DecodedSpan* load = find_named(spans, "onepass.model.load");
  ASSERT_NE(load, nullptr);
  EXPECT_EQ(load->parent_span_id, "");
  EXPECT_EQ(load->attributes.at("gen_ai.request.model"), "nli");
  EXPECT_EQ(load->attributes.at("onepass.model.architecture"), "BertForSequenceClassification");
  EXPECT_EQ(load->attributes.at("onepass.precision"), "fp32");
  EXPECT_EQ(load->status_code, 0);

  EXPECT_EQ(decode(receiver.exports().front()).resource.at("service.name"), "embedder-under-test");
  EXPECT_NE(server.log().find(std::string("\"trace_id\":\"") + kCallerA + "\""), std::string::npos);
  EXPECT_GT(metric(server, "onepass_trace_spans_exported_total"), 0);
  server.signal(SIGTERM);
  EXPECT_EQ(server.wait_exit(), 0);
}

TEST(TraceServe, JsonEncodingFromTheEnvironmentAndFlushOnDrain) {
  OtlpReceiver receiver;
  // A long schedule delay: the spans leave only because the drain flushes them.
  ServeProcess server(
      {"--model", "nli=" + fixture_model("bert-tiny-nli")},
      {"OTEL_EXPORTER_OTLP_ENDPOINT=" + receiver.url(), "OTEL_EXPORTER_OTLP_PROTOCOL=http/json",
       "OTEL_BSP_SCHEDULE_DELAY=60000", "OTEL_TRACES_SAMPLER=parentbased_traceidratio",
       "OTEL_TRACES_SAMPLER_ARG=0"});
  ASSERT_TRUE(server.wait_ready());
  EXPECT_EQ(post_json(server.port(), "/predict", kBody, traced(kCallerA)).status, 200);
  EXPECT_EQ(post_json(server.port(), "/predict", kBody).status, 200);  // a root: ratio 0
  EXPECT_EQ(receiver.count(), 0u);
  server.signal(SIGTERM);
  EXPECT_EQ(server.wait_exit(), 0);
  const auto exports = receiver.exports();
  ASSERT_FALSE(exports.empty());
  EXPECT_EQ(exports.front().content_type, "application/json");
  EXPECT_EQ(exports.front().path, "/v1/traces");
  const auto spans = all_spans(exports);
  std::set<std::string> traces;
  for (const auto& s : spans)
    if (s.name != "onepass.forward") traces.insert(s.trace_id);
  EXPECT_EQ(traces, std::set<std::string>{kCallerA});  // the caller sampled; the root was not
  EXPECT_NE(find_named(spans, "POST /predict"), nullptr);
  EXPECT_NE(find_named(spans, "onepass.forward"), nullptr);
}

// Every request answered as usual, each fast, whatever the collector does.
void serve_some(const ServeProcess& server, int requests) {
  for (int i = 0; i < requests; ++i) {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(post_json(server.port(), "/predict", kBody, traced(kCallerA)).status, 200);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  }
}

bool wait_metric(const ServeProcess& server, const std::string& name, const std::string& label) {
  for (int i = 0; i < 200; ++i) {
    if (metric(server, name, label) > 0) return true;
    std::this_thread::sleep_for(25ms);
  }
  return false;
}

TEST(TraceServe, ARefusingCollectorIsRetriedThenItsSpansCounted) {
  OtlpReceiver receiver;
  receiver.answer(503);
  ServeProcess server(
      {"--model", "nli=" + fixture_model("bert-tiny-nli"), "--otlp-endpoint", receiver.url()},
      {"OTEL_BSP_SCHEDULE_DELAY=20", "OTEL_BSP_EXPORT_TIMEOUT=400"});
  ASSERT_TRUE(server.wait_ready());
  serve_some(server, 5);
  EXPECT_TRUE(wait_metric(server, "onepass_trace_spans_dropped_total", "reason=\"export_failed\""));
  EXPECT_GE(receiver.count(), 2u);  // the batch was sent again
  EXPECT_EQ(metric(server, "onepass_trace_spans_exported_total"), 0);
}

TEST(TraceServe, ASlowOrAbsentCollectorCostsSpansNeverRequests) {
  OtlpReceiver slow;
  slow.answer(200, 5s);  // 5 s per export
  ServeProcess server(
      {"--model", "nli=" + fixture_model("bert-tiny-nli"), "--otlp-endpoint", slow.url()},
      {"OTEL_BSP_SCHEDULE_DELAY=10", "OTEL_BSP_MAX_QUEUE_SIZE=8"});
  ASSERT_TRUE(server.wait_ready());
  serve_some(server, 20);
  EXPECT_TRUE(wait_metric(server, "onepass_trace_spans_dropped_total", "reason=\"queue_full\""));
  // (That the drain's flush stops at its deadline is Tracer.ShutdownStopsAtItsDeadline's.)

  std::string closed;
  {
    OtlpReceiver gone;
    closed = gone.url();
  }
  ServeProcess absent(
      {"--model", "nli=" + fixture_model("bert-tiny-nli"), "--otlp-endpoint", closed},
      {"OTEL_BSP_SCHEDULE_DELAY=20", "OTEL_BSP_EXPORT_TIMEOUT=200"});
  ASSERT_TRUE(absent.wait_ready());
  serve_some(absent, 5);
  EXPECT_TRUE(wait_metric(absent, "onepass_trace_spans_dropped_total", "reason=\"export_failed\""));
}

}  // namespace
}  // namespace onepass::testing
