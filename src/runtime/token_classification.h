// Token classification (NER, PII) below the dialects: the texts added to a request (whole, or as
// overlapping windows with a stride), and each text's entities from the per-token logits,
// windows merged on their overlap as the Hugging Face pipeline merges them
// (model/heads/token_classification.h does the grouping). The dialects read and write the
// pipeline's JSON (api/common/token_classification.h).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "model/heads/token_classification.h"
#include "runtime/service.h"

namespace onepass::runtime {

struct TokenClassificationOptions {
  model::heads::Aggregation aggregation = model::heads::Aggregation::kNone;
  std::vector<std::string> ignore_labels{"O"};  // the pipeline's default
  // Tokens shared by consecutive windows of a text longer than the model's limit; nullopt: no
  // windows (the text is truncated or refused as any other input).
  std::optional<std::size_t> stride;
};

// One text of a token-classification request and the request items that carry it.
struct TokenClassificationText {
  std::string text;
  std::size_t first_item = 0;
  // Empty: one text item, tokenized by the runtime. Otherwise the text's windows, in order, each
  // a pre-tokenized item: the tokenizer's overflow with `stride` (tokenizers' truncate): the
  // leading special tokens, content tokens [k * (room - stride), + room), the trailing special
  // tokens, where room is the token limit less the special tokens.
  std::vector<tokenizer::Encoding> windows;
};

// Appends every text's items to `request` (output kTokenLogits). With a stride, a text longer
// than `limit` tokens (special tokens included) is tokenized here, on the caller's thread, and
// split into windows; FieldError kInvalid ("stride") when the stride leaves no room for new
// tokens. `max_client_batch_size` counts items (windows), so one long text cannot take the
// server: FieldError kTooManyInputs past it.
std::vector<TokenClassificationText> add_token_classification_items(
    InferenceService& service, const ModelDescription& model, std::vector<std::string> texts,
    const TokenClassificationOptions& options, std::size_t limit, std::size_t max_client_batch_size,
    InferenceRequest& request);

// One text's entities from its items of a kTokenLogits result: each window's entities with
// ignore_labels applied, then, for more than one window, merged on the overlap as the pipeline
// merges them.
std::vector<model::heads::Entity> entities_of(const TokenClassificationText& text,
                                              const InferenceResult& result,
                                              const ModelDescription& model,
                                              const TokenClassificationOptions& options);

}  // namespace onepass::runtime
