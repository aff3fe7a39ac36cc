// The fill-mask pipeline at /invocations and the Inference API's POST /: what the Hugging Face
// inference toolkit answers for a *ForMaskedLM model (transformers' FillMaskPipeline).
#pragma once

#include "api/common/call.h"
#include "api/sagemaker/toolkit_payload.h"

namespace onepass::api::sagemaker {

// {"inputs": text or [text, ...], "parameters": {"top_k", "targets"}}. Per text: for one mask
// token [{"score", "token", "token_str", "sequence"}, ...] most likely first, for several a list
// of those per mask; a list of texts gets a list of answers (a list of one, its one answer, as
// the pipeline unwraps it). A text without the mask token is refused (400) naming it.
void fill_mask(Call& call, const runtime::ModelDescription& model, const ToolkitPayload& payload);

}  // namespace onepass::api::sagemaker
