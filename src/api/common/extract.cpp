#include "api/common/extract.h"

#include <memory>

#include "api/common/api_error.h"
#include "api/common/json_writer.h"
#include "api/common/reply.h"

namespace onepass::api {
namespace {

[[noreturn]] void invalid(const std::string& message, const char* field) {
  throw ApiError(ApiErrorKind::kValidation, message, field);
}

// The body's field, else the parameters' (null when neither has it).
const Json* field_of(const Json& body, const Json* parameters, const char* name) {
  if (const Json* value = get_field(body, name)) return value;
  return parameters != nullptr ? get_field(*parameters, name) : nullptr;
}

std::vector<std::string> read_texts(const Json& value, const char* field, bool& is_list,
                                    const ApiOptions& options) {
  std::vector<std::string> texts;
  if (value.is_string()) {
    is_list = false;
    texts.push_back(value.get<std::string>());
    return texts;
  }
  if (!value.is_array())
    invalid(std::string("`") + field + "` must be a string or a list of strings", field);
  is_list = true;
  if (value.empty()) invalid(std::string("`") + field + "` cannot be an empty list", field);
  if (value.size() > options.max_client_batch_size)
    throw ApiError(ApiErrorKind::kTooManyInputs,
                   "batch size " + std::to_string(value.size()) + " > maximum allowed batch size " +
                       std::to_string(options.max_client_batch_size),
                   field);
  for (const Json& element : value) {
    if (!element.is_string())
      invalid(std::string("`") + field + "` must be a string or a list of strings", field);
    texts.push_back(element.get<std::string>());
  }
  return texts;
}

void write_entities(JsonWriter& json, const std::vector<runtime::ExtractedEntity>& entities) {
  json.begin_object().key("entities").begin_array();
  for (const auto& e : entities) {
    json.begin_object()
        .key("start")
        .value(static_cast<std::int64_t>(e.start))
        .key("end")
        .value(static_cast<std::int64_t>(e.end))
        .key("text")
        .value(e.text)
        .key("label")
        .value(e.label)
        .key("score")
        .value(e.score)
        .end_object();
  }
  json.end_array().end_object();
}

}  // namespace

ExtractRequest parse_extract_request(const Json& body, const Json* parameters,
                                     const runtime::ModelDescription& model,
                                     const ApiOptions& options) {
  if (!body.is_object()) invalid("the body must be a JSON object", "text");
  if (parameters != nullptr && !parameters->is_object())
    invalid("`parameters` must be an object", "parameters");
  ExtractRequest out;
  const char* text_field = "text";
  const Json* texts = get_field(body, "text");
  if (texts == nullptr) texts = get_field(body, text_field = "texts");
  if (texts == nullptr) texts = get_field(body, text_field = "inputs");
  if (texts == nullptr) invalid("missing field `text`", "text");
  out.texts = read_texts(*texts, text_field, out.is_list, options);

  const Json* labels = field_of(body, parameters, "labels");
  if (labels == nullptr) invalid("missing field `labels`: the entity types to extract", "labels");
  if (labels->is_string()) {
    out.options.labels.push_back(labels->get<std::string>());
  } else if (labels->is_array()) {
    // Checked before copying: a list of a million labels is refused by its size alone.
    if (labels->size() > runtime::kMaxExtractLabels)
      invalid("`labels` has " + std::to_string(labels->size()) + " entries, more than " +
                  std::to_string(runtime::kMaxExtractLabels),
              "labels");
    for (const Json& label : *labels) {
      if (!label.is_string()) invalid("`labels` must be a list of strings", "labels");
      out.options.labels.push_back(label.get<std::string>());
    }
  } else {
    invalid("`labels` must be a list of strings", "labels");
  }
  if (const Json* threshold = field_of(body, parameters, "threshold");
      threshold != nullptr && !threshold->is_null()) {
    if (!threshold->is_number()) invalid("`threshold` must be a number", "threshold");
    out.options.threshold = threshold->get<float>();
  }
  for (auto [name, flag] : {std::pair{"flat_ner", &out.options.flat_ner},
                            std::pair{"multi_label", &out.options.multi_label}}) {
    const Json* value = field_of(body, parameters, name);
    if (value == nullptr || value->is_null()) continue;
    if (!value->is_boolean()) invalid(std::string("`") + name + "` must be true or false", name);
    *flag = value->get<bool>();
  }
  // predict_entities' own treatment of a long text (the words past max_len unread) is the only
  // one served yet; a client asking for windows is told so rather than answered differently.
  if (const Json* long_input = field_of(body, parameters, "long_input");
      long_input != nullptr && !long_input->is_null())
    invalid(
        "`long_input` is not supported for entity extraction yet: a text's words past the "
        "model's max_len are not looked at, as in GLiNER",
        "long_input");
  runtime::check_extract_options(out.options, model);
  return out;
}

void reply_extract(Call& call, const runtime::ModelDescription& model, ExtractRequest request) {
  runtime::InferenceRequest inference;
  inference.model = model.name;
  inference.output = runtime::OutputKind::kSpans;
  inference.extract = request.options;
  for (const std::string& text : request.texts) {
    runtime::InferenceItem item;
    item.text = text;
    inference.items.push_back(std::move(item));
  }
  auto texts = std::make_shared<std::vector<std::string>>(std::move(request.texts));
  const runtime::ExtractOptions options = request.options;
  const int max_width = model.info.span.max_width;
  const bool is_list = request.is_list;
  submit_and_reply(call.service, std::move(inference), call.reply,
                   [texts, options, max_width, is_list](runtime::InferenceResult& result) {
                     JsonWriter json;
                     if (is_list) json.begin_array();
                     for (std::size_t i = 0; i < texts->size(); ++i)
                       write_entities(json, runtime::decode_entities((*texts)[i], result.items[i],
                                                                     options, max_width));
                     if (is_list) json.end_array();
                     return json_response(json.take());
                   });
}

}  // namespace onepass::api
