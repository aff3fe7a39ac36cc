// Open-label entity extraction (GLiNER) in JSON, shared by the routes that serve it (POST
// /extract, /invocations for a GLiNER model): the request read into runtime::ExtractOptions and
// texts, each text's entities written as GLiNER's predict_entities returns them. The task's own
// logic is below the dialects (runtime/extract.h).
#pragma once

#include <string>
#include <vector>

#include "api/common/call.h"
#include "api/common/json_request.h"
#include "runtime/extract.h"

namespace onepass::api {

struct ExtractRequest {
  std::vector<std::string> texts;
  bool is_list = false;  // the answer is a list, one {"entities"} per text
  runtime::ExtractOptions options;
  // "long_input": "chunk": each text's windows (runtime::extract_windows); empty: each text is
  // read as predict_entities reads it (its first max_len words).
  std::vector<std::vector<runtime::ExtractWindow>> windows;
};

// The texts from "text" (gliner.serve's field: a string, or a list), "texts" or "inputs" (the
// toolkit's), and "labels", "threshold", "flat_ner", "multi_label" from the body, else from
// `parameters` (the toolkit's place for them; may be null). ApiError kValidation naming the
// field for a missing or mistyped one, kTooManyInputs past --max-client-batch-size (which counts
// windows when chunking); the labels and threshold then pass runtime::check_extract_options (422
// naming the field). "long_input" ("chunk" or "reject") and "stride" (words) come from the same
// places; the server's --long-input does not apply (GLiNER's own reading is the default).
ExtractRequest parse_extract_request(const Json& body, const Json* parameters,
                                     const runtime::ModelDescription& model,
                                     const ApiOptions& options);

// Submits the request's texts to `model` and answers {"entities": [{"start", "end", "text",
// "label", "score"}, ...]} for one text, a list of those for a list.
void reply_extract(Call& call, const runtime::ModelDescription& model, ExtractRequest request);

}  // namespace onepass::api
