// Constructors of the dialect families and the JSON helpers they share. Internal to src/bench.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "bench/dialect.h"

namespace onepass::bench {

std::unique_ptr<Dialect> make_sagemaker_dialect(std::string_view name, DialectOptions options);
std::unique_ptr<Dialect> make_tei_dialect(DialectOptions options);
std::unique_ptr<Dialect> make_kserve_dialect(DialectOptions options);
std::unique_ptr<Dialect> make_vllm_dialect(DialectOptions options);
std::unique_ptr<Dialect> make_openai_dialect(DialectOptions options);
std::unique_ptr<Dialect> make_cohere_dialect(DialectOptions options);
std::unique_ptr<Dialect> make_kserve_grpc_dialect(DialectOptions options);
std::unique_ptr<Dialect> make_tei_grpc_dialect(DialectOptions options);

namespace detail {

// Parses a response body; throws Error(kInvalidInput) naming the dialect when it is not JSON.
nlohmann::json parse_body(const http::Response& response, std::string_view dialect);
[[noreturn]] void bad_shape(std::string_view dialect, std::string_view what);
// Appends every number of a (possibly nested) JSON array; throws on anything else.
void flatten_numbers(const nlohmann::json& value, std::vector<float>& out,
                     std::string_view dialect);
// Answer from a list of {"label","score"} objects: the top one wins, and every score is kept in
// label-name order so that verification compares all of them.
Answer answer_from_label_scores(const nlohmann::json& list, std::string_view dialect);
// Answer from one text's list of token-classification entities ({"entity_group" or "entity",
// "score", "start", "end"}); an empty list is a valid answer (no entity found).
Answer answer_from_entities(const nlohmann::json& list, std::string_view dialect);
// Answer from one question-answering answer {"score","start","end","answer"} (or a top_k list
// of them, the first kept).
Answer answer_from_span(const nlohmann::json& answer, std::string_view dialect);
// A sample as a question about a context: its text_pair asks about its text; a single text is
// asked kDefaultQuestion.
inline constexpr const char* kDefaultQuestion = "What is this text about?";
nlohmann::json question_of(const Sample& sample);
// Answer from one input's logits: softmax (sigmoid for one logit), the top label named by
// `label_names` (or "LABEL_i", unnamed), every probability kept in index order.
Answer answer_from_logits(const std::vector<float>& logits,
                          const std::vector<std::string>& label_names);
// A v2 output tensor of `batch_size` rows (KServe v2, REST or gRPC) as one Answer per row: the
// rows of "embeddings" as vectors, those of any other output as logits.
std::vector<Answer> answers_from_rows(const std::vector<float>& data, std::size_t batch_size,
                                      bool logits, const std::vector<std::string>& label_names,
                                      std::string_view dialect);
// Text of a sample for endpoints that take one string: a pair joined by a newline.
std::string single_text(const Sample& sample);

}  // namespace detail
}  // namespace onepass::bench
