// POST /v1/embed and /v2/embed: {"model", "texts", "input_type", "embedding_types", "truncate",
// "max_tokens", "output_dimension"} -> {"id", "embeddings", "texts", "meta", "response_type"}.
// Vectors are pooled with the model's pooling and L2-normalised, as Cohere's are. `input_type`
// picks the model's sentence-transformers prompt (runtime/prompts.h) of the same name
// (nomic-embed's search_query / search_document / classification / clustering), or
// search_query -> "query" and search_document -> "document" or "passage" (E5, BGE, GTE); with no
// such prompt, the model's default applies. Only "float" vectors are made.
#include <memory>
#include <optional>
#include <vector>

#include "api/cohere/cohere.h"
#include "api/common/api_error.h"
#include "api/common/json_writer.h"
#include "api/common/task_guard.h"
#include "model/heads/postprocess.h"

namespace onepass::api::cohere {

namespace {

// The model's prompt for a Cohere input_type; nullopt when it has none for it.
std::optional<std::string> prompt_for_input_type(const runtime::ModelDescription& model,
                                                 const std::string& input_type) {
  std::vector<std::string> names{input_type};
  if (input_type == "search_query") names.push_back("query");
  if (input_type == "search_document") names.insert(names.end(), {"document", "passage"});
  for (const auto& name : names)
    if (model.prompts.count(name)) return name;
  return std::nullopt;
}

std::vector<std::string> parse_texts(const Json& body, std::size_t max_texts) {
  if (get_field(body, "images") || get_field(body, "inputs"))
    throw ApiError(ApiErrorKind::kValidation, "onepass embeds 'texts' only", "texts");
  const Json* texts = get_field(body, "texts");
  if (!texts || !texts->is_array())
    throw ApiError(ApiErrorKind::kValidation, "'texts' must be a list of strings", "texts");
  if (texts->empty())
    throw ApiError(ApiErrorKind::kValidation, "'texts' cannot be an empty list", "texts");
  if (texts->size() > max_texts)
    throw ApiError(ApiErrorKind::kTooManyInputs,
                   std::to_string(texts->size()) + " texts, more than the limit of " +
                       std::to_string(max_texts),
                   "texts");
  std::vector<std::string> out;
  out.reserve(texts->size());
  for (const auto& text : *texts) {
    if (!text.is_string())
      throw ApiError(ApiErrorKind::kValidation, "'texts' must be a list of strings", "texts");
    out.push_back(text.get<std::string>());
    if (out.back().empty())
      throw ApiError(ApiErrorKind::kEmpty, "'texts' cannot hold an empty text", "texts");
  }
  return out;
}

// "embedding_types": only ["float"] (or absent). True when given: v1 then answers by type.
bool parse_embedding_types(const Json& body) {
  const Json* types = get_field(body, "embedding_types");
  if (!types) return false;
  if (!types->is_array() || types->empty())
    throw ApiError(ApiErrorKind::kValidation, "'embedding_types' must be a non-empty list",
                   "embedding_types");
  for (const auto& type : *types) {
    if (!type.is_string() || type.get<std::string>() != "float")
      throw ApiError(ApiErrorKind::kValidation,
                     "onepass makes 'float' embeddings only (not int8, uint8, binary, ubinary "
                     "or base64)",
                     "embedding_types");
  }
  return true;
}

// "truncate": END (the default) cuts the end, START the start, NONE refuses a long text.
void parse_truncate(const Json& body, runtime::InferenceRequest& request) {
  const std::string truncate = get_string(body, "truncate").value_or("END");
  if (truncate == "END" || truncate == "START") {
    request.truncate = true;
    request.truncation_direction = truncate == "END" ? tokenizer::TruncationDirection::kRight
                                                     : tokenizer::TruncationDirection::kLeft;
  } else if (truncate != "NONE") {
    throw ApiError(ApiErrorKind::kValidation, "'truncate' must be NONE, START or END", "truncate");
  }
}

std::size_t positive_or_zero(const Json& body, const char* field) {
  const auto value = get_int(body, field);
  if (!value) return 0;
  if (*value < 1)
    throw ApiError(ApiErrorKind::kValidation, std::string("'") + field + "' must be at least 1",
                   field);
  return static_cast<std::size_t>(*value);
}

// `version`: "1" or "2", the route's and meta.api_version's.
void handle_embed(Call& call, const char* version) {
  const Json body = parse_json_body(call.request);
  const auto model = select_cohere_model(call, body);
  require_task(model, runtime::bits_of({runtime::ModelTask::kEmbedder}), call.request.path(),
               "model");
  auto texts = std::make_shared<std::vector<std::string>>(
      parse_texts(body, call.options.max_client_batch_size));
  runtime::InferenceRequest request;
  request.model = model.name;
  request.output = runtime::OutputKind::kPooled;
  if (const auto input_type = get_string(body, "input_type")) {
    if (*input_type == "image")
      throw ApiError(ApiErrorKind::kValidation, "onepass embeds texts, not images", "input_type");
    request.prompt_name = prompt_for_input_type(model, *input_type);
  }
  const bool by_type = parse_embedding_types(body) || std::string_view(version) == "2";
  parse_truncate(body, request);
  request.max_length = positive_or_zero(body, "max_tokens");
  // Cohere's embeddings are unit vectors, shortened first to `output_dimension`.
  request.embedding.normalize = true;
  request.embedding.dimensions = positive_or_zero(body, "output_dimension");
  if (request.embedding.dimensions > static_cast<std::size_t>(runtime::embedding_size(model)))
    throw ApiError(
        ApiErrorKind::kValidation,
        "'output_dimension' must be at most " + std::to_string(runtime::embedding_size(model)),
        "output_dimension");
  for (auto& text : *texts) {
    runtime::InferenceItem item;
    item.text = text;
    request.items.push_back(std::move(item));
  }
  const std::string id = call.reply.request_id();
  submit_and_reply(
      call.service, std::move(request), call.reply,
      [texts, by_type, id, version](runtime::InferenceResult& result) {
        JsonWriter json;
        json.begin_object().key("id").value(id).key("embeddings");
        if (by_type) json.begin_object().key("float");
        json.begin_array();
        for (const auto& item : result.items) json.floats(item.values);
        json.end_array();
        if (by_type) json.end_object();
        json.key("texts").begin_array();
        for (const auto& text : *texts) json.value(text);
        json.end_array();
        json.key("meta").begin_object();
        json.key("api_version").begin_object().key("version").value(version).end_object();
        json.key("billed_units")
            .begin_object()
            .key("input_tokens")
            .value(result.total_tokens)
            .end_object();
        json.end_object();
        json.key("response_type").value(by_type ? "embeddings_by_type" : "embeddings_floats");
        json.end_object();
        return json_response(json.take());
      });
}

}  // namespace

void handle_embed_v1(Call& call) { handle_embed(call, "1"); }
void handle_embed_v2(Call& call) { handle_embed(call, "2"); }

}  // namespace onepass::api::cohere
