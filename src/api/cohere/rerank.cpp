// POST /v1/rerank and /v2/rerank: {"model","query","documents","top_n","return_documents",...}
// -> {"id","results":[{"index","relevance_score","document"?}],"meta","model","usage"}.
// Scores are the reranker's sigmoid, exactly TEI /rerank's (api/common/rerank.h), sorted
// highest first. A document over the model's limit is truncated, or with max_chunks_per_doc N
// split into at most N windows, the query whole in each, and scored by its best window, as
// Cohere documents its chunking. The answer carries Cohere's "meta" and Jina's "model" and "usage"
// side by side, so either client finds what it reads.
#include "api/common/rerank.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "api/cohere/cohere.h"
#include "api/common/api_error.h"
#include "api/common/json_writer.h"
#include "api/common/scores.h"
#include "api/common/task_guard.h"
#include "runtime/input_limits.h"

namespace onepass::api::cohere {

namespace {

// A document as given: a string, or (v1) an object of string fields whose "text" is ranked.
// Objects come back whole when documents are returned, as Cohere preserves their fields.
struct Document {
  std::vector<std::pair<std::string, std::string>> fields;  // {"text", ...} first
  const std::string& text() const { return fields.front().second; }
};

[[noreturn]] void bad_documents() {
  throw ApiError(ApiErrorKind::kValidation,
                 "'documents' must be a list of strings or of objects with a string 'text'",
                 "documents");
}

Document parse_document(const Json& value) {
  Document document;
  if (value.is_string()) {
    document.fields.emplace_back("text", value.get<std::string>());
  } else if (value.is_object()) {
    const Json* text = get_field(value, "text");
    if (!text || !text->is_string()) bad_documents();
    document.fields.emplace_back("text", text->get<std::string>());
    for (const auto& [key, field] : value.items()) {
      if (key == "text") continue;
      if (!field.is_string()) bad_documents();
      document.fields.emplace_back(key, field.get<std::string>());
    }
  } else {
    bad_documents();
  }
  if (document.text().empty())
    throw ApiError(ApiErrorKind::kEmpty, "'documents' cannot hold an empty text", "documents");
  return document;
}

// A positive integer option, when given.
std::optional<std::int64_t> positive(const Json& body, const char* field) {
  const auto value = get_int(body, field);
  if (value && *value < 1)
    throw ApiError(ApiErrorKind::kValidation, std::string("'") + field + "' must be at least 1",
                   field);
  return value;
}

// A document's relevance: its one window's, or with chunking its best window's.
float document_score(const runtime::ItemOutput& item) {
  if (item.windows.empty()) return reranker_score(item);
  float best = 0;
  for (std::size_t w = 0; w < item.windows.size(); ++w) {
    if (item.windows[w].values.empty())
      throw ApiError(ApiErrorKind::kInternal, "empty rerank output");
    const float score = item.windows[w].values[0];
    if (w == 0 || score > best) best = score;
  }
  return best;
}

void check_rank_fields(const Json& body) {
  const Json* fields = get_field(body, "rank_fields");
  if (!fields) return;
  if (!fields->is_array() || fields->size() != 1 || !(*fields)[0].is_string() ||
      (*fields)[0].get<std::string>() != "text")
    throw ApiError(ApiErrorKind::kValidation, "'rank_fields' can only be [\"text\"]",
                   "rank_fields");
}

// `version`: "1" or "2", the route's and meta.api_version's.
void handle_rerank(Call& call, const char* version) {
  const Json body = parse_json_body(call.request);
  const auto model = select_cohere_model(call, body);
  require_task(model, runtime::bits_of({runtime::ModelTask::kReranker}), call.request.path(),
               "model");
  const auto query = get_string(body, "query");
  if (!query) throw ApiError(ApiErrorKind::kValidation, "'query' is required", "query");
  if (query->empty()) throw ApiError(ApiErrorKind::kEmpty, "'query' cannot be empty", "query");
  // Before the query is copied into every pair.
  runtime::check_input_bytes(*query, model.max_input_bytes, "the query");
  const Json* given = get_field(body, "documents");
  if (!given) throw ApiError(ApiErrorKind::kValidation, "'documents' is required", "documents");
  if (!given->is_array()) bad_documents();
  if (given->empty())
    throw ApiError(ApiErrorKind::kValidation, "'documents' cannot be an empty list", "documents");
  if (given->size() > call.options.max_client_batch_size)
    throw ApiError(ApiErrorKind::kTooManyInputs,
                   std::to_string(given->size()) + " documents, more than the limit of " +
                       std::to_string(call.options.max_client_batch_size),
                   "documents");
  // vLLM's and Jina's top_n of 0 means every document, as leaving it out does.
  const auto top_n = get_int(body, "top_n").value_or(0);
  if (top_n < 0) throw ApiError(ApiErrorKind::kValidation, "'top_n' cannot be negative", "top_n");
  const bool return_documents = get_bool(body, "return_documents").value_or(false);
  const auto max_chunks = positive(body, "max_chunks_per_doc");
  // Documents are cut at the model's input length, which caps them well below Cohere's 4096.
  positive(body, "max_tokens_per_doc");
  check_rank_fields(body);

  runtime::InferenceRequest request;
  request.model = model.name;
  request.score_activation = relevance_activation(false);  // Cohere's scores are sigmoids
  if (max_chunks) {
    // Windows over the document (the pair's second text); its windows count against
    // --max-client-batch-size like any chunked input's.
    request.long_input = runtime::LongInput::kChunk;
    request.chunked_text = runtime::ChunkedText::kSecond;
    request.max_windows_per_item = static_cast<std::size_t>(*max_chunks);
  } else {
    // Cohere never refuses a long document: it is cut to fit, the query kept whole.
    request.truncate = true;
    request.truncation_strategy = tokenizer::TruncationStrategy::kOnlySecond;
  }
  auto documents = std::make_shared<std::vector<Document>>();
  documents->reserve(given->size());
  for (const auto& value : *given) {
    documents->push_back(parse_document(value));
    runtime::check_input_bytes(documents->back().text(), model.max_input_bytes, "a document");
    request.items.push_back(query_document_item(*query, documents->back().text()));
  }
  const auto shown =
      top_n == 0 ? documents->size() : std::min(documents->size(), static_cast<std::size_t>(top_n));
  const std::string id = call.reply.request_id();
  const std::string name = model.name;
  submit_and_reply(
      call.service, std::move(request), call.reply,
      [documents, shown, return_documents, id, name, version](runtime::InferenceResult& result) {
        std::vector<float> scores;
        scores.reserve(result.items.size());
        for (const auto& item : result.items) scores.push_back(document_score(item));
        const auto ranked = rank(scores);
        JsonWriter json;
        json.begin_object().key("id").value(id).key("results").begin_array();
        for (std::size_t i = 0; i < shown; ++i) {
          json.begin_object().key("index").value(ranked[i].index);
          json.key("relevance_score").value(ranked[i].score);
          if (return_documents) {
            json.key("document").begin_object();
            for (const auto& [key, value] : (*documents)[ranked[i].index].fields)
              json.key(key).value(value);
            json.end_object();
          }
          json.end_object();
        }
        json.end_array();
        json.key("meta").begin_object();
        json.key("api_version").begin_object().key("version").value(version).end_object();
        json.key("billed_units").begin_object().key("search_units").value(1).end_object();
        json.key("tokens")
            .begin_object()
            .key("input_tokens")
            .value(result.total_tokens)
            .end_object();
        json.end_object();
        json.key("model").value(name);
        json.key("usage").begin_object().key("total_tokens").value(result.total_tokens);
        json.end_object().end_object();
        return json_response(json.take());
      });
}

}  // namespace

void handle_rerank_v1(Call& call) { handle_rerank(call, "1"); }
void handle_rerank_v2(Call& call) { handle_rerank(call, "2"); }

}  // namespace onepass::api::cohere
