// Turning a forward pass into answers, the one home of each rule, shared by `onepass run`, the
// runtime and every API dialect (built into onepass_runtime_service, so the fuzz build reaches
// it too): softmax and sigmoid, class probabilities, the arg-max label and the LABEL_i name of a
// label config.json does not name, pooled sentence embeddings, `dimensions`, L2
// normalisation and cosine similarity. Pure functions on float spans.
#pragma once

#include <cmath>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/encoder.h"

namespace onepass::model::heads {

// How a base model's token states become one sentence embedding: its first token's, or the
// mean over its tokens. The one enum of it: the runtime names it runtime::Pooling.
enum class Pooling { kCls, kMean };
// "cls", "mean": the spelling of --pooling, `onepass info` and TEI's /info.
const char* pooling_name(Pooling pooling);
// The inverse of pooling_name; nullopt for any other spelling.
std::optional<Pooling> pooling_from_name(std::string_view name);

// The element-wise torch.nn activations sentence-transformers names by class path: what its
// CrossEncoder applies to a reranker's logit (config.json's activation_fn /
// sbert_ce_default_activation_function; sigmoid without one, as the library does for one label;
// cross-encoder/ms-marco-MiniLM-L-6-v2 names identity, converted LLM rerankers tanh) and what a
// Dense module applies to its output (dense_module.h: tanh or identity).
enum class Activation { kSigmoid, kIdentity, kTanh };
// Inline: the engine's Dense module (onepass_model) runs it without this file's library.
inline float activate(float x, Activation activation) {
  switch (activation) {
    case Activation::kIdentity:
      return x;
    case Activation::kTanh:
      return std::tanh(x);
    case Activation::kSigmoid:
      break;
  }
  return 1.0f / (1.0f + std::exp(-x));
}
const char* activation_name(Activation activation);  // "sigmoid", "identity", "tanh"
// torch.nn.modules.activation.Sigmoid / .Tanh, torch.nn.modules.linear.Identity; nullopt for
// any other class path.
std::optional<Activation> activation_from_torch_class(std::string_view class_path);

// Max-shifted softmax in float32, as the text-classification pipeline and TEI compute it.
std::vector<float> softmax(std::span<const float> logits);
float sigmoid(float logit);

// Probabilities from one row of logits: softmax over the row, or an element-wise sigmoid when
// `multi_label` (problem_type multi_label_classification) or when the row has one logit
// (rerankers / scorers).
void probabilities(std::span<const float> logits, bool multi_label, std::span<float> probs);

// The score functions of the text-classification pipeline (function_to_apply) and TEI.
enum class ScoreFunction { kSoftmax, kSigmoid, kNone };
std::vector<float> apply_score_function(ScoreFunction function, std::span<const float> logits);

struct RankedLabel {
  int index = 0;
  float score = 0;
};

// Indices sorted by score, highest first; ties keep the higher index first, as numpy's
// reversed argsort does in the pipelines.
std::vector<RankedLabel> rank(std::span<const float> scores);

// Index of the largest logit (the first one on ties, as torch.argmax).
std::size_t argmax(std::span<const float> values);

// id2label[index], or "LABEL_<index>" (weights::default_label_name, transformers' own name)
// when id2label has no name for it.
std::string label_name(const std::vector<std::string>& id2label, std::size_t index);

// label_name of the arg-max logit.
std::string label_for(std::span<const float> logits, const std::vector<std::string>& id2label);

// Sequence `index` of a base-model forward, pooled into out[hidden]: its first token (cls) or
// the mean over its tokens (every token of a ragged batch is real; summed in double).
void pool(const ForwardOutput& forward, std::size_t hidden, std::size_t index, Pooling pooling,
          std::span<float> out);

// v / max(||v||₂, 1e-12), in place (torch.nn.functional.normalize).
void l2_normalize(std::span<float> v);

// An embedding as TEI's and OpenAI's `dimensions` and `normalize` ask for it: the first
// `dimensions` values (0: all of them), then L2-normalised when `normalize` (shortened first,
// so a shortened vector still has unit length).
void shorten_and_normalize(std::vector<float>& v, std::size_t dimensions, bool normalize);

// Cosine similarity of two vectors of the same size: each divided by max(||v||₂, 1e-12), then
// their dot product (sentence-transformers' cos_sim; TEI's /similarity).
float cosine_similarity(std::span<const float> a, std::span<const float> b);

}  // namespace onepass::model::heads
