// `onepass serve`'s settings: the struct they are parsed into, whose member initializers are
// their defaults (taken from runtime/serve_defaults.h and http/server.h where the runtime or the
// server has the same default), and the one table (serve_settings.cpp) that gives each its flag,
// its help and, derived from the flag, its environment variable (--max-batch-tokens:
// ONEPASS_MAX_BATCH_TOKENS). A new setting is one member here and one row there.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "http/server.h"
#include "runtime/serve_defaults.h"

namespace onepass::app {

struct ServeSettings {
  std::vector<std::string> models;
  std::string host = http::kDefaultHost;
  int port = http::kDefaultPort;
  int grpc_port = -1;  // -1: no gRPC service
  int threads = 0;
  int io_threads = 0;
  int compute_threads = runtime::kDefaultComputeThreads;
  bool pin_threads = runtime::kDefaultPinThreads;
  std::size_t max_batch_tokens = runtime::kDefaultMaxBatchTokens;
  std::size_t max_batch_requests = runtime::kDefaultMaxBatchRequests;
  double max_wait_ms = 0;
  double max_batch_turn_ms = static_cast<double>(runtime::kDefaultMaxBatchTurn.count());
  std::size_t max_concurrent_requests = runtime::kDefaultMaxConcurrentRequests;
  std::size_t max_concurrent_requests_per_model = 0;
  std::size_t max_client_batch_size = runtime::kDefaultMaxClientBatchSize;
  std::size_t max_input_length = 0;
  std::size_t max_input_bytes = 0;
  bool auto_truncate = false;
  std::string long_input = "reject";
  std::size_t payload_limit_bytes = http::kDefaultPayloadLimitBytes;
  std::string api_key;
  bool lazy = false;
  double idle_unload_seconds = 0;
  double load_timeout_seconds = 300;
  bool enable_model_management = false;
  std::string precision = "fp32";
  bool force_precision = false;
  std::string precision_check_data;  // empty: the built-in texts only
  std::string state_dir;             // empty: `onepass` beside the Hugging Face hub cache
  std::string pooling;               // empty: the folder's
  // Given or not: an empty --default-prompt is a choice (no prompt, whatever the folder says).
  std::optional<std::string> default_prompt_name;
  std::optional<std::string> default_prompt;
  double http_timeout_seconds = std::chrono::duration<double>(http::kDefaultTimeout).count();
  std::string log_format = "text";
  std::string log_level = "info";
  std::string otlp_endpoint;  // empty: OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT, else no tracing
  std::string sagemaker_model_dir = "/opt/ml/model";  // tests point it elsewhere

  // The flags given on the command line or through their environment variable: SageMaker's
  // variables apply only where the operator's own setting was not given
  // (sagemaker_environment.h).
  std::set<std::string, std::less<>> given;
};

// A member of ServeSettings, of one of the types a setting has.
using SettingMember =
    std::variant<std::string ServeSettings::*, std::optional<std::string> ServeSettings::*,
                 std::vector<std::string> ServeSettings::*, int ServeSettings::*,
                 std::size_t ServeSettings::*, double ServeSettings::*, bool ServeSettings::*>;

// How a setting is written on the command line.
enum class SettingSyntax {
  kValue,   // --flag VALUE (a bool one takes true|false)
  kSwitch,  // --flag alone turns it on
  kList,    // --flag A B ..., repeatable; no environment variable through CLI11 (ONEPASS_MODEL is
            // a comma-separated list read only when no --model is given: sagemaker_environment)
};

struct ServeSetting {
  std::string_view flag;  // "--max-batch-tokens"
  SettingMember member;
  std::string_view help;
  SettingSyntax syntax = SettingSyntax::kValue;
};

// Every setting, in the order `onepass serve --help` lists them.
std::span<const ServeSetting> serve_setting_table();

// "--max-batch-tokens" -> "ONEPASS_MAX_BATCH_TOKENS".
std::string environment_variable(std::string_view flag);

// The flag of a ServeSettings member, for messages: flag_of(&ServeSettings::port) is "--port".
std::string flag_of(SettingMember member);

// Whether the operator gave the setting of `member` (its flag or its environment variable).
bool was_given(const ServeSettings& settings, SettingMember member);

// Adds an option to `sub` for every row of the table, bound to `settings` (which must outlive
// the parse). The returned function, called once CLI11 has parsed, completes what CLI11 cannot
// bind: optional values, and which settings were given.
std::function<void()> add_serve_options(CLI::App& sub, ServeSettings& settings);

// The checks the runtime also makes (runtime::Runtime refuses such options naming its own
// fields), made first so that the message names the flag the operator typed. Throws
// onepass::Error (kInvalidArgument: exit 2).
void check_runtime_settings(const ServeSettings& settings);

}  // namespace onepass::app
