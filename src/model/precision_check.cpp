#include "model/precision_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "base/error.h"

namespace onepass::model {
namespace {

constexpr double kMinAgreement = 0.99;
constexpr double kMaxShareShift = 0.10;
constexpr double kMinEmbeddingCosine = 0.99;

// One row per example: the logits (classifiers), every token's logits one after the other
// (token classifiers, compared like embeddings: by cosine), the SPLADE vector (masked LM, by
// cosine too) or the mean-pooled last hidden state.
std::vector<std::vector<float>> run_all(const Encoder& encoder,
                                        std::span<const CheckExample> examples,
                                        std::size_t batch_size) {
  const bool classifier = encoder.info().head == HeadKind::kSequenceClassification;
  std::vector<std::vector<float>> rows;
  rows.reserve(examples.size());
  std::vector<SequenceInput> batch;
  ForwardOutput out;
  for (std::size_t begin = 0; begin < examples.size(); begin += batch_size) {
    const std::size_t end = std::min(examples.size(), begin + batch_size);
    batch.clear();
    for (std::size_t i = begin; i < end; ++i)
      batch.push_back({examples[i].input_ids, examples[i].token_type_ids});
    encoder.forward(batch, out);
    for (std::size_t s = 0; s < batch.size(); ++s) {
      const auto n = static_cast<std::size_t>(encoder.info().num_labels);
      if (classifier) {
        rows.emplace_back(out.logits.begin() + static_cast<std::ptrdiff_t>(s * n),
                          out.logits.begin() + static_cast<std::ptrdiff_t>((s + 1) * n));
      } else if (encoder.info().head == HeadKind::kMaskedLm) {
        const auto vocab = static_cast<std::size_t>(encoder.info().vocab_size);
        rows.emplace_back(out.logits.begin() + static_cast<std::ptrdiff_t>(s * vocab),
                          out.logits.begin() + static_cast<std::ptrdiff_t>((s + 1) * vocab));
      } else if (per_token_head(encoder.info().head)) {
        rows.emplace_back(
            out.logits.begin() + static_cast<std::ptrdiff_t>(out.token_offsets[s] * n),
            out.logits.begin() + static_cast<std::ptrdiff_t>(out.token_offsets[s + 1] * n));
      } else {
        const auto h = static_cast<std::size_t>(encoder.info().hidden_size);
        std::vector<float> pooled(h, 0.0f);
        const std::size_t t0 = out.token_offsets[s], t1 = out.token_offsets[s + 1];
        for (std::size_t t = t0; t < t1; ++t)
          for (std::size_t c = 0; c < h; ++c) pooled[c] += out.hidden_states[t * h + c];
        for (auto& v : pooled) v /= static_cast<float>(std::max<std::size_t>(1, t1 - t0));
        rows.push_back(std::move(pooled));
      }
    }
  }
  return rows;
}

std::size_t count_non_finite(const std::vector<std::vector<float>>& rows) {
  std::size_t n = 0;
  for (const auto& row : rows)
    for (float v : row) n += std::isfinite(v) ? 0 : 1;
  return n;
}

int argmax(const std::vector<float>& v) {
  return static_cast<int>(std::max_element(v.begin(), v.end()) - v.begin());
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ab += static_cast<double>(a[i]) * b[i];
    aa += static_cast<double>(a[i]) * a[i];
    bb += static_cast<double>(b[i]) * b[i];
  }
  if (aa == 0.0 && bb == 0.0) return 1.0;
  if (aa == 0.0 || bb == 0.0) return 0.0;
  return ab / std::sqrt(aa * bb);
}

char* percent(char* buf, std::size_t size, double fraction) {
  std::snprintf(buf, size, "%.1f%%", 100.0 * fraction);
  return buf;
}

}  // namespace

std::vector<CheckExample> tokenize_check_texts(const TextTokenizer& tokenize,
                                               std::span<const CheckText> texts) {
  std::vector<CheckExample> out;
  out.reserve(texts.size());
  for (const auto& t : texts) {
    auto ids = tokenize(t.text, t.pair ? std::optional<std::string_view>(t.pair) : std::nullopt);
    out.push_back({std::move(ids.input_ids), std::move(ids.token_type_ids), -1});
  }
  return out;
}

void enforce_precision_gate(const Encoder& candidate, const std::filesystem::path& model_dir,
                            const LoadOptions& options) {
  if (options.precision == Precision::kFp32 || options.force_precision) return;
  LoadOptions fp32 = options;
  fp32.precision = Precision::kFp32;
  const auto reference = load_encoder(model_dir, fp32);
  const auto examples =
      options.check_tokenizer
          ? tokenize_check_texts(options.check_tokenizer, builtin_check_texts())
          : synthetic_check_inputs(reference->info(), builtin_check_texts().size());
  const auto report = compare_precisions(*reference, candidate, examples, options.precision);
  if (!report.pass) {
    throw Error(ErrorKind::kInvalidModel,
                std::string("precision ") + precision_name(options.precision) +
                    " fails the accuracy check for this model (" + summarize_failures(report) +
                    "); run `onepass check` for the full report, or pass "
                    "--force-precision to use it anyway");
  }
}

void require_cpu_support(Precision precision) {
  const char* reason = kernels::precision_unsupported_reason(precision);
  if (*reason != '\0') throw Error(ErrorKind::kUnsupported, reason);
}

std::vector<CheckExample> synthetic_check_inputs(const ModelInfo& info, std::size_t count,
                                                 std::int32_t first_id) {
  std::mt19937 rng(20240601u);
  const std::int32_t hi = std::max(first_id + 1, info.vocab_size) - 1;
  std::uniform_int_distribution<std::int32_t> id(std::min(first_id, hi), hi);
  const int longest = std::max(8, std::min(64, info.max_tokens > 0 ? info.max_tokens : 64));
  std::uniform_int_distribution<int> length(std::min(8, longest), longest);
  std::vector<CheckExample> out(count);
  for (auto& ex : out) {
    ex.input_ids.resize(static_cast<std::size_t>(length(rng)));
    for (auto& v : ex.input_ids) v = id(rng);
  }
  return out;
}

PrecisionReport compare_precisions(const Encoder& reference, const Encoder& candidate,
                                   std::span<const CheckExample> examples,
                                   Precision candidate_precision, std::size_t batch_size) {
  if (examples.empty())
    throw Error(ErrorKind::kInvalidArgument, "the precision check needs at least one input");
  const ModelInfo& info = reference.info();
  PrecisionReport r;
  r.precision = candidate_precision;
  r.examples = examples.size();
  r.classifier = info.head == HeadKind::kSequenceClassification;
  r.num_labels = info.num_labels;
  for (const auto& ex : examples) {
    if (ex.label >= 0 && (!r.classifier || ex.label >= info.num_labels)) {
      throw Error(ErrorKind::kInvalidArgument, "label " + std::to_string(ex.label) +
                                                   " is outside the model's " +
                                                   std::to_string(info.num_labels) + " classes");
    }
  }
  const auto ref = run_all(reference, examples, std::max<std::size_t>(1, batch_size));
  const auto cand = run_all(candidate, examples, std::max<std::size_t>(1, batch_size));
  r.non_finite = count_non_finite(cand) + count_non_finite(ref);

  double sum_abs = 0.0, sum_cos = 0.0;
  std::size_t values = 0;
  r.min_cosine = 1.0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    for (std::size_t c = 0; c < ref[i].size(); ++c) {
      const double d = std::abs(static_cast<double>(ref[i][c]) - cand[i][c]);
      if (!std::isfinite(d)) continue;  // counted in non_finite
      r.max_abs_logit_diff = std::max(r.max_abs_logit_diff, d);
      sum_abs += d;
      ++values;
    }
    const double cs = cosine(ref[i], cand[i]);
    r.min_cosine = std::min(r.min_cosine, std::isfinite(cs) ? cs : 0.0);
    sum_cos += std::isfinite(cs) ? cs : 0.0;
  }
  r.mean_abs_logit_diff = values ? sum_abs / static_cast<double>(values) : 0.0;
  r.mean_cosine = sum_cos / static_cast<double>(ref.size());

  const double n = static_cast<double>(ref.size());
  if (r.classifier && info.num_labels == 1) {
    // A scorer (reranker): what matters is the order it puts inputs in.
    std::size_t pairs = 0, same = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
      for (std::size_t j = i + 1; j < ref.size(); ++j) {
        const double a = static_cast<double>(ref[i][0]) - ref[j][0];
        const double b = static_cast<double>(cand[i][0]) - cand[j][0];
        ++pairs;
        same += (a > 0) == (b > 0) || a == 0.0 ? 1 : 0;
      }
    }
    r.label_agreement = pairs ? static_cast<double>(same) / static_cast<double>(pairs) : 1.0;
  } else if (r.classifier) {
    const auto labels = static_cast<std::size_t>(info.num_labels);
    r.reference_share.assign(labels, 0.0);
    r.candidate_share.assign(labels, 0.0);
    std::size_t agree = 0, ref_correct = 0, cand_correct = 0, labelled = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
      if (info.multi_label) {
        bool all = true;
        for (std::size_t c = 0; c < labels; ++c) {
          const bool a = ref[i][c] > 0.0f, b = cand[i][c] > 0.0f;
          all = all && a == b;
          r.reference_share[c] += a ? 1.0 : 0.0;
          r.candidate_share[c] += b ? 1.0 : 0.0;
        }
        agree += all ? 1 : 0;
      } else {
        const int a = argmax(ref[i]), b = argmax(cand[i]);
        agree += a == b ? 1 : 0;
        if (a != b) {
          const float margin =
              ref[i][static_cast<std::size_t>(a)] - ref[i][static_cast<std::size_t>(b)];
          r.widest_flipped_margin = std::max(r.widest_flipped_margin, static_cast<double>(margin));
        }
        r.reference_share[static_cast<std::size_t>(a)] += 1.0;
        r.candidate_share[static_cast<std::size_t>(b)] += 1.0;
        if (examples[i].label >= 0) {
          ++labelled;
          ref_correct += a == examples[i].label ? 1 : 0;
          cand_correct += b == examples[i].label ? 1 : 0;
        }
      }
    }
    r.label_agreement = static_cast<double>(agree) / n;
    for (std::size_t c = 0; c < labels; ++c) {
      r.reference_share[c] /= n;
      r.candidate_share[c] /= n;
      r.max_share_shift =
          std::max(r.max_share_shift, std::abs(r.reference_share[c] - r.candidate_share[c]));
    }
    if (labelled > 0) {
      r.reference_accuracy = static_cast<double>(ref_correct) / static_cast<double>(labelled);
      r.candidate_accuracy = static_cast<double>(cand_correct) / static_cast<double>(labelled);
    }
  }

  char a[32], b[32];
  if (r.label_agreement < kMinAgreement) {
    r.failures.push_back(
        std::string(info.num_labels == 1 ? "ranking agreement " : "label agreement ") +
        percent(a, sizeof a, r.label_agreement) + " < " + percent(b, sizeof b, kMinAgreement));
  }
  if (r.max_share_shift > kMaxShareShift) {
    r.failures.push_back(std::string("a class's predicted share moved ") +
                         percent(a, sizeof a, r.max_share_shift) + " (limit " +
                         percent(b, sizeof b, kMaxShareShift) + ")");
  }
  if (r.non_finite > 0)
    r.failures.push_back(std::to_string(r.non_finite) + " NaN/Inf output values");
  if (!r.classifier && r.min_cosine < kMinEmbeddingCosine) {
    std::snprintf(a, sizeof a, "%.4f", r.min_cosine);
    r.failures.push_back(std::string("embedding cosine ") + a + " < 0.99");
  }
  r.pass = r.failures.empty();
  return r;
}

std::string summarize_failures(const PrecisionReport& report) {
  std::string out;
  for (const auto& f : report.failures) out += (out.empty() ? "" : "; ") + f;
  return out;
}

}  // namespace onepass::model
