// deberta-v2-tiny-nli through the public load_encoder: what the fixture's config implies
// (ModelInfo), refused inputs, ignored token types. Its golden cases and batch invariance run in
// the engine's harness (tests/model: golden_test, batch_invariance_test).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/error.h"
#include "model/encoder.h"

namespace onepass::model {
namespace {

const std::filesystem::path kFixture =
    std::filesystem::path(ONEPASS_TEST_DATA_DIR) / "fixtures/models/deberta-v2-tiny-nli";

std::unique_ptr<Encoder> load_fixture(int threads) {
  LoadOptions options;
  options.threads = threads;
  return load_encoder(kFixture, options);
}

TEST(DebertaV2Encoder, InfoFollowsTheConfig) {
  const auto encoder = load_fixture(1);
  const ModelInfo& info = encoder->info();
  EXPECT_EQ(info.architecture, "DebertaV2ForSequenceClassification");
  EXPECT_EQ(info.model_type, "deberta-v2");
  EXPECT_EQ(info.head, HeadKind::kSequenceClassification);
  EXPECT_EQ(info.hidden_size, 64);
  EXPECT_EQ(info.num_labels, 3);
  EXPECT_EQ(info.id2label, (std::vector<std::string>{"entailment", "neutral", "contradiction"}));
  EXPECT_EQ(info.max_tokens, 512);
  EXPECT_EQ(info.vocab_size, 4224);
  EXPECT_EQ(info.type_vocab_size, 0);
  EXPECT_FALSE(info.has_pooler);
}

TEST(DebertaV2Encoder, RejectsBadInputs) {
  const auto encoder = load_fixture(1);
  ForwardOutput out;
  const std::vector<std::int32_t> outside = {1, 4224, 2};
  const std::vector<std::int32_t> negative = {1, -1, 2};
  const std::vector<std::int32_t> empty;
  const std::vector<std::int32_t> too_long(513, 5);
  for (const auto* ids : {&outside, &negative, &empty, &too_long}) {
    const std::vector<SequenceInput> batch = {{*ids, {}}};
    try {
      encoder->forward(batch, out);
      ADD_FAILURE() << "accepted a bad sequence of " << ids->size() << " ids";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput) << e.what();
    }
  }
  // type_vocab_size is 0: token_type_ids are ignored, as transformers does.
  const std::vector<std::int32_t> ids = {1, 20, 30, 2};
  const std::vector<std::int32_t> types = {0, 0, 1, 1};
  ForwardOutput with_types;
  encoder->forward(std::vector<SequenceInput>{{ids, types}}, with_types);
  encoder->forward(std::vector<SequenceInput>{{ids, {}}}, out);
  EXPECT_EQ(with_types.logits, out.logits);
}

}  // namespace
}  // namespace onepass::model
