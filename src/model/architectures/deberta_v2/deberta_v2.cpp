// Forward half of the DeBERTa-v2 encoder (transformers v4.47.1 DebertaV2Model,
// DebertaV2ForSequenceClassification and DebertaV2ForTokenClassification), padding-free:
//   embeddings: word (+ position if position_biased_input) (+ token type if type_vocab_size > 0),
//               embed_proj when embedding_size != hidden_size, LayerNorm
//   per layer:  fused QKV -> disentangled attention per (sequence, head) -> dense + residual ->
//               LayerNorm -> intermediate (act) -> dense + residual -> LayerNorm;
//               after layer 0 the optional ConvLayer
//   head:       ContextPooler (first token, dense, pooler_hidden_act) -> classifier, the
//               token classifier on every token, or DebertaV2ForMaskedLM's head (v4.48, either
//               layout: DebertaV2Config::legacy) through MaskedLmHead.
// HF's attention mask (and the "* mask" after the embeddings and the conv) is all ones for the
// real tokens this engine packs, so it disappears; dropout is the identity at inference.
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "kernels/elementwise.h"
#include "kernels/small_gemm_bf16.h"
#include "model/architectures/deberta_v2/deberta_v2_attention.h"
#include "model/architectures/deberta_v2/deberta_v2_model.h"
#include "model/batch_check.h"
#include "model/layers/encoder_heads.h"
#include "model/layers/thread_scope.h"

namespace onepass::model::deberta_v2 {
namespace {

void gemm_nt(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
             int ldc) {
  kernels::gemm(false, true, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
}
void gemm_nn(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
             int ldc) {
  kernels::gemm(false, false, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
}
// Called inside the (sequence, head) parallel loop: one row at a time stays on this thread.
void softmax(int m, int n, float* x, int ldx) {
  for (int r = 0; r < m; ++r) kernels::softmax_row(x + static_cast<std::size_t>(r) * ldx, n);
}
constexpr Gemm kGemm{gemm_nt, gemm_nn, softmax};

// Reduced-precision attention: bf16 products, fp32 accumulation and softmax; for int8 all but
// Q·Kᵀ (see bf16_content_scores_).
void gemm_nt_bf16(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                  int ldc) {
  kernels::gemm_bf16(true, m, n, k, 1.0f, a, lda, b, ldb, c, ldc);
}
void gemm_nn_bf16(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                  int ldc) {
  kernels::gemm_bf16(false, m, n, k, 1.0f, a, lda, b, ldb, c, ldc);
}
void gemm_nn_pairs(int m, int n, int k, const float* a, int lda, const std::uint32_t* bp, int ldp,
                   float* c, int ldc) {
  kernels::small_gemm_bf16(m, n, k, 1.0f, a, lda, bp, ldp, c, ldc);
}
constexpr Gemm kGemmBf16{gemm_nt_bf16, gemm_nn_bf16, softmax, gemm_nn_pairs};
constexpr Gemm kGemmBf16Fp32Scores{gemm_nt, gemm_nn_bf16, softmax, gemm_nn_pairs};

}  // namespace

void Model::embed(std::span<const SequenceInput> batch, const std::size_t* offsets, float* x,
                  float* scratch) const {
  const auto e = static_cast<std::size_t>(embedding_size_);
  float* rows = embedding_size_ == hidden_ ? x : scratch;  // [tokens, embedding_size]
  for (std::size_t s = 0; s < batch.size(); ++s) {
    const auto& seq = batch[s];
    const auto n = static_cast<std::int64_t>(seq.input_ids.size());
    float* dst = rows + offsets[s] * e;
    kernels::embedding_gather(word_embeddings_, embedding_size_, seq.input_ids.data(), n, dst,
                              false);
    if (position_embeddings_ != nullptr) {
      // position_ids = arange(L): rows 0..L-1 of the table, in order.
      const std::size_t count = static_cast<std::size_t>(n) * e;
      for (std::size_t t = 0; t < count; ++t) dst[t] += position_embeddings_[t];
    }
    if (token_type_embeddings_ != nullptr) {
      if (!seq.token_type_ids.empty()) {
        kernels::embedding_gather(token_type_embeddings_, embedding_size_,
                                  seq.token_type_ids.data(), n, dst, true);
      } else {
        for (std::int64_t i = 0; i < n; ++i)
          for (std::size_t c = 0; c < e; ++c) dst[i * e + c] += token_type_embeddings_[c];
      }
    }
  }
  const auto tokens = static_cast<std::int64_t>(offsets[batch.size()]);
  if (embedding_size_ != hidden_) embed_proj_.forward(rows, tokens, x);
  kernels::layer_norm(x, tokens, hidden_, embedding_norm_.gamma, embedding_norm_.beta,
                      embedding_norm_.eps);
}

void Model::attention(const Layer& layer, const float* qkv, float* ctx, const std::size_t* offsets,
                      std::size_t num_seqs, float* scratch, std::size_t scratch_per_thread) const {
  const int ld = 3 * hidden_;
  const auto pairs = static_cast<std::int64_t>(num_seqs) * heads_;
  const float* pos_key_t = layer.pos_key_t.empty() ? nullptr : layer.pos_key_t.data();
  const float* pos_query_t = layer.pos_query_t.empty() ? nullptr : layer.pos_query_t.data();
  const int relative_rows = 2 * index_->att_span();
  const Gemm& gemm = !bf16_attention_       ? kGemm
                     : bf16_content_scores_ ? kGemmBf16
                                            : kGemmBf16Fp32Scores;
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t p = 0; p < pairs; ++p) {
    const auto s = static_cast<std::size_t>(p / heads_);
    const int h = static_cast<int>(p % heads_);
    const std::size_t begin = offsets[s];
    const std::size_t column = static_cast<std::size_t>(h) * head_size_;
    HeadView view;
    view.seq_len = static_cast<int>(offsets[s + 1] - begin);
    view.head_size = head_size_;
    view.q = qkv + begin * ld + column;
    view.k = view.q + hidden_;
    view.v = view.q + 2 * hidden_;
    view.ldq = view.ldk = view.ldv = ld;
    // Head h's dimensions are rows column .. column + head_size of the transposed tables.
    if (pos_key_t != nullptr) {
      view.pos_key_t = pos_key_t + column * relative_rows;
      view.ld_pos_key_t = relative_rows;
    }
    if (pos_query_t != nullptr) {
      view.pos_query_t = pos_query_t + column * relative_rows;
      view.ld_pos_query_t = relative_rows;
    }
    if (!layer.pos_key_pairs.empty()) {
      view.pos_key_pairs = layer.pos_key_pairs.data() + column / 2 * relative_rows;
      view.ld_pos_key_pairs = relative_rows;
    }
    if (!layer.pos_query_pairs.empty()) {
      view.pos_query_pairs = layer.pos_query_pairs.data() + column / 2 * relative_rows;
      view.ld_pos_query_pairs = relative_rows;
    }
    view.out = ctx + begin * hidden_ + column;
    view.ldo = hidden_;
    float* own = scratch + static_cast<std::size_t>(omp_get_thread_num()) * scratch_per_thread;
    disentangled_attention_head(view, *index_, scale_, gemm, own);
  }
}

void Model::forward(std::span<const SequenceInput> batch, ForwardOutput& out) const {
  check_batch(batch, info_);
  const std::size_t num_seqs = batch.size();
  out.token_offsets.resize(num_seqs + 1);
  out.token_offsets[0] = 0;
  std::size_t longest = 0;
  for (std::size_t s = 0; s < num_seqs; ++s) {
    out.token_offsets[s + 1] = out.token_offsets[s] + batch[s].input_ids.size();
    longest = std::max(longest, batch[s].input_ids.size());
  }
  out.logits.clear();
  out.hidden_states.clear();
  out.pooler_output.clear();
  out.position_logits.clear();
  if (num_seqs == 0) return;

  const ThreadScope thread_scope(threads_);
  auto lease = arenas_.acquire();
  tensor::ScratchArena& arena = *lease;
  const std::size_t* offsets = out.token_offsets.data();
  const std::size_t tokens = offsets[num_seqs];
  const auto rows = static_cast<std::int64_t>(tokens);
  const auto h = static_cast<std::size_t>(hidden_);

  float* x = arena.alloc(tokens * h);
  float* embed_scratch = embedding_size_ != hidden_
                             ? arena.alloc(tokens * static_cast<std::size_t>(embedding_size_))
                             : nullptr;
  embed(batch, offsets, x, embed_scratch);
  float* embedding_output = nullptr;  // the ConvLayer reads the encoder's input after layer 0
  if (conv_.enabled()) {
    embedding_output = arena.alloc(tokens * h);
    std::memcpy(embedding_output, x, tokens * h * sizeof(float));
  }

  float* qkv = arena.alloc(tokens * 3 * h);
  float* ctx = arena.alloc(tokens * h);
  float* inter = arena.alloc(tokens * static_cast<std::size_t>(intermediate_size_));
  const std::size_t per_thread = attention_scratch_floats(static_cast<int>(longest), *index_);
  const auto threads = static_cast<std::size_t>(std::max(1, omp_get_max_threads()));
  float* attention_scratch = arena.alloc(threads * per_thread);
  float* conv_scratch = conv_.enabled() ? arena.alloc(conv_.scratch_floats(tokens)) : nullptr;

  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const Layer& layer = layers_[l];
    layer.qkv.forward(x, rows, qkv);
    attention(layer, qkv, ctx, offsets, num_seqs, attention_scratch, per_thread);
    // DebertaV2SelfOutput, DebertaV2Intermediate, DebertaV2Output: BERT's block, in place.
    layer.post_attention.forward(ctx, x, rows, inter);
    if (l == 0 && conv_.enabled())
      conv_.apply(embedding_output, x, offsets, num_seqs, conv_scratch);
  }

  task_heads_.forward(x, offsets, batch, arena, out);
}

}  // namespace onepass::model::deberta_v2
