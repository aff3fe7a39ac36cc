// How the load generator reaches an endpoint: one Transport per worker thread, which sends a
// dialect's request for a batch and reads its answer. HTTP (http[s]://, one keep-alive
// connection, the SageMaker Runtime path when the dialect's options name it) or gRPC
// (grpc://HOST:PORT, one HTTP/2 connection shared by a run's workers, unary calls or a
// bidirectional stream as the dialect shapes the call). Neither throws for the server's faults:
// they come back as an error key, so that a run under load counts failures instead of stopping at
// the first.
//
// Error keys: an HTTP status ("503"), a gRPC status by its name ("UNAUTHENTICATED",
// "RESOURCE_EXHAUSTED": HTTP's 429, "UNAVAILABLE": 503), or a failure to get any answer:
// "connect", "timeout" (the client's --timeout, HTTP's or the call's deadline), "io",
// "protocol"; "bad_response" for a success the dialect cannot read.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "bench/answer.h"
#include "bench/dataset.h"
#include "bench/dialect.h"

namespace onepass::bench {

struct Outcome {
  std::string error;          // empty when the request succeeded
  std::string error_message;  // what the server said, when it said something worth showing
  std::string stop;           // set: no request can succeed (SageMaker refused the caller)
  std::vector<Answer> answers;
  std::string variant;          // SageMaker's x-Amzn-Invoked-Production-Variant
  std::size_t throttled = 0;    // throttling answers received
  std::size_t sdk_retries = 0;  // attempts resent by the AWS standard retry mode
};

class Transport {
 public:
  virtual ~Transport() = default;
  // Opens the connection now, so that the first measured request does not pay for it; a
  // failure is left for the requests to count.
  virtual void connect() = 0;
  // Builds the dialect's request for `batch`, sends it, parses the answer.
  virtual Outcome exchange(const Dialect& dialect, std::span<const Sample* const> batch,
                           Task task) = 0;
  // Requests sent twice because a reused connection failed (HTTP's client.h); 0 for gRPC.
  virtual std::size_t retries() const = 0;
};

// The transport `dialect` speaks to `url` with. Throws Error(kInvalidArgument) when the URL's
// scheme is not the dialect's (a gRPC dialect needs grpc://HOST:PORT, the others http[s]://).
std::unique_ptr<Transport> open_transport(const Dialect& dialect, const std::string& url,
                                          std::chrono::milliseconds timeout);

// grpc://HOST:PORT (HOST a name, an IPv4 address or [IPv6]) as gRPC's target "HOST:PORT";
// throws Error(kInvalidArgument) otherwise.
std::string grpc_target(const std::string& url);
bool is_grpc_url(const std::string& url);

// The gRPC transport (grpc_transport.cpp): the connection to `target` ("HOST:PORT") that the
// transports alive share, each call with a deadline of `timeout`, the dialect's
// options().headers as metadata and an x-request-id of its own.
std::unique_ptr<Transport> open_grpc_transport(const std::string& target,
                                               std::chrono::milliseconds timeout);

}  // namespace onepass::bench
