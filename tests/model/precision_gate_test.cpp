// The reduced-precision accuracy gate (model/precision_check.h): bf16 and int8 pass it on every
// fixture model but those the catalogue flags kInt8Refused, whose int8 it refuses (agreement
// under 99%); a deliberately broken int8 quantization (weight scales 1/16 of the right ones,
// injected through kernels::testing) fails it and is refused at load; the verdict logic catches a
// collapse onto one class and NaN outputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <set>
#include <string>

#include "base/error.h"
#include "kernels/matmul.h"
#include "model/encoder.h"
#include "model/precision_check.h"
#include "tests/support/fixture_catalogue.h"
#include "tokenizer/tokenizer.h"

namespace onepass::model {
namespace {

std::filesystem::path fixture(const std::string& name) {
  return std::filesystem::path(ONEPASS_TEST_DATA_DIR) / "fixtures/models" / name;
}

TextTokenizer text_tokenizer(const std::filesystem::path& dir) {
  std::shared_ptr<tokenizer::Tokenizer> tok = tokenizer::load_tokenizer(dir);
  return [tok](std::string_view text, std::optional<std::string_view> pair) {
    auto enc = tok->encode(text, pair, {});
    return TokenizedText{std::move(enc.ids), std::move(enc.type_ids)};
  };
}

std::vector<CheckExample> builtin_examples(const std::filesystem::path& dir) {
  return tokenize_check_texts(text_tokenizer(dir), builtin_check_texts());
}

std::unique_ptr<Encoder> load(const std::filesystem::path& dir, Precision precision) {
  LoadOptions options;
  options.threads = 1;
  options.precision = precision;
  options.force_precision = true;
  return load_encoder(dir, options);
}

TEST(PrecisionGate, BuiltinSetIsMultilingualWithPairsAndOverAHundredExamples) {
  const auto texts = builtin_check_texts();
  EXPECT_GE(texts.size(), 100u);
  std::set<std::string> languages;
  std::size_t pairs = 0;
  for (const auto& t : texts) {
    languages.insert(t.language);
    pairs += t.pair != nullptr ? 1 : 0;
  }
  EXPECT_GE(languages.size(), 20u);
  EXPECT_GE(pairs, texts.size() / 3);
}

class FixturePrecisionTest : public ::testing::TestWithParam<std::tuple<std::string, Precision>> {};

TEST_P(FixturePrecisionTest, PassesTheBar) {
  const auto& [name, precision] = GetParam();
  if (precision == Precision::kBf16 && !kernels::cpu_has_bf16_matmul())
    GTEST_SKIP() << "this CPU has neither AVX512_BF16 nor AMX";
  const auto dir = fixture(name);
  const auto reference = load(dir, Precision::kFp32);
  const auto candidate = load(dir, precision);
  const auto examples = builtin_examples(dir);
  const auto report = compare_precisions(*reference, *candidate, examples, precision);
  EXPECT_TRUE(report.pass) << name << " " << precision_name(precision) << ": "
                           << summarize_failures(report);
  EXPECT_EQ(report.non_finite, 0u);
  EXPECT_GT(report.max_abs_logit_diff, 0.0) << "the candidate really ran in reduced precision";
  // A one-logit model's "cosine" is only the sign agreement of a scalar, and a score near zero
  // may flip in int8 (electra-tiny-rerank does); report.pass holds its real criteria.
  if (report.num_labels != 1) {
    EXPECT_GT(report.min_cosine, 0.9);
  }
  // The gate at load (what `run` and `serve` do) agrees: no throw without force_precision.
  LoadOptions gated;
  gated.threads = 1;
  gated.precision = precision;
  gated.check_tokenizer = text_tokenizer(dir);
  EXPECT_NO_THROW(load_encoder(dir, gated));
}

// The fixtures whose int8 misses the bar on the built-in texts, flagged kInt8Refused in
// tests/support/fixture_catalogue.cpp: label agreement under 99% (distilbert-tiny-nli 98.1%,
// mpnet-tiny-nli 97.1%, with flipped margins under 0.07; gte-tiny-nli 98.1%) or, for a one-logit
// reranker, ranking agreement (gte-tiny-rerank 98.8%). Their random heads leave labels and scores
// close: the largest logit differences (0.09-0.15) are those of the fixtures that pass.
// Int8RefusedNamingTheMissedCriterion below holds the gate to refusing them.
std::vector<std::string> int8_refused_fixtures() {
  return onepass::testing::fixtures_where(
      [](const onepass::testing::Fixture& f) { return f.has(onepass::testing::kInt8Refused); });
}

// Every fixture of the golden suites (tests/model/golden.h) but those.
std::vector<std::string> gated_fixtures() {
  return onepass::testing::fixtures_where([](const onepass::testing::Fixture& f) {
    return !f.has(onepass::testing::kSentenceTransformers) &&
           !f.has(onepass::testing::kInt8Refused) &&
           f.task != onepass::testing::FixtureTask::kExtractor;  // GLiNER runs fp32 only
  });
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FixturePrecisionTest,
                         ::testing::Combine(::testing::ValuesIn(gated_fixtures()),
                                            ::testing::Values(Precision::kBf16, Precision::kInt8)),
                         [](const auto& info) {
                           std::string name = std::get<0>(info.param) + "_" +
                                              precision_name(std::get<1>(info.param));
                           for (auto& c : name)
                             c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

TEST(PrecisionGate, Bf16WithoutCpuSupportIsRefusedBeforeLoadingNamingTheFeature) {
  if (kernels::cpu_has_bf16_matmul()) GTEST_SKIP() << "this CPU has AVX512_BF16 or AMX";
  LoadOptions options;
  options.threads = 1;
  options.precision = Precision::kBf16;
  options.force_precision = true;  // not a gate decision: the CPU cannot run it at all
  try {
    load_encoder(fixture("bert-tiny-nli"), options);
    FAIL() << "bf16 loaded on a CPU without bf16 instructions";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("AVX512_BF16"), std::string::npos) << e.what();
  }
  EXPECT_THROW(require_cpu_support(Precision::kBf16), Error);
  EXPECT_NO_THROW(require_cpu_support(Precision::kInt8));
  EXPECT_NO_THROW(require_cpu_support(Precision::kFp32));
}

// Resets the test hook whatever the test's outcome.
struct WrongInt8Scale {
  explicit WrongInt8Scale(float multiplier) {
    kernels::testing::set_int8_weight_scale_multiplier(multiplier);
  }
  ~WrongInt8Scale() { kernels::testing::set_int8_weight_scale_multiplier(1.0f); }
};

TEST(PrecisionGate, WrongInt8ScaleFailsTheCheckAndIsRefusedAtLoad) {
  for (const std::string& name :
       onepass::testing::fixtures_with_task({onepass::testing::FixtureTask::kClassifier})) {
    const auto dir = fixture(name);
    const auto reference = load(dir, Precision::kFp32);
    const WrongInt8Scale broken(1.0f / 16.0f);
    const auto candidate = load(dir, Precision::kInt8);
    const auto report =
        compare_precisions(*reference, *candidate, builtin_examples(dir), Precision::kInt8);
    EXPECT_FALSE(report.pass) << name;
    EXPECT_FALSE(report.failures.empty());

    LoadOptions gated;
    gated.threads = 1;
    gated.precision = Precision::kInt8;
    try {
      load_encoder(dir, gated);  // synthetic ids: no check_tokenizer given
      ADD_FAILURE() << name << ": a broken int8 model was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidModel);
      const std::string message = e.what();
      EXPECT_NE(message.find("int8"), std::string::npos) << message;
      EXPECT_NE(message.find("--force-precision"), std::string::npos) << message;
      EXPECT_EQ(message.find(dir.string()), std::string::npos) << "no full path in messages";
    }
    gated.force_precision = true;
    EXPECT_NO_THROW(load_encoder(dir, gated));
  }
}

// The fixtures flagged kInt8Refused: the gate must refuse their int8 at load, naming the missed
// criterion and the way around it, and --force-precision must still load it.
class Int8Refused : public ::testing::TestWithParam<std::string> {};

TEST_P(Int8Refused, Int8RefusedNamingTheMissedCriterion) {
  const auto dir = fixture(GetParam());
  const auto reference = load(dir, Precision::kFp32);
  const auto candidate = load(dir, Precision::kInt8);
  const auto report =
      compare_precisions(*reference, *candidate, builtin_examples(dir), Precision::kInt8);
  EXPECT_FALSE(report.pass);
  EXPECT_LT(report.label_agreement, 0.99);
  EXPECT_GT(report.label_agreement, 0.9) << "int8 is close, not broken";
  // A reranker's one logit is judged by the order it gives each query's candidates.
  const std::string criterion = report.num_labels == 1 ? "ranking agreement" : "label agreement";
  const std::string summary = summarize_failures(report);
  EXPECT_NE(summary.find(criterion), std::string::npos) << summary;
  EXPECT_NE(summary.find("< 99"), std::string::npos) << summary;

  LoadOptions gated;
  gated.threads = 1;
  gated.precision = Precision::kInt8;
  gated.check_tokenizer = text_tokenizer(dir);
  try {
    load_encoder(dir, gated);
    ADD_FAILURE() << GetParam() << " int8 passed the gate";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidModel);
    const std::string message = e.what();
    EXPECT_NE(message.find("int8"), std::string::npos) << message;
    EXPECT_NE(message.find(criterion), std::string::npos) << message;
    EXPECT_NE(message.find("--force-precision"), std::string::npos) << message;
  }
  gated.force_precision = true;
  EXPECT_NO_THROW(load_encoder(dir, gated));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Int8Refused, ::testing::ValuesIn(int8_refused_fixtures()),
                         [](const auto& info) {
                           return onepass::testing::fixture_test_name(info.param);
                         });

// An encoder that answers fixed logits, to test the verdict on outputs no real model gives.
class FixedEncoder final : public Encoder {
 public:
  explicit FixedEncoder(std::function<std::vector<float>(std::size_t)> logits)
      : logits_(std::move(logits)) {
    info_.head = HeadKind::kSequenceClassification;
    info_.num_labels = 3;
    info_.id2label = {"a", "b", "c"};
    info_.hidden_size = 4;
    info_.vocab_size = 100;
    info_.max_tokens = 64;
  }
  const ModelInfo& info() const override { return info_; }
  void forward(std::span<const SequenceInput> batch, ForwardOutput& out) const override {
    out.logits.clear();
    for (const auto& s : batch) {
      const auto row = logits_(static_cast<std::size_t>(s.input_ids[0]));
      out.logits.insert(out.logits.end(), row.begin(), row.end());
    }
  }

 private:
  ModelInfo info_;
  std::function<std::vector<float>(std::size_t)> logits_;
};

std::vector<CheckExample> numbered(std::size_t n) {
  std::vector<CheckExample> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i].input_ids = {static_cast<std::int32_t>(i)};
  return out;
}

TEST(PrecisionGate, VerdictCatchesCollapseNanAndSingleFlips) {
  const FixedEncoder reference([](std::size_t i) {
    std::vector<float> v(3, 0.0f);
    v[i % 3] = 1.0f;
    return v;
  });
  const auto examples = numbered(200);

  const auto same = compare_precisions(reference, reference, examples, Precision::kInt8);
  EXPECT_TRUE(same.pass);
  EXPECT_EQ(same.label_agreement, 1.0);
  EXPECT_EQ(same.max_abs_logit_diff, 0.0);

  // Everything predicted as class 0: agreement 1/3 and class shares moving by 2/3.
  const FixedEncoder collapsed([](std::size_t) { return std::vector<float>{1.0f, 0.0f, 0.0f}; });
  const auto c = compare_precisions(reference, collapsed, examples, Precision::kInt8);
  EXPECT_FALSE(c.pass);
  EXPECT_NEAR(c.max_share_shift, 2.0 / 3.0, 0.01);
  EXPECT_NEAR(c.candidate_share[0], 1.0, 1e-12);
  EXPECT_EQ(c.failures.size(), 2u);

  // Two flips in 200 (99%) pass; three (98.5%) fail.
  for (const int flips : {2, 3}) {
    const FixedEncoder flipped([flips](std::size_t i) {
      std::vector<float> v(3, 0.0f);
      v[(i % 3 + (i < static_cast<std::size_t>(flips) ? 1 : 0)) % 3] = 1.0f;
      return v;
    });
    const auto f = compare_precisions(reference, flipped, examples, Precision::kBf16);
    EXPECT_EQ(f.pass, flips == 2) << flips << " flips: " << summarize_failures(f);
  }

  EXPECT_EQ(same.widest_flipped_margin, 0.0);
  // The widest fp32 margin among flipped examples: example i's runner-up trails by 0.01 (i + 1);
  // examples 0 and 1 flip to their runner-up, so the widest flipped margin is example 1's 0.02.
  const FixedEncoder close_calls([](std::size_t i) {
    std::vector<float> v(3, 0.0f);
    v[i % 3] = 1.0f;
    v[(i + 1) % 3] = 1.0f - 0.01f * static_cast<float>(i + 1);
    return v;
  });
  const FixedEncoder two_flipped([](std::size_t i) {
    std::vector<float> v(3, 0.0f);
    v[(i < 2 ? i + 1 : i) % 3] = 1.0f;
    return v;
  });
  const auto m = compare_precisions(close_calls, two_flipped, examples, Precision::kInt8);
  EXPECT_EQ(m.label_agreement, 198.0 / 200.0);
  EXPECT_NEAR(m.widest_flipped_margin, 0.02, 1e-6);

  const FixedEncoder nan([](std::size_t i) {
    std::vector<float> v(3, 0.0f);
    v[i % 3] = 1.0f;
    if (i == 7) v[1] = std::nanf("");
    return v;
  });
  const auto n = compare_precisions(reference, nan, examples, Precision::kInt8);
  EXPECT_FALSE(n.pass);
  EXPECT_EQ(n.non_finite, 1u);

  // Labelled examples: accuracy in both precisions.
  auto labelled = numbered(30);
  for (std::size_t i = 0; i < labelled.size(); ++i) labelled[i].label = static_cast<int>(i % 3);
  const auto acc = compare_precisions(reference, collapsed, labelled, Precision::kInt8);
  ASSERT_TRUE(acc.reference_accuracy.has_value());
  EXPECT_EQ(*acc.reference_accuracy, 1.0);
  EXPECT_NEAR(*acc.candidate_accuracy, 1.0 / 3.0, 1e-12);
  labelled[0].label = 3;
  EXPECT_THROW(compare_precisions(reference, collapsed, labelled, Precision::kInt8), Error);
}

// An encoder of any head whose outputs are fixed per example (input_ids[0] numbers it): per-token
// heads answer `rows(i)` as one input's [tokens, num_labels] logits, base models as its one
// token's hidden state, scorers as its one logit.
class TaskEncoder final : public Encoder {
 public:
  TaskEncoder(HeadKind head, int width, std::function<std::vector<float>(std::size_t)> rows)
      : rows_(std::move(rows)) {
    info_.head = head;
    info_.num_labels = head == HeadKind::kBaseModel ? 0 : width;
    for (int i = 0; i < info_.num_labels; ++i) info_.id2label.push_back("L" + std::to_string(i));
    info_.hidden_size = head == HeadKind::kBaseModel ? width : 4;
    info_.vocab_size = 1000;
    info_.max_tokens = 64;
  }
  const ModelInfo& info() const override { return info_; }
  void forward(std::span<const SequenceInput> batch, ForwardOutput& out) const override {
    out.logits.clear();
    out.hidden_states.clear();
    out.token_offsets.assign(1, 0);
    for (const auto& s : batch) {
      const auto row = rows_(static_cast<std::size_t>(s.input_ids[0]));
      auto& into = info_.head == HeadKind::kBaseModel ? out.hidden_states : out.logits;
      into.insert(into.end(), row.begin(), row.end());
      const int width = info_.head == HeadKind::kBaseModel ? info_.hidden_size : info_.num_labels;
      const std::size_t tokens = per_token_head(info_.head) || info_.head == HeadKind::kBaseModel
                                     ? row.size() / static_cast<std::size_t>(width)
                                     : 1;
      out.token_offsets.push_back(out.token_offsets.back() + tokens);
    }
  }

 private:
  ModelInfo info_;
  std::function<std::vector<float>(std::size_t)> rows_;
};

bool names(const PrecisionReport& r, const std::string& criterion) {
  return summarize_failures(r).find(criterion) != std::string::npos;
}

// Token classifiers, question answering, embedders and rerankers each have a criterion of their
// own, which a flip outside fp32's ties fails and a flip at a tie does not.
TEST(PrecisionGate, EachTaskHasItsOwnEvidence) {
  const auto examples = numbered(50);

  // Token classifiers: 10 tokens of 2 labels per input; label (t + i) % 2 leads by 1.0.
  const auto tokens = [](float lead, std::size_t flipped_inputs) {
    return [lead, flipped_inputs](std::size_t i) {
      std::vector<float> v;
      for (std::size_t t = 0; t < 10; ++t) {
        const bool flip = i < flipped_inputs && t == 0;
        const std::size_t top = (t + i + (flip ? 1 : 0)) % 2;
        v.push_back(top == 0 ? lead : 0.0f);
        v.push_back(top == 1 ? lead : 0.0f);
      }
      return v;
    };
  };
  const TaskEncoder ner(HeadKind::kTokenClassification, 2, tokens(1.0f, 0));
  const TaskEncoder ner_flipped(HeadKind::kTokenClassification, 2, tokens(1.0f, 10));
  auto r = compare_precisions(ner, ner_flipped, examples, Precision::kInt8);
  EXPECT_NEAR(r.token_agreement, 490.0 / 500.0, 1e-12);
  EXPECT_TRUE(names(r, "token label agreement 98.0% < 99.0%")) << summarize_failures(r);
  EXPECT_FALSE(r.pass);
  // The same flips where fp32 itself had a tie (both labels 1.0) count as agreement.
  const TaskEncoder ner_tied(HeadKind::kTokenClassification, 2, [](std::size_t i) {
    std::vector<float> v(20, 0.0f);
    for (std::size_t t = 0; t < 10; ++t) v[2 * t + (t + i) % 2] = 1.0f;
    if (i < 10) v[0] = v[1] = 1.0f;  // token 0: a tie
    return v;
  });
  r = compare_precisions(ner_tied, ner_flipped, examples, Precision::kInt8);
  EXPECT_EQ(r.token_agreement, 1.0) << summarize_failures(r);

  // Question answering: 8 tokens of [start, end], all 5.0 but the answer, token i % 8 alone, at
  // 5.3 (so a moved answer keeps the logits' cosine at 0.9996, within the cosine bar).
  const auto spans = [](std::size_t moved) {
    return [moved](std::size_t i) {
      std::vector<float> v(16, 5.0f);
      const std::size_t at = (i + (i < moved ? 1 : 0)) % 8;
      v[2 * at] = v[2 * at + 1] = 5.3f;
      return v;
    };
  };
  const TaskEncoder qa(HeadKind::kQuestionAnswering, 2, spans(0));
  r = compare_precisions(qa, TaskEncoder(HeadKind::kQuestionAnswering, 2, spans(1)), numbered(100),
                         Precision::kBf16);
  EXPECT_EQ(r.span_agreement, 0.99);  // one answer in 100 may move
  EXPECT_TRUE(r.pass) << summarize_failures(r);
  r = compare_precisions(qa, TaskEncoder(HeadKind::kQuestionAnswering, 2, spans(5)), examples,
                         Precision::kBf16);
  EXPECT_TRUE(names(r, "answer span agreement 90.0% < 99.0%")) << summarize_failures(r);

  // Embedders: x0's nearest neighbour is x1 (10 degrees) before x2 (-14 degrees), the others
  // at 43 to 59 degrees; turning x1 by 6 degrees (cosine 0.9945 to itself, within the cosine
  // bar) makes x2 the nearest, by more than a tie (2% of x0's cosines' spread).
  const auto angles = [](double x1) {
    return [x1](std::size_t i) {
      const double deg = i == 0 ? 0.0 : i == 1 ? x1 : i == 2 ? -14.0 : 40.0 + 1.0 * i;
      const double rad = deg * 3.14159265358979 / 180.0;
      return std::vector<float>{static_cast<float>(std::cos(rad)),
                                static_cast<float>(std::sin(rad))};
    };
  };
  const TaskEncoder embed(HeadKind::kBaseModel, 2, angles(10.0));
  r = compare_precisions(embed, TaskEncoder(HeadKind::kBaseModel, 2, angles(16.0)), numbered(20),
                         Precision::kInt8);
  EXPECT_GT(r.min_cosine, 0.99);
  EXPECT_NEAR(r.neighbour_agreement, 19.0 / 20.0, 1e-12);
  EXPECT_TRUE(names(r, "nearest-neighbour agreement 95.0% < 99.0%")) << summarize_failures(r);
  EXPECT_TRUE(compare_precisions(embed, TaskEncoder(HeadKind::kBaseModel, 2, angles(11.0)),
                                 numbered(20), Precision::kInt8)
                  .pass);

  // Rerankers: 40 documents scored 0..39, four queries of ten; swapping documents 0 and 1 keeps
  // 779 of 780 pairs in order (99.9%) but changes query 0's order.
  auto queried = numbered(40);
  for (std::size_t i = 0; i < queried.size(); ++i) queried[i].query = static_cast<int>(i / 10);
  const auto scores = [](bool swap) {
    return [swap](std::size_t i) {
      const std::size_t rank = swap && i < 2 ? 1 - i : i;
      return std::vector<float>{static_cast<float>(rank)};
    };
  };
  const TaskEncoder rerank(HeadKind::kSequenceClassification, 1, scores(false));
  r = compare_precisions(rerank, TaskEncoder(HeadKind::kSequenceClassification, 1, scores(true)),
                         queried, Precision::kInt8);
  EXPECT_GE(r.label_agreement, 0.99);
  EXPECT_EQ(r.queries, 4u);
  EXPECT_EQ(r.query_agreement, 0.75);
  EXPECT_TRUE(names(r, "per-query rank agreement 75.0% < 99.0%")) << summarize_failures(r);
}

// Pairs that share their first text share a query id; single texts have none.
TEST(PrecisionGate, PairsSharingTheirFirstTextShareAQuery) {
  const CheckText texts[] = {
      {"en", "q1", "d1"}, {"en", "q2", "d1"}, {"en", "q1", "d2"}, {"en", "single", nullptr}};
  const TextTokenizer tokenize = [](std::string_view text, std::optional<std::string_view>) {
    return TokenizedText{{static_cast<std::int32_t>(text.size())}, {}};
  };
  const auto examples = tokenize_check_texts(tokenize, texts);
  ASSERT_EQ(examples.size(), 4u);
  EXPECT_EQ(examples[0].query, examples[2].query);
  EXPECT_NE(examples[0].query, examples[1].query);
  EXPECT_GE(examples[1].query, 0);
  EXPECT_EQ(examples[3].query, -1);
}

}  // namespace
}  // namespace onepass::model
