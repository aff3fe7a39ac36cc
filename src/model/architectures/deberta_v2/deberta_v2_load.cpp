// Loading half of the DeBERTa-v2 encoder: config checks, weight lookup by Hugging Face name
// (shapes from config.json), the fused QKV matrix, and the relative-embedding projections that
// depend on weights only and so are computed once here.
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "base/error.h"
#include "kernels/activation.h"
#include "kernels/elementwise.h"
#include "kernels/small_gemm_bf16.h"
#include "model/architectures/architectures.h"
#include "model/architectures/deberta_v2/deberta_v2_attention.h"
#include "model/architectures/deberta_v2/deberta_v2_model.h"
#include "model/layers/encoder_heads.h"
#include "model/precision_check.h"

namespace onepass::model {
namespace deberta_v2 {
namespace {

[[noreturn]] void unsupported(const std::string& what) {
  throw Error(ErrorKind::kUnsupported, "DeBERTa-v2: " + what);
}

// HF lower-cases and strips the items of pos_att_type ("c2p|p2c" strings) and norm_rel_ebd.
std::string normalized(std::string item) {
  std::transform(item.begin(), item.end(), item.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  item.erase(0, item.find_first_not_of(" \t\n"));
  item.erase(item.find_last_not_of(" \t\n") + 1);
  return item;
}

bool has_token(const std::vector<std::string>& list, std::string_view token) {
  return std::any_of(list.begin(), list.end(),
                     [token](const std::string& item) { return normalized(item) == token; });
}

// norm_rel_ebd is a "|"-separated list.
bool norm_rel_ebd_has_layer_norm(const std::string& text) {
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('|', start);
    if (end == std::string::npos) end = text.size();
    if (normalized(text.substr(start, end - start)) == "layer_norm") return true;
    start = end + 1;
  }
  return false;
}

}  // namespace

AttentionWeights read_deberta_v2_attention(const DebertaV2Config& c,
                                           const weights::WeightStore& store, const std::string& a,
                                           bool c2p, bool p2c) {
  const std::int64_t hidden = c.hidden_size;
  const auto h = static_cast<std::size_t>(hidden);
  const auto q_w = store.get(a + "query_proj.weight", {hidden, hidden});
  const auto q_b = store.get(a + "query_proj.bias", {hidden});
  const auto k_w = store.get(a + "key_proj.weight", {hidden, hidden});
  const auto k_b = store.get(a + "key_proj.bias", {hidden});
  const auto v_w = store.get(a + "value_proj.weight", {hidden, hidden});
  const auto v_b = store.get(a + "value_proj.bias", {hidden});
  AttentionWeights weights;
  weights.qkv_weight.reserve(3 * h * h);
  for (const auto* w : {&q_w, &k_w, &v_w})
    weights.qkv_weight.insert(weights.qkv_weight.end(), w->data, w->data + h * h);
  for (const auto* b : {&q_b, &k_b, &v_b})
    weights.qkv_bias.insert(weights.qkv_bias.end(), b->data, b->data + h);
  // The relative projections: their own pos_*_proj, or with share_att_key the content ones.
  const auto relative = [&](const char* name, const weights::WeightView& shared_w,
                            const weights::WeightView& shared_b, const float*& weight,
                            const float*& bias) {
    const std::string own = a + name;
    weight = c.share_att_key ? shared_w.data : store.get(own + ".weight", {hidden, hidden}).data;
    bias = c.share_att_key ? shared_b.data : store.get(own + ".bias", {hidden}).data;
  };
  if (c2p) relative("pos_key_proj", k_w, k_b, weights.pos_key_weight, weights.pos_key_bias);
  if (p2c) relative("pos_query_proj", q_w, q_b, weights.pos_query_weight, weights.pos_query_bias);
  return weights;
}

Model::Model(const DebertaV2Config& c, weights::WeightStore store, const LoadOptions& options,
             AttentionReader read_attention)
    : store_(std::move(store)) {
  info_ = describe_checkpoint(c);
  const bool classifier = info_.head != HeadKind::kBaseModel;
  prefix_ = classifier ? "deberta." : "";
  hidden_ = c.hidden_size;
  embedding_size_ = c.embedding_size;
  heads_ = c.num_attention_heads;
  head_size_ = c.hidden_size / c.num_attention_heads;
  intermediate_size_ = c.intermediate_size;
  threads_ = options.threads;
  precision_ = options.precision;
  const auto attention =
      kernels::attention_precision(precision_, kernels::AttentionKind::kDisentangled, head_size_);
  bf16_attention_ = attention.bf16_values;
  bf16_content_scores_ = attention.bf16_scores;
  eps_ = static_cast<float>(c.layer_norm_eps);
  // HF counts c2p / p2c for the scale even when relative_attention is off.
  const bool lists_c2p = has_token(c.pos_att_type, "c2p");
  const bool lists_p2c = has_token(c.pos_att_type, "p2c");
  scale_ = attention_scale(head_size_,
                           c.score_terms >= 0 ? c.score_terms : int(lists_c2p) + int(lists_p2c));
  c2p_ = c.relative_attention && lists_c2p;
  p2c_ = c.relative_attention && lists_p2c;

  info_.has_pooler = false;  // DebertaV2Model has no pooler; the ContextPooler belongs to the head
  info_.parameter_count = store_.parameter_count();

  // Relative positions: max_relative_positions < 1 means max_position_embeddings.
  const int max_rel =
      c.max_relative_positions < 1 ? c.max_position_embeddings : c.max_relative_positions;
  if (c.relative_attention && c.position_buckets == 1)
    unsupported("position_buckets 1 is not supported");
  if (c.relative_attention && c.position_buckets > 1 && max_rel - 1 <= c.position_buckets / 2)
    unsupported("position_buckets needs max_relative_positions above position_buckets / 2 + 1");
  index_ = std::make_unique<RelativeIndex>(c.relative_attention ? c.position_buckets : -1, max_rel,
                                           c.max_position_embeddings);

  load_embeddings(c);
  std::vector<float> rel;
  if (c.relative_attention) {
    const int rows = 2 * index_->att_span();
    const auto table = store_.get(prefix_ + "encoder.rel_embeddings.weight", {rows, hidden_});
    rel.assign(table.data, table.data + static_cast<std::size_t>(rows) * hidden_);
    if (norm_rel_ebd_has_layer_norm(c.norm_rel_ebd)) {
      const auto g = store_.get(prefix_ + "encoder.LayerNorm.weight", {hidden_});
      const auto b = store_.get(prefix_ + "encoder.LayerNorm.bias", {hidden_});
      kernels::layer_norm(rel.data(), rows, hidden_, g.data, b.data, eps_);
    }
  }
  layers_.reserve(static_cast<std::size_t>(c.num_hidden_layers));
  for (int l = 0; l < c.num_hidden_layers; ++l) {
    load_layer(c, l, rel.empty() ? nullptr : rel.data(), read_attention);
    store_.drop_resident_pages();  // this layer's matrices are packed: its file pages can go
  }

  if (c.conv_kernel_size > 0) {
    if (c.conv_kernel_size % 2 == 0)
      unsupported("an even conv_kernel_size changes the sequence length (transformers fails too)");
    if (hidden_ % c.conv_groups != 0)  // conv_groups > 0: deberta_v2_config
      throw Error(ErrorKind::kInvalidModel, "DeBERTa-v2: conv_groups must divide hidden_size");
    const std::string p = prefix_ + "encoder.conv.";
    const auto w =
        store_.get(p + "conv.weight", {hidden_, hidden_ / c.conv_groups, c.conv_kernel_size});
    const auto b = store_.get(p + "conv.bias", {hidden_});
    const auto g = store_.get(p + "LayerNorm.weight", {hidden_});
    const auto beta = store_.get(p + "LayerNorm.bias", {hidden_});
    conv_ = ConvLayer(w.data, b.data, hidden_, c.conv_kernel_size, c.conv_groups,
                      kernels::activation_from_hf(c.conv_act), g.data, beta.data, eps_);
  }
  load_head(c);
  store_.drop_resident_pages();  // every matrix is packed now
}

void Model::load_head(const DebertaV2Config& c) {
  // ContextPooler is Linear(pooler_hidden_size, pooler_hidden_size) applied to a hidden-size
  // vector, and the classifier reads hidden_size: HF only runs with the two equal.
  if (info_.head == HeadKind::kSequenceClassification && c.pooler_hidden_size != hidden_)
    throw Error(ErrorKind::kInvalidModel, "DeBERTa-v2: pooler_hidden_size must equal hidden_size");
  // DebertaV2ForSequenceClassification: ContextPooler (dense, pooler_hidden_act, on the first
  // token), then classifier. DebertaV2Model has no pooler.
  HeadWeights head_weights;
  head_weights.sequence_dense = "pooler.dense";
  head_weights.sequence_activation = kernels::activation_from_hf(c.pooler_hidden_act);
  head_weights.masked_lm = [&] { return masked_lm_head(c); };
  task_heads_ = EncoderHeads(store_, info_, head_weights);
}

MaskedLmHead Model::masked_lm_head(const DebertaV2Config& c) const {
  // Both heads map hidden_size onto the word embeddings' rows: the same size, unless
  // embedding_size differs (the legacy transform then maps onto embedding_size).
  if (embedding_size_ != hidden_)
    unsupported("a masked-LM head with embedding_size other than hidden_size");
  // A DeBERTa-v3 checkpoint ships lm_predictions.lm_head; with legacy (true unless config.json
  // says false) transformers builds cls.predictions instead and leaves it random. Refuse that
  // by name rather than guess.
  if (c.legacy && !store_.contains("cls.predictions.transform.dense.weight") &&
      store_.contains("lm_predictions.lm_head.dense.weight")) {
    unsupported(
        "the checkpoint's masked-LM head is lm_predictions.lm_head, which "
        "transformers reads only with \"legacy\": false in config.json (with legacy it builds a "
        "random cls.predictions head); set it to serve this head");
  }
  const MaskedLmHeadNames names =
      c.legacy
          ? MaskedLmHeadNames{"cls.predictions.transform.dense",
                              "cls.predictions.transform.LayerNorm",
                              "cls.predictions.decoder.weight", "cls.predictions.bias"}
          : MaskedLmHeadNames{"lm_predictions.lm_head.dense", "lm_predictions.lm_head.LayerNorm",
                              nullptr, "lm_predictions.lm_head.bias"};
  return MaskedLmHead(store_, names, kernels::activation_from_hf(c.hidden_act), c.layer_norm_eps,
                      word_embeddings_, c.vocab_size, hidden_);
}

void Model::load_embeddings(const DebertaV2Config& c) {
  const std::string p = prefix_ + "embeddings.";
  word_embeddings_ = store_.get(p + "word_embeddings.weight", {c.vocab_size, embedding_size_}).data;
  if (c.position_biased_input)
    position_embeddings_ =
        store_.get(p + "position_embeddings.weight", {c.max_position_embeddings, embedding_size_})
            .data;
  if (c.type_vocab_size > 0)
    token_type_embeddings_ =
        store_.get(p + "token_type_embeddings.weight", {c.type_vocab_size, embedding_size_}).data;
  if (embedding_size_ != hidden_) {
    const auto w = store_.get(p + "embed_proj.weight", {hidden_, embedding_size_});
    embed_proj_ = kernels::Linear(w.data, nullptr, hidden_, embedding_size_);
  }
  embedding_norm_ = load_layer_norm(store_, p + "LayerNorm", hidden_, c.layer_norm_eps);
}

void Model::load_layer(const DebertaV2Config& c, int index, const float* rel,
                       AttentionReader read_attention) {
  const std::string p = prefix_ + "encoder.layer." + std::to_string(index) + ".";
  const auto h = static_cast<std::size_t>(hidden_);
  const bool relative = rel != nullptr;
  AttentionWeights weights =
      read_attention(c, store_, p + "attention.self.", relative && c2p_, relative && p2c_);
  if (weights.qkv_weight.size() != 3 * h * h || weights.qkv_bias.size() != 3 * h)
    throw Error(ErrorKind::kInternal, "DeBERTa: attention weights of the wrong size");
  Layer layer;
  layer.qkv_bias = std::move(weights.qkv_bias);
  // The Linear packs its own copy, so the stacked rows end with this function.
  layer.qkv = kernels::Linear(weights.qkv_weight.data(), layer.qkv_bias.data(), 3 * hidden_,
                              hidden_, kernels::Activation::kIdentity, 0, precision_);

  if (relative && (c2p_ || p2c_)) {
    const int rows = 2 * index_->att_span();
    const auto project = [&](const float* w, const float* b, std::vector<float>& out) {
      std::vector<float> rows_by_hidden(static_cast<std::size_t>(rows) * h);
      kernels::Linear(w, b, hidden_, hidden_).forward(rel, rows, rows_by_hidden.data());
      // Transposed once here so the attention reads any run of relative rows as a column window.
      out.resize(rows_by_hidden.size());
      for (std::size_t r = 0; r < static_cast<std::size_t>(rows); ++r)
        for (std::size_t c = 0; c < h; ++c) out[c * rows + r] = rows_by_hidden[r * h + c];
    };
    if (c2p_) project(weights.pos_key_weight, weights.pos_key_bias, layer.pos_key_t);
    if (p2c_) project(weights.pos_query_weight, weights.pos_query_bias, layer.pos_query_t);
    if (bf16_attention_) {
      // Packed once as bf16 pairs; the fp32 tables are not read in this precision.
      const auto pack = [&](std::vector<float>& table, std::vector<std::uint32_t>& pairs) {
        if (table.empty()) return;
        pairs.resize(static_cast<std::size_t>(kernels::bf16_pair_rows(hidden_)) * rows);
        kernels::pack_bf16_pairs(table.data(), rows, hidden_, rows, pairs.data(), rows);
        std::vector<float>().swap(table);
      };
      pack(layer.pos_key_t, layer.pos_key_pairs);
      pack(layer.pos_query_t, layer.pos_query_pairs);
    }
  }
  layer.post_attention = PostAttention(store_, p, c, precision_);
  layers_.push_back(std::move(layer));
}

}  // namespace deberta_v2

const ArchitectureFamily kDebertaV2Family = {
    &read_deberta_v2_family_config,
    &load_family_encoder<deberta_v2::Model, &deberta_v2_config>,
};

}  // namespace onepass::model
