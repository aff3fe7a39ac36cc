// Token classification (NER, PII) in the Hugging Face pipeline's answer shape, shared by the
// routes that serve it (/invocations, POST /, /predict_tokens, KServe v2): the request's
// parameters, the texts as request items (whole, or as overlapping windows with `stride`), and
// each text's entities as JSON (model/heads/token_classification.h does the grouping).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/common/json_request.h"
#include "api/common/json_writer.h"
#include "model/heads/token_classification.h"
#include "runtime/service.h"

namespace onepass::api {

struct TokenClassificationParameters {
  model::heads::Aggregation aggregation = model::heads::Aggregation::kNone;
  std::vector<std::string> ignore_labels{"O"};  // the pipeline's default
  // Tokens shared by consecutive windows of a text longer than the model's limit; nullopt: no
  // windows (the text is truncated or refused as any other input).
  std::optional<std::size_t> stride;
};

// "aggregation_strategy" (none|simple|first|average|max), "ignore_labels" (list of strings) and
// "stride" (a non-negative integer; refused with `none`, as the pipeline refuses it). ApiError
// kValidation naming the field for anything else.
TokenClassificationParameters parse_token_classification_parameters(const Json& parameters);

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
// split into windows; ApiError kValidation when the stride leaves no room for new tokens.
// --max-client-batch-size counts items (windows), so one long text cannot take the server.
std::vector<TokenClassificationText> add_token_classification_items(
    runtime::InferenceService& service, const runtime::ModelDescription& model,
    std::vector<std::string> texts, const TokenClassificationParameters& params, std::size_t limit,
    std::size_t max_client_batch_size, runtime::InferenceRequest& request);

// One text's entities from its items of a kTokenLogits result: each window's entities with
// ignore_labels applied, then, for more than one window, merged on the overlap as the pipeline
// merges them.
std::vector<model::heads::Entity> entities_of(const TokenClassificationText& text,
                                              const runtime::InferenceResult& result,
                                              const runtime::ModelDescription& model,
                                              const TokenClassificationParameters& params);

// [{"entity", "score", "index", "word", "start", "end"}, ...] for `none`, else
// [{"entity_group", "score", "word", "start", "end"}, ...].
void write_entities(JsonWriter& json, const std::vector<model::heads::Entity>& entities);

}  // namespace onepass::api
