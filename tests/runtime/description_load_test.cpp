// describe_model_folder (what a lazily loaded model is served as before load) against the loaded
// encoder's own ModelInfo, on every fixture model: the two come from one parse of config.json.
#include <gtest/gtest.h>

#include "fakes.h"
#include "model/encoder.h"
#include "runtime/model_config.h"
#include "tests/model/golden.h"

namespace onepass::runtime {
namespace {

using testing::fixture_model;

// The description served before a lazy load and the loaded encoder's info come from the same
// parse: for every fixture they agree field by field (DistilBERT's config names its sizes
// dim/n_heads, which a second parser once missed).
TEST(ModelDescription, DescriptionBeforeLoadIsTheLoadedEncodersInfo) {
  std::vector<std::string> models = onepass::testing::golden_models();
  for (const std::string& name :
       onepass::testing::fixtures_with_task({onepass::testing::FixtureTask::kExtractor}))
    models.push_back(name);  // GLiNER: gliner_config.json read before load and at it
  for (const std::string& name : models) {
    SCOPED_TRACE(name);
    const auto d = describe_model_folder(name, fixture_model(name));
    const auto encoder = model::load_encoder(fixture_model(name), model::LoadOptions{1});
    const model::ModelInfo& loaded = encoder->info();
    EXPECT_EQ(d.info.architecture, loaded.architecture);
    EXPECT_EQ(d.info.model_type, loaded.model_type);
    EXPECT_EQ(d.info.head, loaded.head);
    EXPECT_EQ(d.info.hidden_size, loaded.hidden_size);
    EXPECT_EQ(d.info.num_labels, loaded.num_labels);
    EXPECT_EQ(d.info.id2label, loaded.id2label);
    EXPECT_EQ(d.info.problem_type, loaded.problem_type);
    EXPECT_EQ(d.info.multi_label, loaded.multi_label);
    EXPECT_EQ(d.info.max_tokens, loaded.max_tokens);
    EXPECT_EQ(d.info.vocab_size, loaded.vocab_size);
    EXPECT_EQ(d.info.type_vocab_size, loaded.type_vocab_size);
    EXPECT_GT(d.info.hidden_size, 0);
    EXPECT_EQ(d.task, task_of(loaded));
    EXPECT_EQ(d.info.span.span_mode, loaded.span.span_mode);
    EXPECT_EQ(d.info.span.max_width, loaded.span.max_width);
    EXPECT_EQ(d.info.span.max_words, loaded.span.max_words);
    EXPECT_EQ(d.info.span.entity_token_id, loaded.span.entity_token_id);
  }
}

}  // namespace
}  // namespace onepass::runtime
