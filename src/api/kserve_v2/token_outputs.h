// KServe v2 outputs of a token classifier (internal to the KServe dialect): every token's logits
// as one FP32 tensor, padded to the batch's longest input as KServe's Hugging Face server pads
// its batch, with the mask that tells real tokens from padding, the tokens' offsets (KServe's
// return_offsets_mapping output) and, for text inputs, the pipeline's entities.
#pragma once

#include <string>
#include <vector>

#include "api/common/json_request.h"
#include "api/kserve_v2/tensors.h"

namespace onepass::api::kserve_v2 {

// Output names a token classifier offers; the last two need text inputs.
inline constexpr const char* kTokenLogitsOutputs[] = {"logits", "attention_mask", "offset_mapping",
                                                      "entities"};

// Output names a question-answering model offers.
inline constexpr const char* kAnswerLogitsOutputs[] = {"start_logits", "end_logits",
                                                       "attention_mask"};

// `request` (its items built from the inputs) and how its result reads back as the `requested`
// outputs (empty: every output the inputs allow). `parameters` is the request's "parameters"
// object: aggregation_strategy and ignore_labels for "entities". ApiError kValidation for an
// output the inputs cannot give, a pair input, or "stride" (windows are not a tensor).
PreparedInfer prepare_token_logits(const runtime::ModelDescription& model,
                                   runtime::InferenceRequest request,
                                   std::vector<std::string> requested, const Json& parameters);

// The same for a question-answering model, as an exported *ForQuestionAnswering graph answers
// (Triton's ONNX QA models): start_logits and end_logits [n, tokens], padded with zeros, and the
// attention mask; a text input is the question, its text_pair the context. Picking the answer
// span is the toolkit's pipeline (/invocations).
PreparedInfer prepare_answer_logits(runtime::InferenceRequest request,
                                    std::vector<std::string> requested);

}  // namespace onepass::api::kserve_v2
