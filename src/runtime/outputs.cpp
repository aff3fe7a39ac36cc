#include "runtime/outputs.h"

#include <cmath>

#include "base/error.h"

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
                    const model::ForwardOutput& forward, std::size_t index, ItemOutput& out) {
  if (kind == OutputKind::kLogits) {
    const std::size_t labels = static_cast<std::size_t>(info.num_labels);
    ONEPASS_CHECK(forward.logits.size() >= (index + 1) * labels, "logits cover every sequence");
    const float* row = forward.logits.data() + index * labels;
    out.values.assign(row, row + labels);
    return all_finite(out.values);
  }

  ONEPASS_CHECK(forward.token_offsets.size() > index + 1, "token offsets cover every sequence");
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
  if (pooling == Pooling::kCls) {
    out.values.assign(rows, rows + hidden);
    return all_finite(out.values);
  }
  // Mean over the sequence's tokens, summed in double so that 512-token inputs stay within
  // float32 rounding of the reference.
  std::vector<double> sum(hidden, 0.0);
  for (std::size_t t = 0; t < end - begin; ++t) {
    const float* row = rows + t * hidden;
    for (std::size_t h = 0; h < hidden; ++h) sum[h] += row[h];
  }
  out.values.resize(hidden);
  const double count = static_cast<double>(end - begin);
  for (std::size_t h = 0; h < hidden; ++h) out.values[h] = static_cast<float>(sum[h] / count);
  return all_finite(out.values);
}

}  // namespace onepass::runtime
