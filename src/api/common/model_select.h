// Which model a request is for (docs/api.md "Choosing the model"). Client-given names are checked
// as strings only and looked up in the service's registry; nothing here touches the filesystem,
// so '../', '%2e%2e', NUL or a 4 KB name can only ever be "not found".
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "http/message.h"
#include "runtime/service.h"

namespace onepass::api {

// Throws ApiError kNotFound when `name` cannot be a registered model name
// (runtime::is_valid_model_name: the registry's own rule).
void validate_model_name(std::string_view name);

// X-Amzn-SageMaker-Target-Model: "sub/dir/nli.tar.gz" selects "nli". Path segments of "." or
// "..", NUL and percent signs anywhere are refused before the base name is taken.
std::string sagemaker_target_name(std::string_view header_value);

// Decodes %XX escapes of one path segment; nullopt for a malformed escape.
std::optional<std::string> percent_decode(std::string_view segment);

// The model a request names (empty: the only one). Throws ApiError kNotFound. With
// `fallback_to_single`, any name that is not a registered one, valid or not (a Hub id with '/'),
// selects the only registered model (OpenAI clients always send some "model").
runtime::ModelDescription select_model(const runtime::InferenceService& service,
                                       std::string_view name, bool fallback_to_single = false);

// select_model without its refusal of a model that failed to load (503 with the load error,
// which every other route answers): for the routes that report a model's state.
runtime::ModelDescription select_model_in_any_state(const runtime::InferenceService& service,
                                                    std::string_view name);

// The model a body's "model" field names (Cohere, vLLM): select_model with the fallback, and a
// 404 that says to fill "model" when several are served and none is named.
runtime::ModelDescription select_model_from_body(const runtime::InferenceService& service,
                                                 std::string_view name);

// The model named by X-Amzn-SageMaker-Target-Model, or the only one.
runtime::ModelDescription select_model_from_header(const runtime::InferenceService& service,
                                                   const http::Request& request);

}  // namespace onepass::api
