#include "otlp/config.h"

#include <charconv>
#include <cstdlib>

#include "base/error.h"
#include "base/version.h"

namespace onepass::otlp {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string percent_decode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    unsigned value = 0;
    if (text[i] == '%' && i + 2 < text.size() &&
        std::from_chars(text.data() + i + 1, text.data() + i + 3, value, 16).ptr ==
            text.data() + i + 3) {
      out.push_back(static_cast<char>(value));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

// "key1=value1,key2=value2" (W3C Baggage's shape, values percent-encoded), as the OTEL_*_HEADERS
// and OTEL_RESOURCE_ATTRIBUTES variables are written.
std::vector<std::pair<std::string, std::string>> parse_pairs(std::string_view text,
                                                             const char* variable) {
  std::vector<std::pair<std::string, std::string>> pairs;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view member = trim(text.substr(0, comma));
    if (!member.empty()) {
      const auto eq = member.find('=');
      if (eq == std::string_view::npos || trim(member.substr(0, eq)).empty())
        throw Error(ErrorKind::kInvalidArgument,
                    std::string(variable) + " must be a list of key=value pairs");
      pairs.emplace_back(percent_decode(trim(member.substr(0, eq))),
                         percent_decode(trim(member.substr(eq + 1))));
    }
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return pairs;
}

std::size_t parse_count(const Environment& env, const char* variable, std::size_t fallback,
                        bool allow_zero) {
  const auto value = env(variable);
  if (!value || trim(*value).empty()) return fallback;
  const std::string_view text = trim(*value);
  std::size_t n = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (error != std::errc() || end != text.data() + text.size() || (!allow_zero && n == 0))
    throw Error(ErrorKind::kInvalidArgument, std::string(variable) + " must be a " +
                                                 (allow_zero ? "non-negative" : "positive") +
                                                 " integer");
  return n;
}

std::chrono::milliseconds parse_ms(const Environment& env, const char* variable,
                                   std::chrono::milliseconds fallback) {
  return std::chrono::milliseconds(
      parse_count(env, variable, static_cast<std::size_t>(fallback.count()), true));
}

std::optional<std::string> first(const Environment& env, const char* a, const char* b) {
  auto value = env(a);
  if (value && !trim(*value).empty()) return std::string(trim(*value));
  value = env(b);
  if (value && !trim(*value).empty()) return std::string(trim(*value));
  return std::nullopt;
}

bool is_true(const std::optional<std::string>& value) {
  if (!value) return false;
  std::string lower;
  for (char c : trim(*value)) lower.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c));
  return lower == "true";
}

http::Url parse_endpoint(const std::string& text, const char* source) {
  try {
    return http::Url::parse(text);
  } catch (const Error&) {
    throw Error(ErrorKind::kInvalidArgument,
                std::string(source) + " must be an http:// or https:// URL");
  }
}

}  // namespace

Environment process_environment() {
  return [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

TracingConfig tracing_config(std::string_view flag_endpoint, const Environment& env) {
  TracingConfig config;
  if (is_true(env("OTEL_SDK_DISABLED"))) return config;
  auto exporter = env("OTEL_TRACES_EXPORTER");
  if (exporter) exporter = std::string(trim(*exporter));
  if (exporter && exporter->empty()) exporter.reset();
  if (exporter && *exporter == "none") return config;
  if (exporter && *exporter != "otlp")
    throw Error(ErrorKind::kInvalidArgument, "OTEL_TRACES_EXPORTER must be otlp or none");

  // The endpoint: a base URL gets the traces path; the traces variable is the whole URL.
  const auto traces_endpoint = env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  const auto base_endpoint = env("OTEL_EXPORTER_OTLP_ENDPOINT");
  http::Url url;
  if (!flag_endpoint.empty() || !(traces_endpoint && !trim(*traces_endpoint).empty())) {
    std::string base;
    const char* source = "--otlp-endpoint";
    if (!flag_endpoint.empty()) {
      base = std::string(trim(flag_endpoint));
    } else if (base_endpoint && !trim(*base_endpoint).empty()) {
      base = std::string(trim(*base_endpoint));
      source = "OTEL_EXPORTER_OTLP_ENDPOINT";
    } else {
      return config;  // nothing configured: no tracing at all
    }
    url = parse_endpoint(base, source);
    url.prefix += "/v1/traces";
  } else {
    url = parse_endpoint(std::string(trim(*traces_endpoint)), "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  }
  config.enabled = true;
  config.exporter.url = url;
  config.endpoint = url.to_string();

  const auto protocol =
      first(env, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL");
  if (!protocol || *protocol == "http/protobuf") {
    config.exporter.protocol = Protocol::kHttpProtobuf;
  } else if (*protocol == "http/json") {
    config.exporter.protocol = Protocol::kHttpJson;
  } else {
    throw Error(ErrorKind::kInvalidArgument,
                "OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json (onepass "
                "exports over HTTP; grpc is not supported)");
  }

  // Both header lists apply; the traces one wins for a name both give.
  std::vector<std::pair<std::string, std::string>> headers;
  for (const char* variable : {"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"}) {
    if (const auto value = env(variable)) {
      for (auto& [name, value_text] : parse_pairs(*value, variable)) {
        std::erase_if(headers, [&](const auto& h) { return h.first == name; });
        headers.emplace_back(std::move(name), std::move(value_text));
      }
    }
  }
  config.exporter.headers.assign(headers.begin(), headers.end());

  const auto timeout = env("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")
                           ? parse_ms(env, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", {})
                           : parse_ms(env, "OTEL_EXPORTER_OTLP_TIMEOUT", std::chrono::seconds(10));
  config.exporter.timeout = timeout.count() > 0 ? timeout : std::chrono::seconds(10);

  config.sampler = trace::Sampler::from_names(env("OTEL_TRACES_SAMPLER").value_or(""),
                                              trim(env("OTEL_TRACES_SAMPLER_ARG").value_or("")));

  trace::BatchOptions& batch = config.batch;
  batch.max_queue_size = parse_count(env, "OTEL_BSP_MAX_QUEUE_SIZE", batch.max_queue_size, false);
  batch.max_export_batch_size = std::min(
      batch.max_queue_size,
      parse_count(env, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", batch.max_export_batch_size, false));
  batch.schedule_delay = parse_ms(env, "OTEL_BSP_SCHEDULE_DELAY", batch.schedule_delay);
  batch.export_timeout = parse_ms(env, "OTEL_BSP_EXPORT_TIMEOUT", batch.export_timeout);

  // The resource: OTEL_RESOURCE_ATTRIBUTES, service.name from OTEL_SERVICE_NAME first.
  std::vector<std::pair<std::string, std::string>> attributes;
  if (const auto value = env("OTEL_RESOURCE_ATTRIBUTES"))
    attributes = parse_pairs(*value, "OTEL_RESOURCE_ATTRIBUTES");
  std::string service_name = "onepass";
  for (const auto& [key, value] : attributes)
    if (key == "service.name") service_name = value;
  if (const auto name = env("OTEL_SERVICE_NAME"); name && !trim(*name).empty())
    service_name = std::string(trim(*name));
  auto& resource = config.exporter.resource.attributes;
  resource.push_back({"service.name", service_name});
  bool has_version = false;
  for (const auto& [key, value] : attributes) {
    if (key == "service.name") continue;
    has_version |= key == "service.version";
    resource.push_back({key, value});
  }
  if (!has_version) resource.push_back({"service.version", std::string(onepass::version())});
  resource.push_back({"telemetry.sdk.name", std::string("onepass")});
  resource.push_back({"telemetry.sdk.language", std::string("cpp")});
  resource.push_back({"telemetry.sdk.version", std::string(onepass::version())});
  return config;
}

std::unique_ptr<trace::Tracer> make_tracer(const TracingConfig& config) {
  if (!config.enabled) return nullptr;
  return std::make_unique<trace::Tracer>(config.sampler, config.batch,
                                         std::make_unique<HttpExporter>(config.exporter));
}

std::unique_ptr<trace::Tracer> tracer_from_environment(std::string_view flag_endpoint,
                                                       const Environment& environment,
                                                       TracingSummary* summary) {
  const TracingConfig config = tracing_config(flag_endpoint, environment);
  if (!config.enabled) return nullptr;
  if (summary != nullptr) {
    summary->endpoint = config.endpoint;
    summary->protocol =
        config.exporter.protocol == Protocol::kHttpJson ? "http/json" : "http/protobuf";
    summary->sampler = environment("OTEL_TRACES_SAMPLER").value_or("parentbased_always_on");
    summary->ratio =
        config.sampler.root() == trace::Sampler::Root::kAlwaysOff ? 0.0 : config.sampler.ratio();
  }
  return make_tracer(config);
}

}  // namespace onepass::otlp
