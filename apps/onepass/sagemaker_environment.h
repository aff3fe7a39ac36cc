// The SageMaker and Hugging Face inference-container contract of `onepass serve` (docs/deploy.md):
// the environment those platforms set, turned into serve settings where the operator's own
// flags or ONEPASS_* variables did not say otherwise.
//
// Started as `IMAGE serve` with no --model (nor ONEPASS_MODEL), the server serves the
// --sagemaker-model-dir folder (/opt/ml/model) when it holds a model, else HF_MODEL_ID
// (+ HF_MODEL_REVISION, HF_TOKEN or HF_API_TOKEN) from the Hub as the Hugging Face inference
// toolkit does, HF_TASK checked against the model's task; or it starts empty with the
// multi-model routes when SAGEMAKER_MULTI_MODEL=true. SAGEMAKER_BIND_TO_PORT,
// SAGEMAKER_SAFE_PORT_RANGE, SAGEMAKER_MAX_PAYLOAD_IN_MB and SAGEMAKER_MODEL_SERVER_TIMEOUT set
// what their names say; SAGEMAKER_MODEL_SERVER_WORKERS is accepted and ignored (one process
// batches every request).
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include "apps/onepass/serve_settings.h"
#include "hub/resolve.h"

namespace onepass::app {

// How a Hub reference ("org/name@revision") becomes a local folder (hub::resolve_model, with the
// server's progress reporting).
using ModelResolver = std::function<std::filesystem::path(const std::string&)>;

// The Hub as `serve` reaches it: the process's HF_* variables, and HF_API_TOKEN (the inference
// toolkit's name) when HF_TOKEN is not set.
hub::Environment hub_environment();

// SAGEMAKER_BIND_TO_PORT, SAGEMAKER_MAX_PAYLOAD_IN_MB and SAGEMAKER_MODEL_SERVER_TIMEOUT where
// --port, --payload-limit and --http-timeout (or their ONEPASS_* variables) were not given;
// then SAGEMAKER_SAFE_PORT_RANGE checked against the port, and SAGEMAKER_MODEL_SERVER_WORKERS
// logged as ignored. Throws onepass::Error (kInvalidArgument) for a malformed value.
void apply_sagemaker_environment(ServeSettings& settings);

// With no --model: ONEPASS_MODEL (a comma-separated list), else the SageMaker defaults in the
// order SageMaker's toolkits try them (above). A Hub id is downloaded now, through `resolve`,
// so that a wrong id, revision, token or HF_TASK stops the container with exit 2 and a message
// naming the problem. Throws onepass::Error when none of them names a model.
void choose_default_models(ServeSettings& settings, const ModelResolver& resolve);

// HF_TASK: the toolkit's task the API answers /invocations in (api::ApiOptions); "" when unset.
std::string hf_task();

}  // namespace onepass::app
