#include "bench/sagemaker_runtime.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>

#include "base/error.h"

namespace onepass::bench {
namespace {

// "com.amazon.coral.service#UnrecognizedClientException" and
// "ValidationError:http://internal.amazon.com/coral/..." both name the type before their tail.
std::string bare_type(std::string type) {
  if (const std::size_t hash = type.find('#'); hash != std::string::npos) type.erase(0, hash + 1);
  if (const std::size_t colon = type.find(':'); colon != std::string::npos) type.erase(colon);
  return type;
}

bool one_of(const std::string& value, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return value == n; });
}

bool is_signature_error(const std::string& type) {
  return one_of(type, {"InvalidSignatureException", "SignatureDoesNotMatch", "IncompleteSignature",
                       "IncompleteSignatureException"});
}

bool mentions(const std::string& text, const char* what) {
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower.find(what) != std::string::npos;
}

}  // namespace

SageMakerError read_sagemaker_error(const http::Response& response) {
  SageMakerError error;
  error.status = response.status;
  error.date = response.header("Date");
  error.type = bare_type(response.header("x-amzn-ErrorType"));
  const auto doc = nlohmann::json::parse(response.body, nullptr, false);
  auto text = [&](std::initializer_list<const char*> keys) -> std::string {
    if (!doc.is_object()) return {};
    for (const char* key : keys) {
      if (doc.contains(key) && doc[key].is_string()) return doc[key].get<std::string>();
    }
    return {};
  };
  if (error.type.empty()) error.type = bare_type(text({"__type", "code", "Code"}));
  error.message = text({"message", "Message"});
  if (error.message.empty() && !doc.is_object()) error.message = response.body.substr(0, 200);
  if (doc.is_object() && doc.contains("OriginalStatusCode") &&
      doc["OriginalStatusCode"].is_number_integer()) {
    error.original_status = doc["OriginalStatusCode"].get<int>();
    error.original_message = text({"OriginalMessage"});
    if (error.type.empty()) error.type = "ModelError";
  }
  return error;
}

ErrorDisposition classify(const SageMakerError& error) {
  const std::string& type = error.type;
  if (type == "ModelError") return ErrorDisposition::kFail;
  if (one_of(type,
             {"ThrottlingException", "Throttling", "TooManyRequestsException",
              "RequestLimitExceeded", "RequestThrottled", "RequestThrottledException", "SlowDown",
              "ProvisionedThroughputExceededException", "ModelNotReadyException"}) ||
      error.status == 429) {
    return ErrorDisposition::kRetryThrottled;
  }
  if (is_signature_error(type) ||
      one_of(type, {"ValidationError", "ValidationException", "UnrecognizedClientException",
                    "InvalidClientTokenId", "ExpiredTokenException", "ExpiredToken",
                    "RequestExpired", "AccessDeniedException", "MissingAuthenticationToken",
                    "MissingAuthenticationTokenException", "InvalidAccessKeyId"}) ||
      error.status == 401 || error.status == 403) {
    return ErrorDisposition::kStop;
  }
  if (error.status == 500 || error.status == 502 || error.status == 503 || error.status == 504) {
    return ErrorDisposition::kRetryTransient;
  }
  return ErrorDisposition::kFail;
}

std::string error_key(const SageMakerError& error) {
  if (error.type == "ModelError" && error.original_status) {
    return "ModelError(" + std::to_string(*error.original_status) + ")";
  }
  return error.type.empty() ? std::to_string(error.status) : error.type;
}

std::string error_text(const SageMakerError& error) {
  std::string out = error_key(error) + " (HTTP " + std::to_string(error.status) + ")";
  if (!error.message.empty()) out += ": " + error.message;
  if (error.original_status) {
    out += " [container answered " + std::to_string(*error.original_status) +
           (error.original_message.empty() ? std::string() : ": " + error.original_message) + "]";
  }
  return out;
}

bool RetryQuota::acquire(int cost) {
  int have = tokens_.load();
  while (have >= cost) {
    if (tokens_.compare_exchange_weak(have, have - cost)) return true;
  }
  return false;
}

void RetryQuota::release(int amount) {
  int have = tokens_.load();
  while (!tokens_.compare_exchange_weak(have, std::min(kCapacity, have + amount))) {
  }
}

std::chrono::milliseconds SageMakerRuntime::backoff(std::size_t retry, double uniform01) const {
  const double ceiling = std::min(
      static_cast<double>(backoff_cap.count()),
      static_cast<double>(backoff_base.count()) * std::pow(2.0, static_cast<double>(retry)));
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::floor(uniform01 * ceiling)));
}

std::string SageMakerRuntime::stop_message(const SageMakerError& error) const {
  const std::string where = "SageMaker endpoint " + endpoint_name + " in " + region;
  const std::string said =
      " (" + error_key(error) + ", HTTP " + std::to_string(error.status) + "): " + error.message;
  const std::string& type = error.type;
  if (is_signature_error(type) &&
      (mentions(error.message, "signature expired") || mentions(error.message, "not yet current") ||
       mentions(error.message, "skew"))) {
    return where + " refused the request: clock skew, this machine's clock differs from AWS's" +
           (error.date.empty() ? std::string() : " (AWS's time: " + error.date + ")") +
           "; the signature covers the time" + said;
  }
  if (one_of(type, {"RequestExpired", "RequestTimeTooSkewed"})) {
    return where + " refused the request: clock skew, this machine's clock differs from AWS's" +
           said;
  }
  if (is_signature_error(type)) {
    return where + " rejected the request's signature: check the secret key and the region" + said;
  }
  if (one_of(type, {"ExpiredTokenException", "ExpiredToken"})) {
    return where + " refused the request: the security token has expired; get fresh credentials" +
           said;
  }
  if (one_of(type, {"UnrecognizedClientException", "InvalidClientTokenId", "InvalidAccessKeyId"})) {
    return where +
           " does not know the access key or security token (the signature cannot be "
           "checked without it)" +
           said;
  }
  if (one_of(type, {"AccessDeniedException"})) {
    return where + " denied access: the caller needs sagemaker:InvokeEndpoint on it" + said;
  }
  if (one_of(type, {"ValidationError", "ValidationException"})) {
    return where +
           " refused the request: an unknown endpoint, inference component or target "
           "model, or a request it cannot take" +
           said;
  }
  return where + " refused the request" + said;
}

std::string sagemaker_endpoint_url(const std::function<std::string(const std::string&)>& getenv,
                                   const std::string& region, const std::string& endpoint_name) {
  // SageMaker's own rule for endpoint names: ^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}
  const bool valid = !endpoint_name.empty() && endpoint_name.size() <= 63 &&
                     std::isalnum(static_cast<unsigned char>(endpoint_name.front())) &&
                     std::isalnum(static_cast<unsigned char>(endpoint_name.back())) &&
                     std::all_of(endpoint_name.begin(), endpoint_name.end(),
                                 [](unsigned char c) { return std::isalnum(c) || c == '-'; });
  if (!valid) {
    throw Error(ErrorKind::kInvalidArgument,
                "'" + endpoint_name +
                    "' is not a SageMaker endpoint name (letters, digits and '-', at most 63)");
  }
  std::string base = getenv("AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME");
  if (base.empty()) base = getenv("AWS_ENDPOINT_URL");
  if (base.empty()) base = "https://runtime.sagemaker." + region + ".amazonaws.com";
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base + "/endpoints/" + endpoint_name;
}

}  // namespace onepass::bench
