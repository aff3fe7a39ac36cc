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

OutputTensor output(const char* name, const char* datatype, std::vector<std::int64_t> shape) {
  OutputTensor out;
  out.name = name;
  out.datatype = datatype;
  out.shape = std::move(shape);
  return out;
}

// attention_mask INT64 [n, longest]: 1 for each item's real tokens, 0 for the padding.
OutputTensor attention_mask(const runtime::InferenceResult& result, std::size_t width,
                            std::size_t longest) {
  auto out =
      output("attention_mask", "INT64",
             {static_cast<std::int64_t>(result.items.size()), static_cast<std::int64_t>(longest)});
  for (const auto& item : result.items) {
    const std::size_t real = item.values.size() / width;
    for (std::size_t t = 0; t < longest; ++t) out.int64.push_back(t < real ? 1 : 0);
  }
  return out;
}

}  // namespace

PreparedInfer prepare_token_logits(const runtime::ModelDescription& model,
                                   runtime::InferenceRequest request,
                                   std::vector<std::string> requested, const Json& parameters) {
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
  PreparedInfer prepared;
  prepared.request = std::move(request);
  prepared.outputs = [model, requested, params, plan, labels](runtime::InferenceResult& result) {
    const auto n = static_cast<std::int64_t>(result.items.size());
    const std::size_t longest = longest_item(result, labels);
    const auto tokens = static_cast<std::int64_t>(longest);
    std::vector<OutputTensor> outputs;
    if (wants(requested, "logits")) {
      auto out = output("logits", "FP32", {n, tokens, static_cast<std::int64_t>(labels)});
      for (const auto& item : result.items) {
        out.fp32.insert(out.fp32.end(), item.values.begin(), item.values.end());
        out.fp32.resize(out.fp32.size() + longest * labels - item.values.size(), 0.0f);
      }
      outputs.push_back(std::move(out));
    }
    if (wants(requested, "attention_mask"))
      outputs.push_back(attention_mask(result, labels, longest));
    if (wants(requested, "offset_mapping")) {
      auto out = output("offset_mapping", "INT64", {n, tokens, 2});
      for (const auto& item : result.items) {
        const auto& offsets = item.encoding.offsets;
        for (std::size_t t = 0; t < longest; ++t) {
          const bool real = t < offsets.size();
          out.int64.push_back(static_cast<std::int64_t>(real ? offsets[t].first : 0));
          out.int64.push_back(static_cast<std::int64_t>(real ? offsets[t].second : 0));
        }
      }
      outputs.push_back(std::move(out));
    }
    if (wants(requested, "entities")) {
      auto out = output("entities", "BYTES", {n});
      for (const auto& text : *plan) {
        JsonWriter entities;
        write_entities(entities, runtime::entities_of(text, result, model, params));
        out.bytes.push_back(entities.take());
      }
      outputs.push_back(std::move(out));
    }
    return outputs;
  };
  return prepared;
}

PreparedInfer prepare_answer_logits(runtime::InferenceRequest request,
                                    std::vector<std::string> requested) {
  if (requested.empty()) requested = {"start_logits", "end_logits", "attention_mask"};
  request.output = runtime::OutputKind::kTokenLogits;
  PreparedInfer prepared;
  prepared.request = std::move(request);
  prepared.outputs = [requested](runtime::InferenceResult& result) {
    const auto n = static_cast<std::int64_t>(result.items.size());
    const std::size_t longest = longest_item(result, 2);
    const auto tokens = static_cast<std::int64_t>(longest);
    std::vector<OutputTensor> outputs;
    for (const char* name : {"start_logits", "end_logits"}) {
      if (!wants(requested, name)) continue;
      const std::size_t column = name[0] == 's' ? 0 : 1;
      auto out = output(name, "FP32", {n, tokens});
      for (const auto& item : result.items) {
        const std::size_t real = item.values.size() / 2;
        for (std::size_t t = 0; t < longest; ++t)
          out.fp32.push_back(t < real ? item.values[t * 2 + column] : 0.0f);
      }
      outputs.push_back(std::move(out));
    }
    if (wants(requested, "attention_mask")) outputs.push_back(attention_mask(result, 2, longest));
    return outputs;
  };
  return prepared;
}

}  // namespace onepass::api::kserve_v2
