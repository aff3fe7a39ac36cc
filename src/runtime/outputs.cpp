#include "runtime/outputs.h"

#include <cmath>

#include "base/error.h"
#include "model/heads/postprocess.h"

namespace onepass::runtime {
namespace {

bool all_finite(const std::vector<float>& values) {
  for (float v : values) {
    if (!std::isfinite(v)) return false;
  }
  return true;
}

}  // namespace

bool extract_output(const model::ModelInfo& info, OutputKind kind, Pooling pooling,
                    std::span<const model::heads::DenseModule> dense,
                    const model::ForwardOutput& forward, std::size_t index, ItemOutput& out) {
  if (kind == OutputKind::kLogits) {
    ONEPASS_CHECK(info.head == model::HeadKind::kSequenceClassification, "a sequence classifier");
    const std::size_t labels = static_cast<std::size_t>(info.num_labels);
    ONEPASS_CHECK(forward.logits.size() >= (index + 1) * labels, "logits cover every sequence");
    const float* row = forward.logits.data() + index * labels;
    out.values.assign(row, row + labels);
    return all_finite(out.values);
  }

  if (kind == OutputKind::kSparse) {
    ONEPASS_CHECK(info.head == model::HeadKind::kMaskedLm, "a masked-LM head");
    const auto vocab = static_cast<std::size_t>(info.vocab_size);
    ONEPASS_CHECK(forward.logits.size() >= (index + 1) * vocab, "vectors cover every sequence");
    const float* row = forward.logits.data() + index * vocab;
    out.values.assign(row, row + vocab);
    return all_finite(out.values);
  }

  if (kind == OutputKind::kSpans) {
    ONEPASS_CHECK(info.head == model::HeadKind::kSpanExtraction, "a span head");
    ONEPASS_CHECK(forward.span_offsets.size() > index + 1, "span offsets cover every sequence");
    out.values.assign(
        forward.logits.begin() + static_cast<std::ptrdiff_t>(forward.span_offsets[index]),
        forward.logits.begin() + static_cast<std::ptrdiff_t>(forward.span_offsets[index + 1]));
    return all_finite(out.values);
  }

  ONEPASS_CHECK(forward.token_offsets.size() > index + 1, "token offsets cover every sequence");
  if (kind == OutputKind::kTokenLogits) {
    ONEPASS_CHECK(model::per_token_head(info.head), "a per-token head");
    const std::size_t labels = static_cast<std::size_t>(info.num_labels);
    const std::size_t begin = forward.token_offsets[index] * labels;
    const std::size_t end = forward.token_offsets[index + 1] * labels;
    ONEPASS_CHECK(forward.logits.size() >= end, "token logits cover every sequence");
    out.values.assign(forward.logits.begin() + static_cast<std::ptrdiff_t>(begin),
                      forward.logits.begin() + static_cast<std::ptrdiff_t>(end));
    return all_finite(out.values);
  }
  const std::size_t hidden = static_cast<std::size_t>(info.hidden_size);
  const std::size_t begin = forward.token_offsets[index];
  const std::size_t end = forward.token_offsets[index + 1];
  ONEPASS_CHECK(end > begin && forward.hidden_states.size() >= end * hidden,
                "hidden states cover every sequence");
  const float* rows = forward.hidden_states.data() + begin * hidden;

  if (kind == OutputKind::kTokens) {
    out.values.assign(rows, rows + (end - begin) * hidden);
    return all_finite(out.values);
  }
  out.values.resize(hidden);
  model::heads::pool(forward, hidden, index, pooling, out.values);
  for (const auto& module : dense) out.values = module.apply(out.values);
  return all_finite(out.values);
}

}  // namespace onepass::runtime
