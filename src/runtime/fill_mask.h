// The fill-mask pipeline (transformers' FillMaskPipeline, v4.47.1) around the engine's
// masked-LM head: which tokens of an input are masks, which vocabulary entries the request
// scores, and the answer built from the head's logits at the masks (softmax over the
// vocabulary, the top_k, each decoded alone and in the input's place).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "runtime/loaded_model.h"
#include "runtime/service.h"

namespace onepass::runtime {

// A special token of the tokenizer: its id (-1 when the tokenizer has none) and spelling.
struct SpecialToken {
  std::int32_t id = -1;
  std::string text;
};

// The tokenizer's mask and pad tokens for a model folder: the token the folder's files name,
// else the usual spellings "[MASK]" / "<mask>" ("[PAD]" / "<pad>").
SpecialToken find_mask_token(const tokenizer::Tokenizer& tokenizer,
                             const tokenizer::TokenizerSettings& settings);
SpecialToken find_pad_token(const tokenizer::Tokenizer& tokenizer,
                            const tokenizer::TokenizerSettings& settings);

// The positions of the mask tokens in `ids`. Throws onepass::Error(kInvalidInput) when there is
// none (naming the mask token), or when the model's tokenizer has no mask token.
std::vector<std::int32_t> find_mask_positions(const LoadedModel& model,
                                              std::span<const std::int32_t> ids);

// get_target_ids: each target as a vocabulary token, else the first token of its tokenization
// (a target that tokenizes to nothing is left out); duplicates once, in id order. Throws
// onepass::Error(kInvalidInput) when no target is left.
std::vector<std::int32_t> resolve_targets(const tokenizer::Tokenizer& tokenizer,
                                          const std::vector<std::string>& targets);

// The answer for one input: `logits` holds [positions.size(), vocab] rows, one per mask.
// `targets` empty scores the whole vocabulary.
std::vector<std::vector<MaskPrediction>> fill_mask_predictions(
    const LoadedModel& model, std::span<const std::int32_t> input_ids,
    std::span<const std::int32_t> positions, std::span<const std::int32_t> targets,
    std::size_t top_k, const float* logits);

}  // namespace onepass::runtime
