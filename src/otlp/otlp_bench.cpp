// Google Benchmark: what tracing costs a sampled request. A traced request records 7 spans (the
// request, admission, tokenize, queue, inference, format, and its share of a forward pass):
// building and queueing them is the request path's cost; encoding them is the export thread's.
#include <benchmark/benchmark.h>

#include <chrono>

#include "otlp/encode.h"
#include "trace/tracer.h"

namespace onepass::otlp {
namespace {

// Takes batches and does the export thread's encoding, sending nothing.
class EncodingExporter final : public trace::Exporter {
 public:
  bool export_spans(std::span<const trace::SpanData> spans,
                    std::chrono::steady_clock::time_point) override {
    benchmark::DoNotOptimize(encode_protobuf(resource_, spans));
    return true;
  }

 private:
  Resource resource_{{{"service.name", std::string("bench")}}};
};

trace::SpanData request_span(const trace::SpanContext& context) {
  trace::SpanData span;
  span.trace_id = context.trace_id;
  span.span_id = context.span_id;
  span.flags = context.flags;
  span.name = "POST /predict";
  span.kind = trace::SpanKind::kServer;
  const auto now = std::chrono::steady_clock::now();
  span.start_unix_ns = trace::unix_nanos(now);
  span.end_unix_ns = trace::unix_nanos(now);
  span.set("http.request.method", "POST").set("http.route", "/predict");
  span.set("http.response.status_code", 200).set("onepass.dialect", "tei");
  span.set("gen_ai.request.model", "nli").set("onepass.inputs", 1);
  span.set("gen_ai.usage.input_tokens", 59);
  return span;
}

// The request path: a context from a traceparent, then the 7 spans recorded.
void BM_RecordRequestSpans(benchmark::State& state) {
  trace::BatchOptions options;
  options.max_queue_size = 1 << 16;
  trace::Tracer tracer(trace::Sampler(), options, std::make_unique<EncodingExporter>());
  const auto parent =
      trace::parse_traceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
  for (auto _ : state) {
    const trace::SpanContext context = tracer.start(&*parent);
    for (int i = 0; i < 6; ++i) {
      trace::SpanData child = request_span(context);
      child.span_id = trace::random_span_id();
      child.parent_span_id = context.span_id;
      child.name = "onepass.phase";
      tracer.record(std::move(child));
    }
    tracer.record(request_span(context));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RecordRequestSpans);

// The export thread: protobuf encoding of a full batch (512 spans), per span.
void BM_EncodeProtobuf(benchmark::State& state) {
  const auto parent =
      trace::parse_traceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
  std::vector<trace::SpanData> spans(512, request_span(*parent));
  const Resource resource{{{"service.name", std::string("bench")}}};
  for (auto _ : state) benchmark::DoNotOptimize(encode_protobuf(resource, spans));
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(spans.size()));
}
BENCHMARK(BM_EncodeProtobuf);

}  // namespace
}  // namespace onepass::otlp

BENCHMARK_MAIN();
