// A SageMaker endpoint reached through the SageMaker Runtime API, as the AWS SDK's InvokeEndpoint
// reaches it: every request to {base}/endpoints/{name}/invocations whatever the dialect's own
// route (the dialect still shapes the payload), signed just before it is sent, and SageMaker's
// answers read as the SDK reads them: throttling and transient failures retried in the SDK's
// standard retry mode (3 attempts, full-jitter exponential backoff from 100 ms capped at 20 s,
// a 500-token retry quota), the container's own status in a ModelError, and the errors no retry
// can fix (unknown endpoint, rejected signature or token, clock skew) stopping the benchmark.
// The signer is a function so that the bench stays free of credentials (the CLI wires src/aws).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "http/client.h"

namespace onepass::bench {

// What SageMaker (or the container, through a ModelError) said about a non-2xx answer.
struct SageMakerError {
  int status = 0;
  std::string type;     // "ThrottlingException", "ModelError", ...; empty when none was given
  std::string message;  // SageMaker's message
  std::optional<int> original_status;  // ModelError: the container's own status and message
  std::string original_message;
  std::string date;  // the answer's Date header (clock skew)
};

SageMakerError read_sagemaker_error(const http::Response& response);

enum class ErrorDisposition {
  kRetryThrottled,  // ThrottlingException and its kin, HTTP 429
  kRetryTransient,  // HTTP 500, 502, 503, 504 from SageMaker itself
  kFail,            // counted as this request's failure (a ModelError, another 4xx)
  kStop,            // no request can succeed: stop the benchmark (exit code 2)
};
ErrorDisposition classify(const SageMakerError& error);

// The errors.by_status key: the error type ("ThrottlingException", "ModelError(400)" with the
// container's status), or the HTTP status when SageMaker named none.
std::string error_key(const SageMakerError& error);
// One line for the user: the type, SageMaker's message and, for a ModelError, the container's.
std::string error_text(const SageMakerError& error);

// The standard retry mode's token bucket, shared by every connection to one endpoint.
class RetryQuota {
 public:
  static constexpr int kCapacity = 500, kRetryCost = 5, kTimeoutCost = 10, kSuccessRefund = 1;
  bool acquire(int cost);
  void release(int amount);
  int available() const { return tokens_.load(); }

 private:
  std::atomic<int> tokens_{kCapacity};
};

struct SageMakerRuntime {
  std::string endpoint_name;
  std::string region;
  // Adds X-Amz-Date, the content hash, the session token and Authorization to a request bound
  // for `url`; called before every attempt (a retry is signed again, at its own time).
  std::function<void(http::Request&, const http::Url&)> sign;
  std::size_t max_attempts = 3;
  std::chrono::milliseconds backoff_base{100};
  std::chrono::milliseconds backoff_cap{20000};
  mutable RetryQuota quota;

  // Delay before retry number `retry` (1-based): uniform in [0, min(cap, base * 2^retry)).
  std::chrono::milliseconds backoff(std::size_t retry, double uniform01) const;
  // The message that stops the benchmark for a kStop error: the cause in words, SageMaker's
  // error type and message, the endpoint and region.
  std::string stop_message(const SageMakerError& error) const;
};

// {base}/endpoints/{name}: base is AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME, else AWS_ENDPOINT_URL,
// else https://runtime.sagemaker.{region}.amazonaws.com (the getenv argument returns "" when
// unset). Throws Error(kInvalidArgument) for a name SageMaker would refuse.
std::string sagemaker_endpoint_url(const std::function<std::string(const std::string&)>& getenv,
                                   const std::string& region, const std::string& endpoint_name);

}  // namespace onepass::bench
