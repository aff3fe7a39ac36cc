#include "api/tei/tasks.h"

#include <algorithm>
#include <limits>

#include "api/common/api_error.h"
#include "api/common/long_input.h"
#include "api/common/reply.h"
#include "api/common/rerank.h"
#include "api/common/task_guard.h"
#include "api/tei/tei_common.h"
#include "runtime/input_limits.h"
#include "runtime/prompts.h"

namespace onepass::api::tei {

namespace {

// One item per text, the body's truncation applied: /embed, /embed_all and /embed_sparse.
runtime::InferenceRequest text_request(const Json& body, const ApiOptions& options,
                                       const runtime::ModelDescription& model,
                                       runtime::OutputKind output) {
  bool is_list = false;
  runtime::InferenceRequest request;
  request.model = model.name;
  request.output = output;
  for (auto& text : parse_string_inputs(body, options, is_list)) {
    runtime::InferenceItem item;
    item.text = std::move(text);
    request.items.push_back(std::move(item));
  }
  parse_truncation(body, options, request);
  request.prompt_name = get_string(body, "prompt_name");
  return request;
}

// Byte offset of each code point of `text`, plus the end: offsets are code points in the
// tokenizer's Encoding, bytes in TEI's answer.
std::vector<std::size_t> code_point_starts(std::string_view text) {
  std::vector<std::size_t> starts;
  starts.reserve(text.size() + 1);
  for (std::size_t i = 0; i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) starts.push_back(i);
  starts.push_back(text.size());
  return starts;
}

[[noreturn]] void bad_predict_inputs() {
  throw ApiError(ApiErrorKind::kValidation,
                 "`inputs` must be a string, a [premise, hypothesis] pair, or a list of those",
                 "inputs");
}

runtime::InferenceItem sequence_item(const Json& sequence) {
  runtime::InferenceItem item;
  if (sequence.is_string()) {
    item.text = sequence.get<std::string>();
  } else if (sequence.is_array() && (sequence.size() == 1 || sequence.size() == 2) &&
             std::all_of(sequence.begin(), sequence.end(),
                         [](const Json& j) { return j.is_string(); })) {
    item.text = sequence[0].get<std::string>();
    if (sequence.size() == 2) {
      item.text_pair = sequence[1].get<std::string>();
      require_non_empty(*item.text_pair);
    }
  } else {
    bad_predict_inputs();
  }
  require_non_empty(item.text);
  return item;
}

[[noreturn]] void bad_ids() {
  throw ApiError(ApiErrorKind::kValidation,
                 "`ids` must be a list of token ids or a non-empty list of such lists", "ids");
}

std::vector<std::int32_t> id_list(const Json& list) {
  std::vector<std::int32_t> ids;
  ids.reserve(list.size());
  for (const Json& id : list) {
    if (!id.is_number_integer()) bad_ids();
    const auto value = id.get<std::int64_t>();
    if (value < 0 || value > std::numeric_limits<std::int32_t>::max()) {
      throw ApiError(ApiErrorKind::kValidation,
                     "token id " + std::to_string(value) + " is outside the vocabulary", "ids");
    }
    ids.push_back(static_cast<std::int32_t>(value));
  }
  return ids;
}

}  // namespace

runtime::InferenceRequest embed_request(const Json& body, const ApiOptions& options,
                                        const runtime::ModelDescription& model,
                                        std::string_view route) {
  require_task(model, runtime::bits_of({runtime::ModelTask::kEmbedder}), route);
  auto request = text_request(body, options, model, runtime::OutputKind::kPooled);
  request.embedding.normalize = get_bool(body, "normalize").value_or(true);
  if (const auto d = get_int(body, "dimensions")) {
    if (*d < 1 || *d > runtime::embedding_size(model))
      throw ApiError(
          ApiErrorKind::kValidation,
          "`dimensions` must be between 1 and " + std::to_string(runtime::embedding_size(model)),
          "dimensions");
    request.embedding.dimensions = static_cast<std::size_t>(*d);
  }
  runtime::apply_long_input(parse_long_input(body), options.long_input, get_bool(body, "truncate"),
                            request);
  return request;
}

runtime::InferenceRequest embed_all_request(const Json& body, const ApiOptions& options,
                                            const runtime::ModelDescription& model,
                                            std::string_view route) {
  require_task(model, runtime::bits_of({runtime::ModelTask::kEmbedder}), route);
  return text_request(body, options, model, runtime::OutputKind::kTokens);
}

runtime::InferenceRequest embed_sparse_request(const Json& body, const ApiOptions& options,
                                               const runtime::ModelDescription& model,
                                               std::string_view route) {
  require_task(model, runtime::bits_of({runtime::ModelTask::kMaskedLm}), route);
  return text_request(body, options, model, runtime::OutputKind::kSparse);
}

PredictInputs predict_request(const Json& body, const ApiOptions& options,
                              const runtime::ModelDescription& model, std::string_view route) {
  require_task(model,
               runtime::bits_of({runtime::ModelTask::kClassifier, runtime::ModelTask::kReranker}),
               route);
  const Json* inputs = get_field(body, "inputs");
  if (!inputs) throw ApiError(ApiErrorKind::kValidation, "missing field `inputs`", "inputs");
  PredictInputs out;
  runtime::InferenceRequest& request = out.request;
  request.model = model.name;
  // TEI's rule: a top-level list of exactly two strings is ONE pair.
  const bool one_pair = inputs->is_array() && inputs->size() == 2 && (*inputs)[0].is_string() &&
                        (*inputs)[1].is_string();
  if (inputs->is_string() || one_pair) {
    request.items.push_back(sequence_item(*inputs));
  } else if (inputs->is_array()) {
    out.batch = true;
    check_list_size(inputs->size(), options.max_client_batch_size, "inputs");
    for (const auto& sequence : *inputs) request.items.push_back(sequence_item(sequence));
  } else {
    bad_predict_inputs();
  }
  parse_truncation(body, options, request);
  runtime::apply_long_input(parse_long_input(body), options.long_input, get_bool(body, "truncate"),
                            request);
  out.raw_scores = get_bool(body, "raw_scores").value_or(false);
  return out;
}

std::vector<RankedLabel> predictions(const runtime::ItemOutput& item, bool raw_scores) {
  const auto scores = raw_scores
                          ? item.values
                          : apply_score_function(item.values.size() == 1 ? ScoreFunction::kSigmoid
                                                                         : ScoreFunction::kSoftmax,
                                                 item.values);
  return rank(scores);
}

RerankInputs rerank_request(const Json& body, const ApiOptions& options,
                            const runtime::ModelDescription& model, std::string_view route) {
  require_task(model, runtime::bits_of({runtime::ModelTask::kReranker}), route);
  const auto query = get_string(body, "query");
  if (!query) throw ApiError(ApiErrorKind::kValidation, "missing field `query`", "query");
  require_non_empty(*query, "query");
  // Before the query is copied into every pair.
  runtime::check_input_bytes(*query, model.max_input_bytes, "the query");
  const Json* texts = get_field(body, "texts");
  if (!texts) throw ApiError(ApiErrorKind::kValidation, "missing field `texts`", "texts");
  if (!texts->is_array())
    throw ApiError(ApiErrorKind::kValidation, "`texts` must be a list of strings", "texts");
  check_list_size(texts->size(), options.max_client_batch_size, "texts");
  RerankInputs out;
  out.request.model = model.name;
  out.texts = std::make_shared<std::vector<std::string>>();
  for (const auto& text : *texts) {
    if (!text.is_string())
      throw ApiError(ApiErrorKind::kValidation, "`texts` must be a list of strings", "texts");
    require_non_empty(text.get_ref<const std::string&>(), "texts");
    runtime::check_input_bytes(text.get_ref<const std::string&>(), model.max_input_bytes, "a text");
    out.texts->push_back(text.get<std::string>());
    out.request.items.push_back(query_document_item(*query, out.texts->back()));
  }
  parse_truncation(body, options, out.request);
  out.request.score_activation = relevance_activation(get_bool(body, "raw_scores").value_or(false));
  out.return_text = get_bool(body, "return_text").value_or(false);
  return out;
}

std::vector<RankedLabel> rerank_ranks(const runtime::InferenceResult& result) {
  std::vector<float> scores;
  scores.reserve(result.items.size());
  for (const auto& item : result.items) scores.push_back(reranker_score(item));
  return rank(scores);
}

std::vector<std::vector<Token>> tokenize(const Json& body, runtime::InferenceService& service,
                                         const ApiOptions& options,
                                         const runtime::ModelDescription& model) {
  bool is_list = false;
  const auto texts = parse_string_inputs(body, options, is_list);
  const bool add_special = get_bool(body, "add_special_tokens").value_or(true);
  // As TEI: the prompt is tokenized with the text, and offsets point into the two joined.
  const std::string_view prompt = runtime::prompt_for(model, get_string(body, "prompt_name"));
  std::vector<std::vector<Token>> out;
  std::string prompted;
  for (const auto& input : texts) {
    const std::string_view text = runtime::with_prompt(prompt, input, prompted);
    const auto encoding = service.tokenize(model.name, text, std::nullopt, add_special);
    const auto starts = code_point_starts(text);
    auto& tokens = out.emplace_back();
    for (std::size_t i = 0; i < encoding.size(); ++i) {
      Token& token = tokens.emplace_back();
      token.id = encoding.ids[i];
      token.special =
          (i < encoding.special_tokens_mask.size() && encoding.special_tokens_mask[i]) ||
          i >= encoding.offsets.size();
      if (token.special) {
        token.text = i < encoding.tokens.size() ? encoding.tokens[i] : std::string();
      } else {
        const auto [cp_start, cp_end] = encoding.offsets[i];
        const std::size_t last = starts.size() - 1;
        token.start = starts[std::min<std::size_t>(cp_start, last)];
        token.stop = starts[std::min<std::size_t>(cp_end, last)];
        token.text = std::string(
            text.substr(token.start, token.stop > token.start ? token.stop - token.start : 0));
      }
    }
  }
  return out;
}

std::vector<std::string> decode(const Json& body, runtime::InferenceService& service,
                                const ApiOptions& options, const runtime::ModelDescription& model) {
  const Json* given = get_field(body, "ids");
  if (!given) throw ApiError(ApiErrorKind::kValidation, "missing field `ids`", "ids");
  if (!given->is_array()) bad_ids();
  // As TEI reads the untagged field: a list of numbers (an empty list included) is one id list.
  std::vector<std::vector<std::int32_t>> lists;
  if (given->empty() || !given->front().is_array()) {
    lists.push_back(id_list(*given));
  } else {
    for (const Json& list : *given) {
      if (!list.is_array()) bad_ids();
      lists.push_back(id_list(list));
    }
  }
  check_batch_size(lists.size(), options.max_client_batch_size);
  const bool skip = get_bool(body, "skip_special_tokens").value_or(true);
  std::vector<std::string> texts;
  for (const auto& ids : lists) texts.push_back(service.decode(model.name, ids, skip));
  return texts;
}

const char* model_dtype(const std::string& precision) {
  // TEI's names for the weights' type; int8 has none there, so it keeps its own.
  if (precision == "bf16") return "bfloat16";
  if (precision == "int8") return "int8";
  return "float32";
}

std::size_t max_input_length(const runtime::ModelDescription& model, const ApiOptions& options) {
  return options.max_input_length && model.max_input_length
             ? std::min<std::size_t>(options.max_input_length, model.max_input_length)
             : static_cast<std::size_t>(model.max_input_length);
}

}  // namespace onepass::api::tei
