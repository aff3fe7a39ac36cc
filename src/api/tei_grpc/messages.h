// TEI's tei.v1 messages (tei.proto, beside this file) on the wire (src/protowire/wire.h). A
// request is read into the JSON body the REST TEI route takes for the same thing (api/tei's task
// functions read it), so both transports check and answer alike; answers are written from the
// task functions' values. Nothing here needs gRPC, so the fuzz build covers it.
//
// The field numbers are tei.proto's, named once below (namespace field): the place a client-side
// encoder reads them from. A field onepass does not know is skipped, as protobuf skips unknown
// fields; a field of the wrong wire type, a string that is not UTF-8 or a message cut short is
// ApiError kValidation (INVALID_ARGUMENT).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/common/json_request.h"
#include "api/common/scores.h"
#include "api/tei/tasks.h"
#include "runtime/service.h"

namespace onepass::api::tei_grpc {

namespace field {

// Requests.
namespace embed_request {  // EmbedRequest
constexpr std::uint32_t kInputs = 1, kTruncate = 2, kNormalize = 3, kTruncationDirection = 4,
                        kPromptName = 5, kDimensions = 6;
}
namespace embed_all_request {  // EmbedAllRequest, EmbedSparseRequest (and the older
                               // EmbedRawRequest)
constexpr std::uint32_t kInputs = 1, kTruncate = 2, kTruncationDirection = 3, kPromptName = 4;
}
namespace predict_request {  // PredictRequest (inputs: a string), PredictPairRequest (repeated)
constexpr std::uint32_t kInputs = 1, kTruncate = 2, kRawScores = 3, kTruncationDirection = 4;
}
namespace rerank_request {  // RerankRequest (texts), RerankStreamRequest (one text)
constexpr std::uint32_t kQuery = 1, kTexts = 2, kText = 2, kTruncate = 3, kRawScores = 4,
                        kReturnText = 5, kTruncationDirection = 6;
}
namespace encode_request {  // EncodeRequest
constexpr std::uint32_t kInputs = 1, kAddSpecialTokens = 2, kPromptName = 3;
}
namespace decode_request {  // DecodeRequest
constexpr std::uint32_t kIds = 1, kSkipSpecialTokens = 2;
}
// TruncationDirection: RIGHT 0, LEFT 1.
constexpr std::uint64_t kTruncationRight = 0, kTruncationLeft = 1;

// Answers.
namespace metadata {  // Metadata
constexpr std::uint32_t kComputeChars = 1, kComputeTokens = 2, kTotalTimeNs = 3,
                        kTokenizationTimeNs = 4, kQueueTimeNs = 5, kInferenceTimeNs = 6;
}
// EmbedResponse (embeddings), EmbedAllResponse (token_embeddings), EmbedSparseResponse
// (sparse_embeddings), PredictResponse (predictions), RerankResponse (ranks), EncodeResponse
// (tokens): the list is field 1 and the Metadata field 2.
constexpr std::uint32_t kList = 1, kMetadata = 2;
namespace token_embedding {  // TokenEmbedding
constexpr std::uint32_t kEmbeddings = 1;
}
namespace sparse_value {  // SparseValue
constexpr std::uint32_t kIndex = 1, kValue = 2;
}
namespace prediction {  // Prediction
constexpr std::uint32_t kScore = 1, kLabel = 2;
}
namespace rank {  // Rank
constexpr std::uint32_t kIndex = 1, kText = 2, kScore = 3;
}
namespace simple_token {  // SimpleToken
constexpr std::uint32_t kId = 1, kText = 2, kSpecial = 3, kStart = 4, kStop = 5;
}
namespace decode_response {  // DecodeResponse
constexpr std::uint32_t kText = 1;
}
namespace info_response {  // InfoResponse
constexpr std::uint32_t kVersion = 1, kSha = 2, kDockerLabel = 3, kModelId = 4, kModelSha = 5,
                        kModelDtype = 6, kModelType = 7, kMaxConcurrentRequests = 8,
                        kMaxInputLength = 9, kMaxBatchTokens = 10, kMaxBatchRequests = 11,
                        kMaxClientBatchSize = 12, kTokenizationWorkers = 13;
}
// ModelType.
constexpr std::uint64_t kModelEmbedding = 0, kModelClassifier = 1, kModelReranker = 2;

}  // namespace field

// The REST body of each request ("inputs", "truncate", "truncation_direction", ...). A proto3
// bool that is absent is false, as TEI's gRPC server reads it (so "truncate" and
// "add_special_tokens" are false unless sent); "normalize", "prompt_name" and "dimensions" are
// only in the body when the message has them.
Json decode_embed_request(std::string_view bytes);
Json decode_embed_all_request(std::string_view bytes);  // EmbedAll, EmbedSparse, EmbedRaw
Json decode_predict_request(std::string_view bytes);
// "inputs" is the pair; not exactly two texts is kValidation.
Json decode_predict_pair_request(std::string_view bytes);
Json decode_rerank_request(std::string_view bytes);
// RerankStreamRequest: {"query", "text", "truncate", "raw_scores", "return_text",
// "truncation_direction"}.
Json decode_rerank_stream_request(std::string_view bytes);
Json decode_encode_request(std::string_view bytes);
Json decode_decode_request(std::string_view bytes);

// Metadata: what the runtime measured for one answer.
struct AnswerMetadata {
  std::size_t compute_chars = 0;
  std::size_t compute_tokens = 0;
  std::uint64_t total_ns = 0, tokenization_ns = 0, queue_ns = 0, inference_ns = 0;
};
AnswerMetadata metadata_of(const runtime::InferenceResult& result, std::size_t chars,
                           std::chrono::nanoseconds total);

std::string encode_embed_response(const std::vector<float>& embedding,
                                  const AnswerMetadata& metadata);
// `hidden`: the width of each token's row in `values`.
std::string encode_embed_all_response(const std::vector<float>& values, std::size_t hidden,
                                      const AnswerMetadata& metadata);
// The entries of `values` that are not 0, by index.
std::string encode_embed_sparse_response(const std::vector<float>& values,
                                         const AnswerMetadata& metadata);
struct Label {
  float score = 0;
  std::string label;
};
std::string encode_predict_response(const std::vector<Label>& predictions,
                                    const AnswerMetadata& metadata);
struct Ranked {
  std::uint32_t index = 0;
  float score = 0;
  std::optional<std::string> text;
};
std::string encode_rerank_response(const std::vector<Ranked>& ranks,
                                   const AnswerMetadata& metadata);
std::string encode_encode_response(const std::vector<tei::Token>& tokens);
std::string encode_decode_response(const std::string& text);

struct Info {
  std::string version;
  std::string model_id;
  std::string model_dtype;
  std::uint64_t model_type = field::kModelEmbedding;
  std::uint64_t max_concurrent_requests = 0, max_input_length = 0, max_batch_tokens = 0,
                max_batch_requests = 0, max_client_batch_size = 0, tokenization_workers = 1;
};
std::string encode_info_response(const Info& info);

}  // namespace onepass::api::tei_grpc
