#include "model/precision_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <random>

#include "base/error.h"

namespace onepass::model {
namespace {

constexpr double kMinAgreement = 0.99;
constexpr double kMaxShareShift = 0.10;
constexpr double kMinEmbeddingCosine = 0.99;
// Two answers closer in fp32 than this fraction of the spread of the scores they were picked
// from (a token's label logits, an input's span scores or cosines to the others, every score of
// a reranker) are a tie in fp32 itself: the candidate picking the other one is no disagreement.
// The built-in texts are not questions, entities or queries, so many of their answers are such
// near-ties; a disagreement outside them is one the user would see.
constexpr double kTieFraction = 0.02;
constexpr int kLongestAnswerTokens = 30;  // the question-answering pipeline's max_answer_len

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
    for (std::size_t i = begin; i < end; ++i) {
      SequenceInput input{examples[i].input_ids, examples[i].token_type_ids};
      input.word_positions = examples[i].word_positions;
      batch.push_back(input);
    }
    encoder.forward(batch, out);
    for (std::size_t s = 0; s < batch.size(); ++s) {
      const auto n = static_cast<std::size_t>(encoder.info().num_labels);
      if (encoder.info().head == HeadKind::kSpanExtraction) {
        // [words, max_width, labels] span logits (heads/span_head.h).
        rows.emplace_back(
            out.logits.begin() + static_cast<std::ptrdiff_t>(out.span_offsets[s]),
            out.logits.begin() + static_cast<std::ptrdiff_t>(out.span_offsets[s + 1]));
      } else if (classifier) {
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

// Embedders: the share of inputs whose nearest other input (by cosine) is the same in both, a
// candidate's neighbour that ties with fp32's nearest (kTieFraction) counting as the same.
double neighbour_agreement(const std::vector<std::vector<float>>& ref,
                           const std::vector<std::vector<float>>& cand) {
  const std::size_t n = ref.size();
  if (n < 3) return 1.0;
  std::vector<double> ref_cos(n * n, 0.0), cand_cos(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) {
      ref_cos[i * n + j] = ref_cos[j * n + i] = cosine(ref[i], ref[j]);
      cand_cos[i * n + j] = cand_cos[j * n + i] = cosine(cand[i], cand[j]);
    }
  }
  std::size_t agree = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t a = i == 0 ? 1 : 0, b = a, low = a;
    for (std::size_t j = 0; j < n; ++j) {
      if (j == i) continue;
      if (ref_cos[i * n + j] > ref_cos[i * n + a]) a = j;
      if (ref_cos[i * n + j] < ref_cos[i * n + low]) low = j;
      if (cand_cos[i * n + j] > cand_cos[i * n + b]) b = j;
    }
    const double tie = kTieFraction * (ref_cos[i * n + a] - ref_cos[i * n + low]);
    agree += a == b || ref_cos[i * n + a] - ref_cos[i * n + b] <= tie ? 1 : 0;
  }
  return static_cast<double>(agree) / static_cast<double>(n);
}

// Token classifiers: the share of tokens whose arg-max label is the same (or a tie in fp32).
double token_agreement(const std::vector<std::vector<float>>& ref,
                       const std::vector<std::vector<float>>& cand, std::size_t labels) {
  std::size_t tokens = 0, agree = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    for (std::size_t t = 0; t + labels <= ref[i].size(); t += labels) {
      const auto r = ref[i].begin() + static_cast<std::ptrdiff_t>(t);
      const auto c = cand[i].begin() + static_cast<std::ptrdiff_t>(t);
      const auto a = std::max_element(r, r + static_cast<std::ptrdiff_t>(labels)) - r;
      const auto b = std::max_element(c, c + static_cast<std::ptrdiff_t>(labels)) - c;
      const double low = *std::min_element(r, r + static_cast<std::ptrdiff_t>(labels));
      ++tokens;
      agree += a == b || r[a] - r[b] <= kTieFraction * (r[a] - low) ? 1 : 0;
    }
  }
  return tokens ? static_cast<double>(agree) / static_cast<double>(tokens) : 1.0;
}

// Question answering: the best span (start <= end, at most kLongestAnswerTokens) of one input's
// [start, end] logits per token, and its score.
std::pair<std::size_t, std::size_t> best_span(const std::vector<float>& logits) {
  const std::size_t n = logits.size() / 2;
  std::pair<std::size_t, std::size_t> best{0, 0};
  float best_score = -std::numeric_limits<float>::infinity();
  for (std::size_t s = 0; s < n; ++s) {
    for (std::size_t e = s; e < std::min(n, s + kLongestAnswerTokens); ++e) {
      const float score = logits[2 * s] + logits[2 * e + 1];
      if (score > best_score) {
        best_score = score;
        best = {s, e};
      }
    }
  }
  return best;
}

double span_agreement(const std::vector<std::vector<float>>& ref,
                      const std::vector<std::vector<float>>& cand) {
  std::size_t agree = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const auto a = best_span(ref[i]), b = best_span(cand[i]);
    const auto score = [&](std::pair<std::size_t, std::size_t> span) {
      return static_cast<double>(ref[i][2 * span.first]) + ref[i][2 * span.second + 1];
    };
    // The spread of the span scores: best start plus best end, less worst start plus worst end.
    double spread = 0.0;
    for (int side = 0; side < 2; ++side) {
      float hi = -std::numeric_limits<float>::infinity(), lo = -hi;
      for (std::size_t t = static_cast<std::size_t>(side); t < ref[i].size(); t += 2) {
        hi = std::max(hi, ref[i][t]);
        lo = std::min(lo, ref[i][t]);
      }
      spread += static_cast<double>(hi) - lo;
    }
    agree += a == b || score(a) - score(b) <= kTieFraction * spread ? 1 : 0;
  }
  return ref.empty() ? 1.0 : static_cast<double>(agree) / static_cast<double>(ref.size());
}

// GLiNER: the share of entities, (span, label) cells whose logit is past 0 (GLiNER's default
// threshold, a sigmoid of 0.5) in either precision, that both find. A cell whose fp32 logit is
// within the tie fraction of the input's logit spread from 0 is a tie with the threshold and
// may fall either side. Pooled over every input: most inputs of the built-in texts have few or
// no entities, and an input with none in both agrees vacuously.
double entity_agreement(const std::vector<std::vector<float>>& ref,
                        const std::vector<std::vector<float>>& cand) {
  std::size_t found = 0, agree = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (ref[i].empty()) continue;
    const auto [lo, hi] = std::minmax_element(ref[i].begin(), ref[i].end());
    const double tie = kTieFraction * (static_cast<double>(*hi) - *lo);
    for (std::size_t c = 0; c < ref[i].size(); ++c) {
      const bool a = ref[i][c] > 0.0f, b = cand[i][c] > 0.0f;
      if (!a && !b) continue;
      ++found;
      agree += a == b || std::abs(static_cast<double>(ref[i][c])) <= tie ? 1 : 0;
    }
  }
  return found ? static_cast<double>(agree) / static_cast<double>(found) : 1.0;
}

// Rerankers: the share of queries whose documents keep their order (pairs tied in fp32 may
// swap); `queries` gets how many queries have two documents or more.
double query_agreement(const std::vector<std::vector<float>>& ref,
                       const std::vector<std::vector<float>>& cand,
                       std::span<const CheckExample> examples, std::size_t& queries) {
  std::map<int, std::vector<std::size_t>> docs;
  for (std::size_t i = 0; i < examples.size(); ++i) {
    if (examples[i].query >= 0) docs[examples[i].query].push_back(i);
  }
  float hi = -std::numeric_limits<float>::infinity(), lo = -hi;
  for (const auto& row : ref) {
    hi = std::max(hi, row[0]);
    lo = std::min(lo, row[0]);
  }
  const double tie = kTieFraction * (static_cast<double>(hi) - lo);
  std::size_t agree = 0;
  queries = 0;
  for (const auto& [query, members] : docs) {
    if (members.size() < 2) continue;
    ++queries;
    bool same = true;
    for (std::size_t x = 0; x < members.size(); ++x) {
      for (std::size_t y = x + 1; y < members.size(); ++y) {
        const double a = static_cast<double>(ref[members[x]][0]) - ref[members[y]][0];
        const double b = static_cast<double>(cand[members[x]][0]) - cand[members[y]][0];
        same = same && ((a > 0) == (b > 0) || std::abs(a) <= tie);
      }
    }
    agree += same ? 1 : 0;
  }
  return queries ? static_cast<double>(agree) / static_cast<double>(queries) : 1.0;
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
  std::map<std::string_view, int> queries;  // a pair's first text -> its query id
  for (const auto& t : texts) {
    auto ids = tokenize(t.text, t.pair ? std::optional<std::string_view>(t.pair) : std::nullopt);
    const int query =
        t.pair ? queries.emplace(t.text, static_cast<int>(queries.size())).first->second : -1;
    out.push_back({std::move(ids.input_ids), std::move(ids.token_type_ids), -1, query, {}});
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
    // GLiNER scores the spans of a prompt's words: a plain text has none and would agree
    // vacuously.
    if (info.head == HeadKind::kSpanExtraction && ex.word_positions.empty()) {
      throw Error(ErrorKind::kInvalidArgument,
                  "a GLiNER model is checked on its prompts (labels and words), not on plain "
                  "texts: use --precision auto, whose gate builds them");
    }
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

  if (r.classifier && info.num_labels == 1) {
    r.query_agreement = query_agreement(ref, cand, examples, r.queries);
  } else if (info.head == HeadKind::kTokenClassification) {
    r.token_agreement = token_agreement(ref, cand, static_cast<std::size_t>(info.num_labels));
  } else if (info.head == HeadKind::kQuestionAnswering) {
    r.span_agreement = span_agreement(ref, cand);
  } else if (info.head == HeadKind::kSpanExtraction) {
    r.entity_agreement = entity_agreement(ref, cand);
  } else if (info.head == HeadKind::kBaseModel) {
    // Embedders only: a masked LM's vectors keep the cosine bar alone, since the same head also
    // serves fill-mask, whose answers are not neighbours.
    r.neighbour_agreement = neighbour_agreement(ref, cand);
  }

  char a[32], b[32];
  const auto below = [&](const char* what, double value) {
    if (value >= kMinAgreement) return;
    r.failures.push_back(std::string(what) + " " + percent(a, sizeof a, value) + " < " +
                         percent(b, sizeof b, kMinAgreement));
  };
  below("per-query rank agreement", r.query_agreement);
  below("token label agreement", r.token_agreement);
  below("answer span agreement", r.span_agreement);
  below("entity agreement", r.entity_agreement);
  below("nearest-neighbour agreement", r.neighbour_agreement);
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
