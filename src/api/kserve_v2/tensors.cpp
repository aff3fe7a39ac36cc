// Text inputs are tokenized on the server; tensor inputs arrive padded to a common length and
// the attention mask tells which positions are padding: those are removed here, so the engine
// only ever sees each sequence's real tokens.
#include "api/kserve_v2/tensors.h"

#include <algorithm>
#include <iterator>
#include <limits>

#include "api/common/api_error.h"
#include "api/common/task_guard.h"
#include "api/kserve_v2/token_outputs.h"
#include "runtime/long_input.h"

namespace onepass::api::kserve_v2 {

namespace {

[[noreturn]] void invalid(const std::string& message) {
  throw ApiError(ApiErrorKind::kValidation, message);
}

std::string shown(const InputTensor& tensor) { return shown_input(tensor.name); }

std::vector<std::string> text_values(const InputTensor& tensor) {
  if (tensor.datatype != "BYTES") invalid(shown(tensor) + " must have datatype BYTES");
  if (tensor.shape.size() > 2 || (tensor.shape.size() == 2 && tensor.shape[1] != 1))
    invalid(shown(tensor) + " must have shape [n] or [n, 1]");
  if (tensor.mistyped) invalid(shown(tensor) + " must hold strings");
  return tensor.bytes;
}

std::vector<std::int32_t> int_values(const InputTensor& tensor, std::int64_t batch,
                                     std::int64_t length) {
  if (tensor.datatype != "INT64" && tensor.datatype != "INT32")
    invalid(shown(tensor) + " must have datatype INT64 or INT32");
  if (tensor.shape.size() != 2 || tensor.shape[0] != batch || tensor.shape[1] != length)
    invalid(shown(tensor) + " must have shape [" + std::to_string(batch) + ", " +
            std::to_string(length) + "]");
  if (tensor.mistyped) invalid(shown(tensor) + " must hold integers");
  std::vector<std::int32_t> out;
  out.reserve(tensor.integers.size());
  for (const std::int64_t value : tensor.integers) {
    if (value < std::numeric_limits<std::int32_t>::min() || value > INT32_MAX)
      throw ApiError(ApiErrorKind::kInvalidInput,
                     shown(tensor) + " holds a value outside the int32 range");
    out.push_back(static_cast<std::int32_t>(value));
  }
  return out;
}

const char* output_name(const runtime::ModelDescription& model) {
  if (model.task == runtime::ModelTask::kEmbedder) return "embeddings";
  if (model.task == runtime::ModelTask::kMaskedLm) return "sparse_embeddings";
  return "logits";
}

std::int64_t output_width(const runtime::ModelDescription& model) {
  if (model.task == runtime::ModelTask::kEmbedder) return runtime::embedding_size(model);
  // The SPLADE vector, dense: one value per vocabulary entry, most of them 0.
  if (model.task == runtime::ModelTask::kMaskedLm) return model.info.vocab_size;
  return model.info.num_labels;
}

void check_requested(const runtime::ModelDescription& model,
                     const std::vector<std::string>& requested) {
  const bool token_classifier = model.task == runtime::ModelTask::kTokenClassifier;
  const bool question_answerer = model.task == runtime::ModelTask::kQuestionAnswerer;
  const auto listed = [](const auto& names, const std::string& name) {
    return std::find(std::begin(names), std::end(names), name) != std::end(names);
  };
  for (const auto& name : requested) {
    const bool known = token_classifier    ? listed(kTokenLogitsOutputs, name)
                       : question_answerer ? listed(kAnswerLogitsOutputs, name)
                                           : name == output_name(model);
    if (!known)
      invalid(token_classifier ? "unknown output; this model has 'logits', 'attention_mask', "
                                 "'offset_mapping' and 'entities'"
              : question_answerer
                  ? "unknown output; this model has 'start_logits', 'end_logits' and "
                    "'attention_mask'"
                  : std::string("unknown output; this model has '") + output_name(model) + "'");
  }
}

}  // namespace

std::string shown_input(const std::string& name) { return "input " + quote_client_text(name); }

std::int64_t element_count(const std::string& name, const std::vector<std::int64_t>& shape) {
  if (shape.empty() || shape.size() > 4)
    invalid(shown_input(name) + ": 'shape' must be a list of 1 to 4 sizes");
  std::int64_t count = 1;
  for (const auto dim : shape) {
    if (dim < 0 || dim > (1 << 24))
      invalid(shown_input(name) + ": 'shape' must hold non-negative integers");
    count *= dim;
    if (count > (1 << 24)) invalid(shown_input(name) + " is too large");
  }
  return count;
}

void add_input(InferInputs& inputs, InputTensor tensor) {
  std::optional<InputTensor>* slot = nullptr;
  if (tensor.name == "text")
    slot = &inputs.text;
  else if (tensor.name == "text_pair")
    slot = &inputs.text_pair;
  else if (tensor.name == "input_ids")
    slot = &inputs.input_ids;
  else if (tensor.name == "attention_mask")
    slot = &inputs.attention_mask;
  else if (tensor.name == "token_type_ids")
    slot = &inputs.token_type_ids;
  else
    invalid("unknown " + shown(tensor));
  if (*slot) invalid(shown(tensor) + " is given twice");
  *slot = std::move(tensor);
}

std::vector<TensorMetadata> input_metadata() {
  return {{"text", "BYTES", {-1}},
          {"text_pair", "BYTES", {-1}},
          {"input_ids", "INT64", {-1, -1}},
          {"attention_mask", "INT64", {-1, -1}},
          {"token_type_ids", "INT64", {-1, -1}}};
}

std::vector<TensorMetadata> output_metadata(const runtime::ModelDescription& model) {
  if (model.task == runtime::ModelTask::kTokenClassifier)
    return {{"logits", "FP32", {-1, -1, output_width(model)}},
            {"attention_mask", "INT64", {-1, -1}},
            {"offset_mapping", "INT64", {-1, -1, 2}},
            {"entities", "BYTES", {-1}}};
  if (model.task == runtime::ModelTask::kQuestionAnswerer)
    return {{"start_logits", "FP32", {-1, -1}},
            {"end_logits", "FP32", {-1, -1}},
            {"attention_mask", "INT64", {-1, -1}}};
  return {{output_name(model), "FP32", {-1, output_width(model)}}};
}

PreparedInfer prepare_infer(const runtime::ModelDescription& model, const ApiOptions& options,
                            const InferInputs& inputs, std::vector<std::string> requested,
                            const Json& parameters) {
  // The protocol's inputs are texts or ids; an extract model (GLiNER) needs labels as well,
  // which no v2 input carries.
  require_task(
      model,
      runtime::bits_of({runtime::ModelTask::kClassifier, runtime::ModelTask::kReranker,
                        runtime::ModelTask::kEmbedder, runtime::ModelTask::kTokenClassifier,
                        runtime::ModelTask::kMaskedLm, runtime::ModelTask::kQuestionAnswerer}),
      "KServe v2 inference");
  check_requested(model, requested);
  runtime::InferenceRequest request;
  request.model = model.name;
  request.output = model.task == runtime::ModelTask::kEmbedder   ? runtime::OutputKind::kPooled
                   : model.task == runtime::ModelTask::kMaskedLm ? runtime::OutputKind::kSparse
                                                                 : runtime::OutputKind::kLogits;
  request.truncate = options.auto_truncate;
  runtime::apply_long_input({}, options.long_input, std::nullopt,
                            request);  // --long-input; ids never chunk
  const auto& [text, text_pair, input_ids, attention_mask, token_type_ids] = inputs;
  if (text && input_ids) invalid("give either 'text' or 'input_ids', not both");
  if (text) {
    const auto texts = text_values(*text);
    std::vector<std::string> pairs;
    if (text_pair) {
      pairs = text_values(*text_pair);
      if (pairs.size() != texts.size()) invalid("'text_pair' must have as many values as 'text'");
    }
    check_batch_size(texts.size(), options.max_client_batch_size);
    for (std::size_t i = 0; i < texts.size(); ++i) {
      runtime::InferenceItem item;
      item.text = texts[i];
      if (text_pair) item.text_pair = pairs[i];
      request.items.push_back(std::move(item));
    }
  } else if (input_ids) {
    if (text_pair) invalid("'text_pair' needs 'text'");
    if (input_ids->shape.size() != 2) invalid("input 'input_ids' must have shape [n, sequence]");
    const std::int64_t batch = input_ids->shape[0];
    const std::int64_t length = input_ids->shape[1];
    check_batch_size(static_cast<std::size_t>(batch), options.max_client_batch_size);
    const auto ids = int_values(*input_ids, batch, length);
    const auto mask =
        attention_mask ? int_values(*attention_mask, batch, length) : std::vector<std::int32_t>{};
    const auto types =
        token_type_ids ? int_values(*token_type_ids, batch, length) : std::vector<std::int32_t>{};
    for (std::int64_t b = 0; b < batch; ++b) {
      runtime::InferenceItem item;
      item.pretokenized = true;
      for (std::int64_t t = 0; t < length; ++t) {
        const auto at = static_cast<std::size_t>(b * length + t);
        if (!mask.empty() && mask[at] == 0) continue;
        item.input_ids.push_back(ids[at]);
        if (!types.empty()) item.token_type_ids.push_back(types[at]);
      }
      if (item.input_ids.empty()) invalid("sequence " + std::to_string(b) + " has no tokens");
      request.items.push_back(std::move(item));
    }
  } else {
    invalid("inputs need 'text' (BYTES) or 'input_ids' (INT64)");
  }
  if (model.task == runtime::ModelTask::kQuestionAnswerer)
    return prepare_answer_logits(std::move(request), std::move(requested));
  if (model.task == runtime::ModelTask::kTokenClassifier)
    return prepare_token_logits(model, std::move(request), std::move(requested), parameters);
  const std::int64_t width = output_width(model);
  PreparedInfer prepared;
  prepared.request = std::move(request);
  prepared.outputs = [name = std::string(output_name(model)),
                      width](runtime::InferenceResult& result) {
    OutputTensor out;
    out.name = name;
    out.datatype = "FP32";
    out.shape = {static_cast<std::int64_t>(result.items.size()), width};
    out.fp32.reserve(result.items.size() * static_cast<std::size_t>(width));
    for (const auto& item : result.items) {
      if (static_cast<std::int64_t>(item.values.size()) != width)
        throw ApiError(ApiErrorKind::kInternal, "output width mismatch");
      out.fp32.insert(out.fp32.end(), item.values.begin(), item.values.end());
    }
    std::vector<OutputTensor> outputs;
    outputs.push_back(std::move(out));
    return outputs;
  };
  return prepared;
}

}  // namespace onepass::api::kserve_v2
