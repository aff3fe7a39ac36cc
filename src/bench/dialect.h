// A dialect turns a batch of samples into one request in the wire format a server family
// expects, and its answer back into Answers: an HTTP request (build/parse) or, for the gRPC
// dialects (kserve-grpc, tei-grpc), a gRPC call's messages (build_grpc/parse_grpc). One file per
// family under dialects/; the transport (transport.h) carries either, and the load generator
// never looks inside a payload.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bench/answer.h"
#include "bench/dataset.h"
#include "bench/sagemaker_runtime.h"
#include "http/client.h"

namespace onepass::bench {

// Client-side tokenization for tensor dialects (KServe v2 input_ids). Supplied by the CLI from
// onepass's tokenizer library, so this module stays free of it. Returns ids and token types,
// special tokens included, truncated to `max_len`.
struct TokenizedInput {
  std::vector<std::int64_t> ids;
  std::vector<std::int64_t> type_ids;
};
using TokenizeFn = std::function<TokenizedInput(const Sample& sample, std::size_t max_len)>;

struct DialectOptions {
  std::string model;        // model name for routes and bodies that carry one
  bool pad_to_max = false;  // tensor dialects pad to max_len; text is lengthened upstream
  std::size_t max_len = 512;
  http::Headers headers;  // sent with every request (SageMaker routing, Authorization)
  std::vector<std::string> label_names;  // index -> label for dialects that answer logits
  TokenizeFn tokenize;                   // empty: send text
  std::int64_t pad_id = 0;
  // Set: the endpoint is reached through the SageMaker Runtime API (sagemaker_runtime.h); the
  // dialect shapes the payload, the load generator routes, signs and retries.
  std::shared_ptr<const SageMakerRuntime> sagemaker;
};

// One gRPC call as a dialect shapes it. One message: a unary call; several: a bidirectional
// stream that carries them in order and is answered with as many messages, in order (TEI's
// *Stream methods, which the server batches like concurrent calls).
struct GrpcRequest {
  std::string method;  // the full path: "/inference.GRPCInferenceService/ModelInfer"
  std::vector<std::string> messages;
};

enum class Protocol { kHttp, kGrpc };

class Dialect {
 public:
  explicit Dialect(DialectOptions options) : options_(std::move(options)) {}
  virtual ~Dialect() = default;

  virtual std::string_view name() const = 0;
  // The tasks this dialect can request, in the order auto-detection tries them. A dialect whose
  // one route answers per the model's task (SageMaker /invocations, KServe) lists one task and
  // parses either kind of answer.
  virtual std::vector<Task> tasks() const = 0;
  // kGrpc: the endpoint is grpc://HOST:PORT and the dialect answers build_grpc/parse_grpc;
  // kHttp: http[s]:// and build/parse.
  virtual Protocol protocol() const { return Protocol::kHttp; }
  // The HTTP dialects' request; a gRPC dialect throws kInternal.
  virtual http::Request build(std::span<const Sample* const> batch, Task task) const;
  // Throws Error(kInvalidInput) when the body does not have the dialect's answer shape or holds
  // a different number of answers than `batch_size`.
  virtual std::vector<Answer> parse(const http::Response& response, std::size_t batch_size,
                                    Task task) const;
  // The gRPC dialects' call (options().headers travel as its metadata, names in lower case).
  virtual GrpcRequest build_grpc(std::span<const Sample* const> batch, Task task) const;
  // The answer messages of a call that ended OK; throws Error(kInvalidInput) as parse() does.
  virtual std::vector<Answer> parse_grpc(const std::vector<std::string>& messages,
                                         std::size_t batch_size, Task task) const;

  const DialectOptions& options() const { return options_; }

 protected:
  http::Request json_request(std::string target, std::string body) const;

 private:
  DialectOptions options_;
};

// "onepass" | "hf" | "tei" | "triton" (or "kserve": the v2 REST) | "vllm" | "openai" |
// "cohere" | "kserve-grpc" | "tei-grpc"; throws kInvalidArgument otherwise.
std::unique_ptr<Dialect> make_dialect(std::string_view name, DialectOptions options);
const std::vector<std::string>& dialect_names();

}  // namespace onepass::bench
