#include "api/common/extract.h"

#include <memory>

#include "api/common/api_error.h"
#include "api/common/json_writer.h"
#include "api/common/long_input.h"
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
  check_list_size(value.size(), options.max_client_batch_size, field);
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
  // A long text: by default as predict_entities reads it (the words past max_len unread);
  // "chunk" reads it all in windows, "reject" refuses it.
  runtime::LongInputRequest long_input;
  if (parameters != nullptr) long_input = parse_long_input(*parameters);
  const runtime::LongInputRequest in_body = parse_long_input(body);
  if (in_body.policy) long_input.policy = in_body.policy;
  if (in_body.stride) long_input.stride = in_body.stride;
  const auto max_words = static_cast<std::size_t>(model.info.span.max_words);
  if (long_input.policy == runtime::LongInput::kChunk) {
    const std::size_t stride =
        long_input.stride.value_or(runtime::default_extract_stride(max_words));
    std::size_t items = 0;
    for (const std::string& text : out.texts) {
      out.windows.push_back(runtime::extract_windows(text, max_words, stride));
      items += out.windows.back().size();
    }
    if (items > options.max_client_batch_size)
      throw ApiError(ApiErrorKind::kTooManyInputs,
                     "the texts need " + std::to_string(items) + " windows, more than the " +
                         std::to_string(options.max_client_batch_size) +
                         " allowed per request (--max-client-batch-size counts windows)",
                     "long_input");
  } else if (long_input.policy == runtime::LongInput::kReject) {
    for (const std::string& text : out.texts) {
      const std::size_t words = runtime::split_words(text).size();
      if (words > max_words)
        invalid("a text has " + std::to_string(words) + " words, more than the model's max_len " +
                    "of " + std::to_string(max_words) + " (long_input is reject)",
                "long_input");
    }
  }
  runtime::check_extract_options(out.options, model);
  return out;
}

void reply_extract(Call& call, const runtime::ModelDescription& model, ExtractRequest request) {
  runtime::InferenceRequest inference;
  inference.model = model.name;
  inference.output = runtime::OutputKind::kSpans;
  inference.extract = request.options;
  if (request.windows.empty()) {
    for (const std::string& text : request.texts)
      request.windows.push_back({runtime::ExtractWindow{0, 0, text.size()}});
  }
  for (std::size_t t = 0; t < request.texts.size(); ++t) {
    const std::string& text = request.texts[t];
    for (const runtime::ExtractWindow& window : request.windows[t]) {
      runtime::InferenceItem item;
      item.text = request.windows[t].size() == 1
                      ? text
                      : text.substr(window.byte_begin, window.byte_end - window.byte_begin);
      inference.items.push_back(std::move(item));
    }
  }
  auto shared = std::make_shared<ExtractRequest>(std::move(request));
  const int max_width = model.info.span.max_width;
  submit_and_reply(call.service, std::move(inference), call.reply,
                   [shared, max_width](runtime::InferenceResult& result) {
                     JsonWriter json;
                     if (shared->is_list) json.begin_array();
                     std::size_t item = 0;
                     for (std::size_t t = 0; t < shared->texts.size(); ++t) {
                       std::vector<runtime::WindowSpans> spans;
                       for (const runtime::ExtractWindow& window : shared->windows[t])
                         spans.push_back(runtime::WindowSpans{&result.items[item++], window.start});
                       write_entities(json, runtime::decode_windows(shared->texts[t], spans,
                                                                    shared->options, max_width));
                     }
                     if (shared->is_list) json.end_array();
                     return json_response(json.take());
                   });
}

}  // namespace onepass::api
