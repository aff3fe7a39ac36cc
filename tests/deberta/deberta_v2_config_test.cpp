// Every DeBERTa-v2 configuration switch the fixture leaves at one value: a copy of the fixture
// config with fields changed, random weights with exactly the tensors that config implies
// (share_att_key false needs pos_key_proj / pos_query_proj, conv_kernel_size the conv, ...),
// and the engine's batched, padding-free forward compared with the naive reference model run
// on each sequence alone.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <random>

#include "base/error.h"
#include "model/encoder.h"
#include "reference/model_reference.h"
#include "support/model_folder.h"

namespace onepass::model {
namespace {

namespace ref = onepass::testing::deberta_ref;
namespace support = onepass::testing::deberta_support;
using nlohmann::json;

json fixture_config() {
  std::ifstream in(std::filesystem::path(ONEPASS_TEST_DATA_DIR) /
                   "fixtures/models/deberta-v2-tiny-nli/config.json");
  return json::parse(in);
}

struct Variant {
  std::string name;
  json patch;  // merged over the fixture's config.json
};

void PrintTo(const Variant& v, std::ostream* os) { *os << v.name; }

class DebertaV2Config : public ::testing::TestWithParam<Variant> {};

TEST_P(DebertaV2Config, BatchedEngineMatchesNaiveReference) {
  json config = fixture_config();
  config.merge_patch(GetParam().patch);
  const support::TempModelFolder folder(config, 99);
  const auto setup = ref::parse_setup(config.dump());
  const ref::TensorSource tensors = [&](const std::string& name) {
    const auto it = folder.tensors().find(name);
    if (it == folder.tensors().end()) throw std::runtime_error("reference wants " + name);
    return it->second.values;
  };

  LoadOptions options;
  options.threads = 2;
  const auto encoder = load_encoder(folder.path(), options);

  // Lengths around the bucket edges and past small max_relative_positions.
  std::mt19937 rng(5);
  const int vocab = config.at("vocab_size");
  const int types = config.value("type_vocab_size", 0);
  std::vector<std::vector<std::int32_t>> ids, type_ids;
  for (const int len : {1, 2, 17, 40, 100, 150}) {
    std::vector<std::int32_t> seq(len), seq_types(len);
    for (auto& id : seq) id = std::uniform_int_distribution<int>(0, vocab - 1)(rng);
    for (auto& t : seq_types)
      t = types > 0 ? std::uniform_int_distribution<int>(0, types - 1)(rng) : 0;
    ids.push_back(seq);
    type_ids.push_back(types > 0 ? seq_types : std::vector<std::int32_t>{});
  }
  std::vector<SequenceInput> batch;
  for (std::size_t s = 0; s < ids.size(); ++s) batch.push_back({ids[s], type_ids[s]});
  ForwardOutput out;
  encoder->forward(batch, out);

  const auto hidden = static_cast<std::size_t>(config.at("hidden_size").get<int>());
  for (std::size_t s = 0; s < ids.size(); ++s) {
    const auto expected = ref::forward(setup, tensors, ids[s], type_ids[s]);
    if (setup.classifier) {
      ASSERT_EQ(out.logits.size(), ids.size() * expected.size());
      for (std::size_t i = 0; i < expected.size(); ++i)
        EXPECT_NEAR(out.logits[s * expected.size() + i], expected[i], 1e-4)
            << "sequence of " << ids[s].size() << " tokens, logit " << i;
    } else {
      ASSERT_EQ(out.token_offsets.size(), ids.size() + 1);
      const std::size_t begin = out.token_offsets[s] * hidden;
      ASSERT_EQ(expected.size(), ids[s].size() * hidden);
      for (std::size_t i = 0; i < expected.size(); ++i)
        ASSERT_NEAR(out.hidden_states[begin + i], expected[i], 1e-4)
            << "sequence of " << ids[s].size() << " tokens, element " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Switches, DebertaV2Config,
    ::testing::Values(
        Variant{"unshared_keys_both_terms", {{"share_att_key", false}}},
        Variant{"unshared_c2p_only_no_buckets_no_norm",
                {{"share_att_key", false},
                 {"pos_att_type", {"c2p"}},
                 {"position_buckets", -1},
                 {"max_relative_positions", 64},
                 {"norm_rel_ebd", "none"}}},
        Variant{
            "p2c_only_as_string_small_buckets",
            {{"pos_att_type", "P2C"}, {"position_buckets", 16}, {"max_relative_positions", 40}}},
        Variant{"order_c2p_p2c_string", {{"pos_att_type", "c2p|p2c"}}},
        Variant{
            "clamped_distances",
            {{"position_buckets", -1}, {"max_relative_positions", 16}, {"share_att_key", false}}},
        Variant{"absolute_positions_token_types_conv",
                {{"position_biased_input", true},
                 {"type_vocab_size", 2},
                 {"conv_kernel_size", 3},
                 {"conv_act", "gelu"}}},
        Variant{"grouped_conv_embed_proj_tanh_pooler",
                {{"conv_kernel_size", 5},
                 {"conv_groups", 4},
                 {"conv_act", "tanh"},
                 {"embedding_size", 32},
                 {"hidden_act", "gelu_new"},
                 {"pooler_hidden_act", "tanh"},
                 {"num_hidden_layers", 3}}},
        Variant{"relative_without_terms", {{"pos_att_type", json::array()}}},
        Variant{"no_relative_attention_base_model",
                {{"relative_attention", false},
                 {"architectures", {"DebertaV2Model"}},
                 {"position_biased_input", true},
                 {"type_vocab_size", 1}}},
        Variant{"relative_base_model", {{"architectures", {"DebertaV2Model"}}}}),
    [](const ::testing::TestParamInfo<Variant>& info) { return info.param.name; });

TEST(DebertaV2ConfigErrors, RefusesWhatTransformersCannotRun) {
  const auto expect_error = [](json patch, ErrorKind kind) {
    json config = fixture_config();
    config.merge_patch(patch);
    json weights_config = config;
    // Weights for a valid neighbour, so the error comes from the config check.
    if (weights_config.value("conv_kernel_size", 0) % 2 == 0 &&
        weights_config.value("conv_kernel_size", 0) > 0)
      weights_config["conv_kernel_size"] = 3;
    const support::TempModelFolder folder(weights_config, 1);
    std::ofstream(folder.path() / "config.json") << config.dump();
    try {
      load_encoder(folder.path(), {});
      ADD_FAILURE() << "accepted " << patch.dump();
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), kind) << e.what();
    }
  };
  expect_error({{"conv_kernel_size", 4}}, ErrorKind::kUnsupported);
  expect_error({{"position_buckets", 1}}, ErrorKind::kUnsupported);
  expect_error({{"hidden_act", "mystery"}}, ErrorKind::kUnsupported);
  // A tensor the config needs is absent: share_att_key false without pos_key_proj.
  {
    json config = fixture_config();
    const support::TempModelFolder folder(config, 2);
    config["share_att_key"] = false;
    std::ofstream(folder.path() / "config.json") << config.dump();
    EXPECT_THROW(load_encoder(folder.path(), {}), Error);
  }
}

}  // namespace
}  // namespace onepass::model
