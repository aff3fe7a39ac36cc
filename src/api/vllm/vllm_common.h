// What vLLM's /classify and /score share: the "model" field, truncate_prompt_tokens, the
// activation switches, and the envelope of the answer (id, object, created, model, usage).
#pragma once

#include <cstddef>
#include <string>

#include "api/common/call.h"
#include "api/common/json_writer.h"

namespace onepass::api::vllm {

// The object body's "model" (any name maps to the only model when one is served, as on the
// OpenAI route; vLLM clients always send one). Sets the reply's model.
runtime::ModelDescription select_vllm_model(Call& call, const Json& body);

// "truncate_prompt_tokens": null (no truncation: over-long is 400), -1 (the model's limit) or
// 1..limit tokens; above the limit is 400 as in vLLM.
void parse_truncate_prompt_tokens(const Json& body, const runtime::ModelDescription& model,
                                  runtime::InferenceRequest& request);

// "use_activation" (default true), or its deprecated spellings "activation" and "softmax".
bool use_activation(const Json& body);

// A list of strings or one string (as a list of one); `field` names it in errors. Empty strings
// are served, as vLLM tokenizes them.
std::vector<std::string> string_or_list(const Json& body, const char* field);

// Writes "id","object","created","model" of a response object already begun.
void write_envelope(JsonWriter& json, const std::string& id_prefix, const std::string& request_id,
                    const std::string& model);
// Writes "usage" (vLLM's UsageInfo: prompt tokens, no completion).
void write_usage(JsonWriter& json, std::size_t tokens);

}  // namespace onepass::api::vllm
