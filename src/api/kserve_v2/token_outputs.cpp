#include "api/kserve_v2/token_outputs.h"

#include <algorithm>
#include <memory>

#include "api/common/api_error.h"
#include "api/common/json_writer.h"
#include "api/common/token_classification.h"

namespace onepass::api::kserve_v2 {

namespace {

[[noreturn]] void invalid(const std::string& message) {
  throw ApiError(ApiErrorKind::kValidation, message);
}

bool wants(const std::vector<std::string>& requested, const std::string& name) {
  return std::find(requested.begin(), requested.end(), name) != requested.end();
}

void begin_output(JsonWriter& json, const char* name, const char* datatype,
                  std::initializer_list<std::int64_t> shape) {
  json.begin_object().key("name").value(name).key("shape").begin_array();
  for (const auto d : shape) json.value(d);
  json.end_array().key("datatype").value(datatype).key("data").begin_array();
}

// The token count of a per-token result's longest item (`width` values a token), the length
// every output is padded to.
std::size_t longest_item(const runtime::InferenceResult& result, std::size_t width) {
  std::size_t longest = 0;
  for (const auto& item : result.items) {
    if (width == 0 || item.values.size() % width != 0)
      throw ApiError(ApiErrorKind::kInternal, "per-token outputs do not make whole tokens");
    longest = std::max(longest, item.values.size() / width);
  }
  return longest;
}

// attention_mask INT64 [n, longest]: 1 for each item's real tokens, 0 for the padding.
void write_attention_mask(JsonWriter& json, const runtime::InferenceResult& result,
                          std::size_t width, std::size_t longest) {
  begin_output(
      json, "attention_mask", "INT64",
      {static_cast<std::int64_t>(result.items.size()), static_cast<std::int64_t>(longest)});
  for (const auto& item : result.items) {
    const std::size_t real = item.values.size() / width;
    for (std::size_t t = 0; t < longest; ++t) json.value(t < real ? 1 : 0);
  }
  json.end_array().end_object();
}

}  // namespace

void infer_token_logits(Call& call, const runtime::ModelDescription& model, const std::string& id,
                        runtime::InferenceRequest request, std::vector<std::string> requested,
                        const Json& parameters) {
  const bool text = !request.items.empty() && !request.items.front().pretokenized;
  for (const auto& item : request.items)
    if (item.text_pair) invalid("a token classifier takes single texts; 'text_pair' is not used");
  for (const auto& name : requested) {
    if (!text && (name == "offset_mapping" || name == "entities"))
      invalid("output '" + name + "' needs 'text' inputs (token ids carry no text)");
  }
  if (requested.empty()) {
    requested = {"logits", "attention_mask"};
    if (text) requested.insert(requested.end(), {"offset_mapping", "entities"});
  }
  const runtime::TokenClassificationOptions params =
      parse_token_classification_parameters(parameters);
  if (params.stride)
    throw ApiError(ApiErrorKind::kValidation,
                   "'stride' is not served on KServe v2 (windows do not make one tensor); use "
                   "/predict_tokens or /invocations",
                   "stride");
  auto plan = std::make_shared<std::vector<runtime::TokenClassificationText>>();
  for (std::size_t i = 0; i < request.items.size(); ++i) {
    runtime::TokenClassificationText entry;
    entry.text = request.items[i].text;
    entry.first_item = i;
    plan->push_back(std::move(entry));
  }
  request.output = runtime::OutputKind::kTokenLogits;
  const auto labels = static_cast<std::size_t>(model.info.num_labels);
  submit_and_reply(
      call.service, std::move(request), call.reply,
      [model, id, requested, params, plan, labels](runtime::InferenceResult& result) {
        const auto n = static_cast<std::int64_t>(result.items.size());
        const std::size_t longest = longest_item(result, labels);
        const auto tokens = static_cast<std::int64_t>(longest);
        JsonWriter json;
        json.begin_object().key("model_name").value(model.name).key("id").value(id);
        json.key("outputs").begin_array();
        if (wants(requested, "logits")) {
          begin_output(json, "logits", "FP32", {n, tokens, static_cast<std::int64_t>(labels)});
          for (const auto& item : result.items) {
            for (const float v : item.values) json.value(v);
            for (std::size_t k = item.values.size(); k < longest * labels; ++k) json.value(0.0f);
          }
          json.end_array().end_object();
        }
        if (wants(requested, "attention_mask")) write_attention_mask(json, result, labels, longest);
        if (wants(requested, "offset_mapping")) {
          begin_output(json, "offset_mapping", "INT64", {n, tokens, 2});
          for (const auto& item : result.items) {
            const auto& offsets = item.encoding.offsets;
            for (std::size_t t = 0; t < longest; ++t) {
              const bool real = t < offsets.size();
              json.value(static_cast<std::int64_t>(real ? offsets[t].first : 0));
              json.value(static_cast<std::int64_t>(real ? offsets[t].second : 0));
            }
          }
          json.end_array().end_object();
        }
        if (wants(requested, "entities")) {
          begin_output(json, "entities", "BYTES", {n});
          for (const auto& text : *plan) {
            JsonWriter entities;
            write_entities(entities, runtime::entities_of(text, result, model, params));
            json.value(entities.take());
          }
          json.end_array().end_object();
        }
        json.end_array().end_object();
        return json_response(json.take());
      });
}

void infer_answer_logits(Call& call, const runtime::ModelDescription& model, const std::string& id,
                         runtime::InferenceRequest request, std::vector<std::string> requested) {
  if (requested.empty()) requested = {"start_logits", "end_logits", "attention_mask"};
  request.output = runtime::OutputKind::kTokenLogits;
  submit_and_reply(call.service, std::move(request), call.reply,
                   [model, id, requested](runtime::InferenceResult& result) {
                     const auto n = static_cast<std::int64_t>(result.items.size());
                     const std::size_t longest = longest_item(result, 2);
                     const auto tokens = static_cast<std::int64_t>(longest);
                     JsonWriter json;
                     json.begin_object().key("model_name").value(model.name).key("id").value(id);
                     json.key("outputs").begin_array();
                     for (const char* name : {"start_logits", "end_logits"}) {
                       if (!wants(requested, name)) continue;
                       const std::size_t column = name[0] == 's' ? 0 : 1;
                       begin_output(json, name, "FP32", {n, tokens});
                       for (const auto& item : result.items) {
                         const std::size_t real = item.values.size() / 2;
                         for (std::size_t t = 0; t < longest; ++t)
                           json.value(t < real ? item.values[t * 2 + column] : 0.0f);
                       }
                       json.end_array().end_object();
                     }
                     if (wants(requested, "attention_mask"))
                       write_attention_mask(json, result, 2, longest);
                     json.end_array().end_object();
                     return json_response(json.take());
                   });
}

}  // namespace onepass::api::kserve_v2
