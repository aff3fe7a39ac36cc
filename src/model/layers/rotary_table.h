// Rotary position embeddings as transformers' ModernBertRotaryEmbedding and apply_rotary_pos_emb
// compute them (v4.48, models/modernbert/modeling_modernbert.py, the padded attention paths), and
// the remote code of NomicBERT (NomicBertRotaryEmbedding, apply_rotary_emb, not interleaved) and
// GTE (RotaryEmbedding, NTKScalingRotaryEmbedding, apply_rotary_pos_emb) the same:
// inv_freq[i] = 1 / theta^(2i / head_dim) in float32 (divided by a constant with GTE's NTK
// scaling), angle = position · inv_freq[i] in float32,
// and each head's query and key rotated pairwise between its two halves (rotate_half):
//   x[i]        <- x[i] · cos - x[i + d/2] · sin
//   x[i + d/2]  <- x[i + d/2] · cos + x[i] · sin
// with a token's position counted from 0 within its own sequence.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace onepass::model {

class RotaryTable {
 public:
  RotaryTable() = default;
  // cos and sin of every angle for positions [0, max_positions), built once at load. Every
  // inv_freq is divided by frequency_divisor (float32, as torch divides a float32 tensor by a
  // Python float): GTE's fixed NTK scaling divides by factor^(2 / head_dim).
  RotaryTable(double theta, std::int64_t head_dim, std::int64_t max_positions,
              double frequency_divisor = 1.0);

  // Rotates the queries (columns [0, heads · head_dim)) and keys (the next heads · head_dim
  // columns) of every row of qkv [tokens, ld] in place; sequence s owns rows offsets[s] to
  // offsets[s + 1]. Runs on the calling thread's OpenMP team.
  void rotate_queries_and_keys(float* qkv, std::int64_t ld, std::int64_t heads,
                               const std::size_t* offsets, std::size_t num_seqs) const;

 private:
  std::int64_t half_ = 0;   // head_dim / 2
  std::vector<float> cos_;  // [max_positions, half]
  std::vector<float> sin_;
};

}  // namespace onepass::model
