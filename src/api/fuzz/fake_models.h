// The models a FakeService (fake_service.h) can host, described from one table (fake_models.cpp)
// rather than by code per model: a kind names a task and its head's labels, and FakeLimits gives
// the sizes all of them share.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "runtime/service.h"

namespace onepass::api::fuzzing {

// The sizes every hosted model shares. The defaults are the API tests' (they compute the
// expected answers from FakeService::kHidden); the fuzz harness sets small ones so that the
// fuzzer reaches each limit with short inputs.
struct FakeLimits {
  static constexpr int kDefaultHidden = 4;
  int hidden_size = kDefaultHidden;
  int max_tokens = 64;              // max_input_length, special tokens included
  std::size_t max_input_bytes = 0;  // per text; 0: no byte cap (runtime/input_limits.h)
  int vocab_size = 1000;            // token ids are below it; a SPLADE vector has this width
};

// The kinds, each hosted under its own name unless load_model names it otherwise:
//   "nli"    a classifier with contradiction / entailment / neutral (zero-shot works);
//   "rerank" a one-label cross-encoder;
//   "embed"  a mean-pooling embedder with the prompts "query" and "passage";
//   "ner"    a token classifier with B-/I- labels;
//   "splade" a masked-LM (sparse embeddings, fill-mask);
//   "qa"     an extractive question answerer.
// Throws std::invalid_argument for any other kind: a harness or test asked for a model the
// table lacks.
runtime::ModelDescription describe_fake_model(std::string_view kind, std::string name,
                                              const FakeLimits& limits);

}  // namespace onepass::api::fuzzing
