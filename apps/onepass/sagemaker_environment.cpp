#include "apps/onepass/sagemaker_environment.h"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "apps/onepass/hf_task.h"
#include "base/error.h"
#include "base/log.h"
#include "model/encoder.h"
#include "runtime/model_config.h"

namespace onepass::app {
namespace {

// A variable's value, nullptr when it is unset or empty.
const char* env(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

bool env_true(const char* name) {
  const char* value = env(name);
  if (!value) return false;
  const std::string v(value);
  return v == "true" || v == "TRUE" || v == "True" || v == "1" || v == "yes";
}

double env_number(const char* name) {
  const char* value = env(name);
  try {
    std::size_t used = 0;
    const double number = std::stod(value, &used);
    if (used != std::string(value).size() || !(number > 0)) throw std::invalid_argument(name);
    return number;
  } catch (...) {
    throw Error(ErrorKind::kInvalidArgument,
                std::string(name) + " must be a positive number (got '" + value + "')");
  }
}

std::vector<std::string> split_models(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const auto comma = list.find(',', start);
    const auto item = list.substr(start, comma == std::string::npos ? list.npos : comma - start);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// A folder that holds a Hugging Face model: config.json next to the weights, or a GLiNER
// model's gliner_config.json.
bool holds_model(const std::filesystem::path& dir) {
  std::error_code ec;
  return std::filesystem::is_regular_file(dir / "config.json", ec) || model::is_gliner_folder(dir);
}

// HF_MODEL_ID (+ HF_MODEL_REVISION) as the inference toolkit reads it, downloaded now.
std::string hf_model_folder(const char* model_id, const ModelResolver& resolve) {
  std::string reference = model_id;
  if (const char* revision = env("HF_MODEL_REVISION")) reference += std::string("@") + revision;
  return resolve(reference).string();
}

// HF_TASK, when set, must be what the default model serves.
void check_default_task(const std::string& dir) {
  const char* task = env("HF_TASK");
  if (!task) return;
  check_hf_task(task, runtime::describe_model_folder("model", dir));
}

}  // namespace

hub::Environment hub_environment() {
  hub::Environment out = hub::Environment::from_process();
  if (!env("HF_TOKEN")) {
    if (const char* token = env("HF_API_TOKEN")) out.token = token;
  }
  return out;
}

std::string hf_task() {
  const char* task = env("HF_TASK");
  return task ? task : "";
}

void apply_sagemaker_environment(ServeSettings& settings) {
  // SageMaker tells the container its port this way. (Unlike the variables below, an empty
  // SAGEMAKER_BIND_TO_PORT is not a port.)
  if (!was_given(settings, &ServeSettings::port)) {
    if (const char* port = std::getenv("SAGEMAKER_BIND_TO_PORT")) {
      try {
        settings.port = std::stoi(port);
      } catch (...) {
        throw Error(ErrorKind::kInvalidArgument, "SAGEMAKER_BIND_TO_PORT is not a port number");
      }
    }
  }
  if (env("SAGEMAKER_MAX_PAYLOAD_IN_MB") &&
      !was_given(settings, &ServeSettings::payload_limit_bytes))
    settings.payload_limit_bytes =
        static_cast<std::size_t>(env_number("SAGEMAKER_MAX_PAYLOAD_IN_MB") * 1024 * 1024);
  if (env("SAGEMAKER_MODEL_SERVER_TIMEOUT") &&
      !was_given(settings, &ServeSettings::http_timeout_seconds))
    settings.http_timeout_seconds = env_number("SAGEMAKER_MODEL_SERVER_TIMEOUT");
  if (const char* workers = env("SAGEMAKER_MODEL_SERVER_WORKERS"))
    log::info("config_ignored", log::Fields()
                                    .add("variable", "SAGEMAKER_MODEL_SERVER_WORKERS")
                                    .add("value", workers)
                                    .add("reason",
                                         "one onepass process batches across all "
                                         "requests; extra workers would only split "
                                         "the batches and multiply the weights"));
  if (const char* range = env("SAGEMAKER_SAFE_PORT_RANGE")) {
    // "LOW-HIGH": the ports SageMaker leaves to the container; ours must be inside.
    int low = 0, high = 0;
    char tail = 0;
    if (std::sscanf(range, "%d-%d%c", &low, &high, &tail) != 2 || low > high)
      throw Error(ErrorKind::kInvalidArgument,
                  std::string("SAGEMAKER_SAFE_PORT_RANGE must be LOW-HIGH (got '") + range + "')");
    if (settings.port != 0 && (settings.port < low || settings.port > high))
      throw Error(ErrorKind::kInvalidArgument, "port " + std::to_string(settings.port) +
                                                   " is outside SAGEMAKER_SAFE_PORT_RANGE " +
                                                   range);
  }
}

void choose_default_models(ServeSettings& settings, const ModelResolver& resolve) {
  if (!settings.models.empty()) return;
  // Read here rather than by CLI11: a list, and only when no --model is given.
  const std::string models_variable = environment_variable(flag_of(&ServeSettings::models));
  if (const char* list = env(models_variable.c_str())) {
    settings.models = split_models(list);
    return;
  }
  if (env_true("SAGEMAKER_MULTI_MODEL")) {
    // Multi-model endpoint: start empty; SageMaker loads each model from /opt/ml/models/...
    // through POST /models.
    settings.enable_model_management = true;
    return;
  }
  if (holds_model(settings.sagemaker_model_dir)) {
    check_default_task(settings.sagemaker_model_dir);
    settings.models.push_back("model=" + settings.sagemaker_model_dir);
    return;
  }
  if (const char* model_id = env("HF_MODEL_ID")) {
    const std::string dir = hf_model_folder(model_id, resolve);
    check_default_task(dir);
    settings.models.push_back("model=" + dir);
    return;
  }
  throw Error(ErrorKind::kInvalidArgument,
              "give at least one --model [NAME=]DIR|ORG/NAME[@REV] (or ONEPASS_MODEL), put a "
              "model in " +
                  settings.sagemaker_model_dir +
                  ", set HF_MODEL_ID to a Hub id, or set SAGEMAKER_MULTI_MODEL=true");
}

}  // namespace onepass::app
