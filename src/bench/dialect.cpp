#include "bench/dialect.h"

#include "base/error.h"
#include "bench/dialects/dialects.h"

namespace onepass::bench {

http::Request Dialect::json_request(std::string target, std::string body) const {
  http::Request request;
  request.method = "POST";
  request.target = std::move(target);
  request.headers = options_.headers;
  request.headers.emplace_back("Content-Type", "application/json");
  request.headers.emplace_back("Accept", "application/json");
  request.body = std::move(body);
  return request;
}

namespace {

[[noreturn]] void wrong_protocol(const Dialect& dialect, const char* what) {
  throw Error(ErrorKind::kInternal,
              "the " + std::string(dialect.name()) + " dialect has no " + what + " form");
}

}  // namespace

http::Request Dialect::build(std::span<const Sample* const>, Task) const {
  wrong_protocol(*this, "HTTP request");
}

std::vector<Answer> Dialect::parse(const http::Response&, std::size_t, Task) const {
  wrong_protocol(*this, "HTTP answer");
}

GrpcRequest Dialect::build_grpc(std::span<const Sample* const>, Task) const {
  wrong_protocol(*this, "gRPC request");
}

std::vector<Answer> Dialect::parse_grpc(const std::vector<std::string>&, std::size_t, Task) const {
  wrong_protocol(*this, "gRPC answer");
}

const std::vector<std::string>& dialect_names() {
  static const std::vector<std::string> names{"onepass",     "hf",      "tei",    "triton",
                                              "kserve",      "vllm",    "openai", "cohere",
                                              "kserve-grpc", "tei-grpc"};
  return names;
}

std::unique_ptr<Dialect> make_dialect(std::string_view name, DialectOptions options) {
  if (name == "onepass" || name == "hf") return make_sagemaker_dialect(name, std::move(options));
  if (name == "tei") return make_tei_dialect(std::move(options));
  if (name == "triton" || name == "kserve") return make_kserve_dialect(std::move(options));
  if (name == "kserve-grpc") return make_kserve_grpc_dialect(std::move(options));
  if (name == "tei-grpc") return make_tei_grpc_dialect(std::move(options));
  if (name == "vllm") return make_vllm_dialect(std::move(options));
  if (name == "openai") return make_openai_dialect(std::move(options));
  if (name == "cohere") return make_cohere_dialect(std::move(options));
  throw Error(ErrorKind::kInvalidArgument,
              "--dialect '" + std::string(name) +
                  "' is not one of onepass, hf, tei, triton (kserve), vllm, openai, cohere, "
                  "kserve-grpc, tei-grpc");
}

}  // namespace onepass::bench
