// Each architecture family's config: its config class's defaults, its own fields, and its
// refusals, through model::parse_model_config (the architecture picks the family, as at load).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "base/error.h"
#include "model/architectures/deberta_v2/deberta_v2_config.h"
#include "model/architectures/electra/electra_config.h"
#include "model/architectures/gte/gte_config.h"
#include "model/architectures/modernbert/modernbert_config.h"
#include "model/architectures/nomic_bert/nomic_bert_config.h"
#include "model/encoder.h"

namespace onepass::model {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::filesystem::path kModels =
    std::filesystem::path(ONEPASS_TEST_DATA_DIR) / "fixtures/models";

TEST(FamilyConfig, ReadsDebertaFixtureFields) {
  const auto c = deberta_v2_config(read_model_config(kModels / "deberta-v2-tiny-nli"));
  EXPECT_TRUE(c.relative_attention);
  EXPECT_EQ(c.max_relative_positions, -1);
  EXPECT_EQ(c.position_buckets, 32);
  EXPECT_THAT(c.pos_att_type, ElementsAre("p2c", "c2p"));
  EXPECT_TRUE(c.share_att_key);
  EXPECT_EQ(c.norm_rel_ebd, "layer_norm");
  EXPECT_FALSE(c.position_biased_input);
  EXPECT_EQ(c.type_vocab_size, 0);
  EXPECT_EQ(c.conv_kernel_size, 0);  // absent: modeling code's getattr default
  EXPECT_EQ(c.conv_act, "tanh");
  EXPECT_EQ(c.conv_groups, 1);
  EXPECT_EQ(c.pooler_hidden_size, 64);
  EXPECT_EQ(c.embedding_size, 64);
  EXPECT_EQ(c.pooler_hidden_act, "gelu");
  EXPECT_DOUBLE_EQ(c.layer_norm_eps, 1e-7);
}

TEST(FamilyConfig, DefaultsAreEachConfigClasses) {
  const auto deberta = deberta_v2_config(parse_model_config(
      R"({"architectures":["DebertaV2Model"],"hidden_size":64,"num_attention_heads":4})"));
  EXPECT_EQ(deberta.type_vocab_size, 0);
  EXPECT_EQ(deberta.vocab_size, 128100);
  EXPECT_TRUE(deberta.position_biased_input);
  EXPECT_FALSE(deberta.share_att_key);
  EXPECT_EQ(deberta.position_buckets, -1);
  EXPECT_EQ(deberta.norm_rel_ebd, "none");
  EXPECT_TRUE(deberta.pos_att_type.empty());
  EXPECT_EQ(deberta.pooler_hidden_size, 64);
  EXPECT_DOUBLE_EQ(deberta.layer_norm_eps, 1e-7);

  const auto xlmr = parse_model_config(R"({"architectures":["XLMRobertaModel"],
                                           "model_type":"xlm-roberta"})");
  EXPECT_EQ(xlmr.pad_token_id, 1);
  EXPECT_EQ(xlmr.hidden_size, 768);
  EXPECT_EQ(xlmr.type_vocab_size, 2);
  const auto bert = parse_model_config(R"({"architectures":["BertModel"]})");
  EXPECT_EQ(bert.pad_token_id, 0);
  // CamembertConfig: RobertaConfig's defaults, pad 1; its table line says so, not model_type.
  const auto camembert =
      parse_model_config(R"({"architectures":["CamembertForTokenClassification"]})");
  EXPECT_EQ(camembert.pad_token_id, 1);
  EXPECT_EQ(camembert.type_vocab_size, 2);

  const auto electra = electra_config(parse_model_config(R"({"architectures":["ElectraModel"]})"));
  EXPECT_EQ(electra.embedding_size, 128);
  EXPECT_EQ(electra.hidden_size, 256);
  EXPECT_EQ(electra.num_attention_heads, 4);
  EXPECT_EQ(electra.intermediate_size, 1024);
}

TEST(FamilyConfig, DistilBertNamesMapToTheSharedSizes) {
  const auto c = parse_model_config(
      R"({"architectures":["DistilBertModel"],"dim":32,"n_layers":3,"n_heads":2,
          "hidden_dim":48,"activation":"relu","hidden_size":999,"layer_norm_eps":0.5})");
  EXPECT_EQ(c.hidden_size, 32);
  EXPECT_EQ(c.num_hidden_layers, 3);
  EXPECT_EQ(c.num_attention_heads, 2);
  EXPECT_EQ(c.intermediate_size, 48);
  EXPECT_EQ(c.hidden_act, "relu");
  EXPECT_EQ(c.type_vocab_size, 0);
  EXPECT_DOUBLE_EQ(c.layer_norm_eps, 1e-12);  // fixed in DistilBERT's modeling code
  const auto defaults = parse_model_config(R"({"architectures":["DistilBertModel"]})");
  EXPECT_EQ(defaults.num_hidden_layers, 6);
  EXPECT_EQ(defaults.hidden_size, 768);
}

TEST(FamilyConfig, PosAttTypeAsPipeString) {
  const auto c = deberta_v2_config(
      parse_model_config(R"({"architectures":["DebertaV2Model"],"pos_att_type":"c2p|p2c"})"));
  EXPECT_THAT(c.pos_att_type, ElementsAre("c2p", "p2c"));
}

TEST(FamilyConfig, ModernBertNamesAndDefaults) {
  const auto fixture = modernbert_config(read_model_config(kModels / "modernbert-tiny-rerank"));
  EXPECT_EQ(fixture.num_hidden_layers, 3);
  EXPECT_EQ(fixture.local_attention, 8);
  EXPECT_EQ(fixture.classifier_pooling, "mean");
  EXPECT_DOUBLE_EQ(fixture.layer_norm_eps, 1e-5);  // from norm_eps
  EXPECT_EQ(fixture.type_vocab_size, 0);
  EXPECT_TRUE(fixture.global_layer(0));
  EXPECT_FALSE(fixture.global_layer(1));
  EXPECT_FALSE(fixture.global_layer(2));

  // ModernBertConfig's defaults: ModernBERT-base's sizes.
  const auto defaults =
      modernbert_config(parse_model_config(R"({"architectures":["ModernBertModel"]})"));
  EXPECT_EQ(defaults.hidden_size, 768);
  EXPECT_EQ(defaults.num_hidden_layers, 22);
  EXPECT_EQ(defaults.intermediate_size, 1152);
  EXPECT_EQ(defaults.max_position_embeddings, 8192);
  EXPECT_EQ(defaults.pad_token_id, 50283);
  EXPECT_EQ(defaults.hidden_act, "gelu");
  EXPECT_DOUBLE_EQ(defaults.global_rope_theta, 160000.0);
  EXPECT_DOUBLE_EQ(defaults.local_rope_theta, 10000.0);
  EXPECT_EQ(defaults.classifier_pooling, "cls");
  EXPECT_FALSE(defaults.norm_bias);

  // local_rope_theta null: the local layers take the global theta (ModernBertAttention).
  const auto null_local = modernbert_config(parse_model_config(
      R"({"architectures":["ModernBertModel"],"global_rope_theta":500.0,
          "local_rope_theta":null,"hidden_activation":"gelu_new"})"));
  EXPECT_DOUBLE_EQ(null_local.local_rope_theta, 500.0);
  EXPECT_EQ(null_local.hidden_act, "gelu_new");
}

TEST(FamilyConfig, NomicBertGpt2NamesAndMlpWidth) {
  // nomic-embed-text-v1.5's branches at the tiny shape: n_inner 100 rounded up to 256 by the
  // gated MLP, the vocabulary already padded to a multiple of 64 in config.json.
  const auto embed = nomic_bert_config(read_model_config(kModels / "nomic-bert-tiny-embed"));
  EXPECT_EQ(embed.hidden_size, 64);
  EXPECT_EQ(embed.num_attention_heads, 4);
  EXPECT_EQ(embed.num_hidden_layers, 3);
  EXPECT_EQ(embed.intermediate_size, 256);
  EXPECT_EQ(embed.vocab_size, 2624);
  EXPECT_EQ(embed.max_position_embeddings, 2048);
  EXPECT_TRUE(embed.gated_mlp);
  EXPECT_EQ(embed.mlp_activation, kernels::Activation::kSilu);
  EXPECT_DOUBLE_EQ(embed.rotary.base, 1000.0);
  EXPECT_FALSE(embed.qkv_bias);
  const auto nli = nomic_bert_config(read_model_config(kModels / "nomic-bert-tiny-nli"));
  EXPECT_FALSE(nli.gated_mlp);
  EXPECT_EQ(nli.intermediate_size, 128);
  EXPECT_TRUE(nli.qkv_bias);

  // An unpadded vocabulary is padded as NomicBertModel pads its embedding; a null n_inner is
  // int(8 n_embd / 3) rounded up to 256 for a gated MLP, 4 n_embd for the plain one.
  const auto padded = nomic_bert_config(parse_model_config(
      R"({"architectures":["NomicBertModel"],"vocab_size":30522,"pad_vocab_size_multiple":64,
          "n_embd":768,"n_head":12,"n_inner":null,"activation_function":"swiglu",
          "rotary_emb_fraction":1.0})"));
  EXPECT_EQ(padded.vocab_size, 30528);
  EXPECT_EQ(padded.intermediate_size, 2048);
  const auto plain = nomic_bert_config(parse_model_config(
      R"({"architectures":["NomicBertModel"],"n_embd":96,"n_head":2,
          "activation_function":"gelu_new","rotary_emb_fraction":1.0})"));
  EXPECT_EQ(plain.intermediate_size, 384);
  EXPECT_EQ(plain.mlp_activation, kernels::Activation::kGeluErf);  // the code's F.gelu

  // Dynamic NTK scaling (rotary_scaling_factor 2, as nomic-embed-text-v1.5's card suggests for
  // 8192 tokens): the base only moves past max_trained_positions, by
  // (f L / M - (f - 1))^(d / (d - 2)); d = 64 here.
  const auto ntk = nomic_bert_config(parse_model_config(
      R"({"architectures":["NomicBertModel"],"n_embd":768,"n_head":12,"rotary_emb_fraction":1.0,
          "rotary_emb_base":1000,"rotary_scaling_factor":2,"max_trained_positions":2048})"));
  EXPECT_DOUBLE_EQ(ntk.rotary.base_for(2048), 1000.0);
  EXPECT_DOUBLE_EQ(ntk.rotary.base_for(4096), 1000.0 * std::pow(3.0, 64.0 / 62.0));
  EXPECT_DOUBLE_EQ(ntk.rotary.base_for(8192), 1000.0 * std::pow(7.0, 64.0 / 62.0));
  EXPECT_DOUBLE_EQ(embed.rotary.base_for(8192), 1000.0);  // null: never scaled
}

TEST(FamilyConfig, GteRotaryAndNtkScaling) {
  // gte-base-en-v1.5's branches at the tiny shape: no token types, base 500000, NTK factor 2.
  const auto embed = gte_config(read_model_config(kModels / "gte-tiny-embed"));
  EXPECT_EQ(embed.hidden_size, 64);
  EXPECT_EQ(embed.intermediate_size, 96);
  EXPECT_EQ(embed.type_vocab_size, 0);
  EXPECT_EQ(embed.max_position_embeddings, 512);
  EXPECT_DOUBLE_EQ(embed.rope_theta, 500000.0);
  EXPECT_DOUBLE_EQ(embed.ntk_factor, 2.0);
  // gte-multilingual-base's: one token type, rope_scaling null.
  const auto rerank = gte_config(read_model_config(kModels / "gte-tiny-rerank"));
  EXPECT_EQ(rerank.type_vocab_size, 1);
  EXPECT_DOUBLE_EQ(rerank.rope_theta, 160000.0);
  EXPECT_DOUBLE_EQ(rerank.ntk_factor, 1.0);
  // NewConfig's defaults where they are not BertConfig's; mixed_b null is the fixed scaling.
  const auto defaults = gte_config(parse_model_config(
      R"({"architectures":["NewModel"],"rope_scaling":{"type":"ntk","factor":4,"mixed_b":null}})"));
  EXPECT_EQ(defaults.vocab_size, 30528);
  EXPECT_EQ(defaults.max_position_embeddings, 2048);
  EXPECT_EQ(defaults.type_vocab_size, 1);
  EXPECT_DOUBLE_EQ(defaults.rope_theta, 10000.0);
  EXPECT_DOUBLE_EQ(defaults.ntk_factor, 4.0);
}

std::string error_of(const std::string& text, ErrorKind kind = ErrorKind::kInvalidModel) {
  try {
    parse_model_config(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.what();
  }
  return "no error";
}

TEST(FamilyConfig, RefusesEachFamilysImpossibleFieldsBeforeLoad) {
  EXPECT_THAT(error_of(R"({"architectures":["DebertaV2Model"],"relative_attention":1})"),
              HasSubstr("relative_attention must be true or false"));
  EXPECT_THAT(error_of(R"({"architectures":["DebertaV2Model"],"conv_groups":0})"),
              HasSubstr("conv_groups must be positive"));
  EXPECT_THAT(error_of(R"({"architectures":["ElectraModel"],"embedding_size":-1})"),
              HasSubstr("embedding_size must be positive"));
  EXPECT_THAT(error_of(R"({"architectures":["DistilBertModel"],"dim":100,"n_heads":3})"),
              HasSubstr("not a multiple"));
  EXPECT_THAT(error_of(R"({"architectures":["ModernBertModel"],"global_attn_every_n_layers":0})"),
              HasSubstr("global_attn_every_n_layers must be positive"));
  EXPECT_THAT(error_of(R"({"architectures":["ModernBertForSequenceClassification"],
                           "classifier_pooling":"max"})",
                       ErrorKind::kUnsupported),
              HasSubstr("classifier_pooling \"max\""));

  // NomicBERT's remote-code branches this engine does not run, named.
  const std::string nomic = R"({"architectures":["NomicBertModel"],"rotary_emb_fraction":1.0,)";
  const auto unsupported = ErrorKind::kUnsupported;
  EXPECT_THAT(error_of(nomic + R"("prenorm":true})", unsupported), HasSubstr("prenorm true"));
  EXPECT_THAT(error_of(nomic + R"("rotary_emb_scale_base":512})", unsupported),
              HasSubstr("rotary_emb_scale_base 512"));
  EXPECT_THAT(error_of(nomic + R"("max_trained_positions":0})"),
              HasSubstr("max_trained_positions must be positive"));
  EXPECT_THAT(error_of(nomic + R"("activation_function":"glu"})", unsupported),
              HasSubstr("activation_function glu"));
  EXPECT_THAT(error_of(nomic + R"("moe_every_n_layers":2})", unsupported),
              HasSubstr("mixture of experts"));
  EXPECT_THAT(
      error_of(R"({"architectures":["NomicBertModel"],"rotary_emb_fraction":0.5})", unsupported),
      HasSubstr("rotary_emb_fraction 0.5"));
  EXPECT_THAT(error_of(R"({"architectures":["NomicBertModel"]})", unsupported),
              HasSubstr("rotary_emb_fraction 0 (rotary positions on the whole head only)"));
  EXPECT_THAT(error_of(nomic + R"("n_inner":0})"), HasSubstr("n_inner must be positive"));

  // GTE's remote-code branches this engine does not run, named.
  const std::string gte = R"({"architectures":["NewForSequenceClassification"],)";
  EXPECT_THAT(error_of(gte + R"("position_embedding_type":"absolute"})", unsupported),
              HasSubstr("position_embedding_type absolute"));
  EXPECT_THAT(error_of(gte + R"("layer_norm_type":"rms_norm"})", unsupported),
              HasSubstr("layer_norm_type rms_norm"));
  EXPECT_THAT(error_of(gte + R"("pack_qkv":false})", unsupported), HasSubstr("pack_qkv false"));
  EXPECT_THAT(error_of(gte + R"("logn_attention_scale":true})", unsupported),
              HasSubstr("logn_attention_scale true"));
  EXPECT_THAT(error_of(gte + R"("rope_scaling":{"type":"linear","factor":2}})", unsupported),
              HasSubstr("rope_scaling type 'linear'"));
  EXPECT_THAT(
      error_of(gte + R"("rope_scaling":{"type":"ntk","factor":2,"mixed_b":0.5}})", unsupported),
      HasSubstr("mixed NTK scaling"));
  EXPECT_THAT(error_of(gte + R"("rope_scaling":{"type":"ntk"}})"),
              HasSubstr("rope_scaling needs a factor"));
  EXPECT_THAT(error_of(gte + R"("rope_scaling":[2]})"),
              HasSubstr("rope_scaling must be an object"));
  EXPECT_THAT(error_of(gte + R"("rope_theta":0})"), HasSubstr("rope_theta must be positive"));
}

TEST(FamilyConfig, ForeignArchitectureIsUnsupportedBeforeItsSizesAreRead) {
  // GPT-2's config has n_embd, not hidden_size: the architecture is named, not a size.
  EXPECT_THAT(error_of(R"({"architectures":["GPT2LMHeadModel"],"num_attention_heads":7})",
                       ErrorKind::kUnsupported),
              HasSubstr("unsupported architecture GPT2LMHeadModel"));
  EXPECT_THAT(error_of(R"({"model_type":"bert"})", ErrorKind::kUnsupported),
              HasSubstr("names no architecture"));
  // Not in transformers 4.48 (table.cpp's question_answering column).
  EXPECT_THAT(
      error_of(R"({"architectures":["ModernBertForQuestionAnswering"]})", ErrorKind::kUnsupported),
      HasSubstr("unsupported architecture ModernBertForQuestionAnswering"));
}

}  // namespace
}  // namespace onepass::model
