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

const std::vector<std::string>& dialect_names() {
  static const std::vector<std::string> names{"onepass", "hf",     "tei",   "triton",
                                              "vllm",    "openai", "cohere"};
  return names;
}

std::unique_ptr<Dialect> make_dialect(std::string_view name, DialectOptions options) {
  if (name == "onepass" || name == "hf") return make_sagemaker_dialect(name, std::move(options));
  if (name == "tei") return make_tei_dialect(std::move(options));
  if (name == "triton") return make_kserve_dialect(std::move(options));
  if (name == "vllm") return make_vllm_dialect(std::move(options));
  if (name == "openai") return make_openai_dialect(std::move(options));
  if (name == "cohere") return make_cohere_dialect(std::move(options));
  throw Error(ErrorKind::kInvalidArgument,
              "--dialect '" + std::string(name) +
                  "' is not one of onepass, hf, tei, triton, vllm, openai, cohere");
}

}  // namespace onepass::bench
