#include "apps/onepass/serve_settings.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <memory>
#include <type_traits>

#include "base/error.h"

namespace onepass::app {
namespace {

using S = ServeSettings;
using enum SettingSyntax;

// clang-format off
const std::array kServeSettings = {
  ServeSetting{"--port", &S::port, "TCP port (0: any free port)"},
  ServeSetting{"--model", &S::models,
               "[NAME=]REF: a model folder or a Hub id org/name[@revision] (repeat)", kList},
  ServeSetting{"--host", &S::host, "address to bind"},
  ServeSetting{"--grpc-port", &S::grpc_port,
               "also serve KServe's v2 gRPC protocol on this port (0: any free port; -1: off)"},
  ServeSetting{"--threads", &S::threads,
               "engine threads per forward pass (0: the cores divided among the compute threads)"},
  ServeSetting{"--pin-threads", &S::pin_threads,
               "pin each forward pass's threads to cores of their own (true|false); avoids a "
               "stall after idle gaps (docs/performance.md, Traffic with gaps)"},
  ServeSetting{"--io-threads", &S::io_threads, "HTTP and gRPC I/O threads (0: up to 4)"},
  ServeSetting{"--compute-threads", &S::compute_threads, "threads running forward passes"},
  ServeSetting{"--max-batch-tokens", &S::max_batch_tokens, "token budget of one batch"},
  ServeSetting{"--max-batch-requests", &S::max_batch_requests, "inputs in one batch"},
  ServeSetting{"--max-wait-ms", &S::max_wait_ms, "wait this long to fill a batch"},
  ServeSetting{"--max-batch-turn-ms", &S::max_batch_turn_ms,
               "with several models busy, cut one batch to about this much compute (0: off)"},
  ServeSetting{"--max-concurrent-requests", &S::max_concurrent_requests,
               "requests in flight before 429"},
  ServeSetting{"--max-concurrent-requests-per-model", &S::max_concurrent_requests_per_model,
               "requests in flight for one model before 429, so that a flooded model leaves room "
               "for the others (0: --max-concurrent-requests)"},
  ServeSetting{"--max-client-batch-size", &S::max_client_batch_size, "inputs in one request"},
  ServeSetting{"--max-input-length", &S::max_input_length,
               "tokens per input (0: the model's limit)"},
  ServeSetting{"--max-input-bytes", &S::max_input_bytes,
               "bytes per text, refused before tokenizing even with truncation (0: 64 per token "
               "of the model's input length, at least 64 KiB)"},
  ServeSetting{"--auto-truncate", &S::auto_truncate, "truncate over-long inputs", kSwitch},
  ServeSetting{"--long-input", &S::long_input,
               "over-long inputs when the request does not say: reject (422) or chunk (windows, "
               "combined)"},
  ServeSetting{"--payload-limit", &S::payload_limit_bytes, "largest request body in bytes"},
  ServeSetting{"--api-key", &S::api_key, "require Authorization: Bearer KEY"},
  ServeSetting{"--lazy", &S::lazy, "load each model on its first request", kSwitch},
  ServeSetting{"--idle-unload", &S::idle_unload_seconds,
               "unload a model after this many idle seconds (0: never)"},
  ServeSetting{"--load-timeout", &S::load_timeout_seconds,
               "fail a model load that takes longer than this many seconds (0: never)"},
  ServeSetting{"--enable-model-management", &S::enable_model_management,
               "SageMaker multi-model routes (POST/DELETE /models)", kSwitch},
  ServeSetting{"--precision", &S::precision,
               "fp32, bf16 or int8 matrix products (bf16/int8 must pass the accuracy gate), or "
               "auto: the fastest that passes it for each model (a model's own: --model REF#auto)"},
  ServeSetting{"--force-precision", &S::force_precision,
               "serve bf16/int8 even when the accuracy gate at load fails", kSwitch},
  ServeSetting{"--precision-check-data", &S::precision_check_data,
               "JSON lines {\"text\", \"text_pair\"?} added to the accuracy gate's built-in texts "
               "under --precision auto"},
  ServeSetting{"--state-dir", &S::state_dir,
               "where --precision auto caches its verdicts (default: onepass beside the Hugging "
               "Face hub cache)"},
  ServeSetting{"--pooling", &S::pooling, "embedders: cls or mean"},
  ServeSetting{"--default-prompt-name", &S::default_prompt_name,
               "embedders: the prompt (config_sentence_transformers.json) put before a text "
               "whose request names none"},
  ServeSetting{"--default-prompt", &S::default_prompt,
               "embedders: text put before a text whose request names no prompt (\"\": none, "
               "whatever the folder says)"},
  ServeSetting{"--http-timeout", &S::http_timeout_seconds,
               "seconds allowed to send a request header, a body, or read a response"},
  ServeSetting{"--log-format", &S::log_format, "text or json (one object per line)"},
  ServeSetting{"--log-level", &S::log_level, "debug, info, warn, error or off"},
  ServeSetting{"--otlp-endpoint", &S::otlp_endpoint,
               "export traces over OTLP/HTTP to this collector URL (/v1/traces is appended); the "
               "OTEL_* variables configure the rest (docs/tracing.md)"},
  ServeSetting{"--sagemaker-model-dir", &S::sagemaker_model_dir,
               "the model folder served when no --model is given"},
};
// clang-format on

// The one pair of settings that exclude each other: a prompt by name or as text.
constexpr std::string_view kPromptFlag = "--default-prompt";
constexpr std::string_view kPromptNameFlag = "--default-prompt-name";

// The option of one row, bound to its member. An optional string is bound to `text`, a string
// that outlives the parse (CLI11 2.1 binds no std::optional), and set from it once parsed.
CLI::Option* add_option(CLI::App& sub, const ServeSetting& row, ServeSettings& settings,
                        std::string& text) {
  const std::string flag(row.flag);
  const std::string help(row.help);
  return std::visit(
      [&](auto member) -> CLI::Option* {
        auto& value = settings.*member;
        using Value = std::remove_reference_t<decltype(value)>;
        if constexpr (std::is_same_v<Value, std::optional<std::string>>) {
          return sub.add_option(flag, text, help);
        } else if constexpr (std::is_same_v<Value, bool>) {
          return row.syntax == kSwitch ? sub.add_flag(flag, value, help)
                                       : sub.add_option(flag, value, help);
        } else {
          return sub.add_option(flag, value, help);
        }
      },
      row.member);
}

}  // namespace

std::span<const ServeSetting> serve_setting_table() { return kServeSettings; }

std::string environment_variable(std::string_view flag) {
  std::string out = "ONEPASS_";
  for (const char c : flag.substr(flag.find_first_not_of('-'))) {
    out += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out;
}

std::string flag_of(SettingMember member) {
  for (const auto& row : kServeSettings) {
    if (row.member == member) return std::string(row.flag);
  }
  throw Error(ErrorKind::kInternal, "a serve setting without a row in the settings table");
}

bool was_given(const ServeSettings& settings, SettingMember member) {
  return settings.given.contains(flag_of(member));
}

std::function<void()> add_serve_options(CLI::App& sub, ServeSettings& settings) {
  struct Bound {
    const ServeSetting* row;
    CLI::Option* option;
    std::shared_ptr<std::string> text;  // optional settings' value until parsed
  };
  auto bound = std::make_shared<std::vector<Bound>>();
  for (const auto& row : kServeSettings) {
    auto text = std::make_shared<std::string>();
    CLI::Option* option = add_option(sub, row, settings, *text);
    if (row.syntax == kList) {
      option->take_all();
    } else {
      option->envname(environment_variable(row.flag));
    }
    bound->push_back({&row, option, text});
  }
  auto option_of = [&](std::string_view flag) {
    return std::find_if(bound->begin(), bound->end(),
                        [&](const Bound& b) { return b.row->flag == flag; })
        ->option;
  };
  option_of(kPromptFlag)->excludes(option_of(kPromptNameFlag));

  return [bound, &settings] {
    for (const auto& b : *bound) {
      // A variable set to "" counts as given (it always has), though CLI11 reads no value from
      // it: ONEPASS_DEFAULT_PROMPT="" asks for no prompt.
      const bool given =
          b.option->count() > 0 ||
          (b.row->syntax != kList && std::getenv(environment_variable(b.row->flag).c_str()));
      if (!given) continue;
      settings.given.emplace(b.row->flag);
      using OptionalText = std::optional<std::string> ServeSettings::*;
      if (const auto* member = std::get_if<OptionalText>(&b.row->member)) {
        settings.*(*member) = *b.text;
      }
    }
  };
}

void check_runtime_settings(const ServeSettings& settings) {
  auto require = [](bool ok, SettingMember member, const char* what) {
    if (!ok) throw Error(ErrorKind::kInvalidArgument, flag_of(member) + " " + what);
  };
  require(settings.max_batch_tokens > 0, &S::max_batch_tokens, "must be positive");
  require(settings.max_batch_requests > 0, &S::max_batch_requests, "must be positive");
  require(settings.max_concurrent_requests > 0, &S::max_concurrent_requests, "must be positive");
  require(settings.threads >= 0, &S::threads, "must not be negative");
}

}  // namespace onepass::app
