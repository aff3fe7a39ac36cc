// TEI's task logic without its transport: the runtime request a TEI body asks for and the values
// of its answer. The REST routes (embed_tokenize.cpp, predict_rerank.cpp, decode.cpp) write these
// as JSON and the tei.v1 gRPC services (api/tei_grpc) as protobuf, so both answer alike. A body
// is the REST route's JSON; `route` names the route or method in a wrong-task refusal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/common/call.h"
#include "api/common/json_request.h"
#include "api/common/scores.h"
#include "runtime/service.h"

namespace onepass::api::tei {

// /embed: pooled, normalised unless "normalize": false, cut to "dimensions".
runtime::InferenceRequest embed_request(const Json& body, const ApiOptions& options,
                                        const runtime::ModelDescription& model,
                                        std::string_view route);
// /embed_all: every token's last hidden state (the answer's rows are hidden_size wide).
runtime::InferenceRequest embed_all_request(const Json& body, const ApiOptions& options,
                                            const runtime::ModelDescription& model,
                                            std::string_view route);
// /embed_sparse: SPLADE vectors over the vocabulary.
runtime::InferenceRequest embed_sparse_request(const Json& body, const ApiOptions& options,
                                               const runtime::ModelDescription& model,
                                               std::string_view route);

// /predict: one item per text or pair; `batch` when "inputs" was a list of sequences.
struct PredictInputs {
  runtime::InferenceRequest request;
  bool batch = false;
  bool raw_scores = false;
};
PredictInputs predict_request(const Json& body, const ApiOptions& options,
                              const runtime::ModelDescription& model, std::string_view route);
// One item's labels, best first: softmax (sigmoid for one label) unless `raw_scores`.
std::vector<RankedLabel> predictions(const runtime::ItemOutput& item, bool raw_scores);

// /rerank: one (query, text) item per text.
struct RerankInputs {
  runtime::InferenceRequest request;
  std::shared_ptr<std::vector<std::string>> texts;
  bool return_text = false;
};
RerankInputs rerank_request(const Json& body, const ApiOptions& options,
                            const runtime::ModelDescription& model, std::string_view route);
// The texts' scores, best first (index: the text's place in the request).
std::vector<RankedLabel> rerank_ranks(const runtime::InferenceResult& result);

// /tokenize: per text its tokens with UTF-8 byte offsets into the (prompted) text; a special
// token has none.
struct Token {
  std::int64_t id = 0;
  std::string text;
  bool special = false;
  std::size_t start = 0;
  std::size_t stop = 0;
};
std::vector<std::vector<Token>> tokenize(const Json& body, runtime::InferenceService& service,
                                         const ApiOptions& options,
                                         const runtime::ModelDescription& model);

// /decode: one text per id list.
std::vector<std::string> decode(const Json& body, runtime::InferenceService& service,
                                const ApiOptions& options, const runtime::ModelDescription& model);

// /info's model_dtype for a precision, and its max_input_length.
const char* model_dtype(const std::string& precision);
std::size_t max_input_length(const runtime::ModelDescription& model, const ApiOptions& options);

}  // namespace onepass::api::tei
