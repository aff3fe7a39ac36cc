// KServe v2 REST. Text inputs are tokenized on the server; tensor inputs arrive padded to a
// common length and the attention mask tells which positions are padding: those are removed
// here, so the engine only ever sees each sequence's real tokens.
#include "api/kserve_v2/kserve.h"

#include <algorithm>
#include <iterator>
#include <limits>

#include "api/common/api_error.h"
#include "api/common/json_writer.h"
#include "api/common/model_select.h"
#include "api/kserve_v2/token_outputs.h"
#include "runtime/long_input.h"

namespace onepass::api::kserve_v2 {

namespace {

[[noreturn]] void invalid(const std::string& message) {
  throw ApiError(ApiErrorKind::kValidation, message);
}

struct Tensor {
  std::string name;
  std::string datatype;
  std::vector<std::int64_t> shape;
  std::vector<const Json*> data;  // flattened, row-major
};

// "input 'text'": the name is the client's, so a message quotes a short, escaped prefix of it.
std::string shown(const Tensor& tensor) { return "input " + quote_client_text(tensor.name); }

void flatten(const Json& data, std::vector<const Json*>& out, int depth) {
  if (depth > 4) invalid("tensor 'data' is nested too deeply");
  if (data.is_array()) {
    for (const auto& element : data) flatten(element, out, depth + 1);
  } else {
    out.push_back(&data);
  }
}

Tensor parse_tensor(const Json& input) {
  if (!input.is_object()) invalid("each input must be an object");
  Tensor tensor;
  const auto name = get_string(input, "name");
  const auto datatype = get_string(input, "datatype");
  const Json* shape = get_field(input, "shape");
  const Json* data = get_field(input, "data");
  if (!name || !datatype || !shape || !data)
    invalid("each input needs 'name', 'shape', 'datatype' and 'data'");
  tensor.name = *name;
  tensor.datatype = *datatype;
  if (!shape->is_array() || shape->empty() || shape->size() > 4)
    invalid(shown(tensor) + ": 'shape' must be a list of 1 to 4 sizes");
  std::int64_t count = 1;
  for (const auto& dim : *shape) {
    if (!dim.is_number_integer() || dim.get<std::int64_t>() < 0 ||
        dim.get<std::int64_t>() > (1 << 24))
      invalid(shown(tensor) + ": 'shape' must hold non-negative integers");
    tensor.shape.push_back(dim.get<std::int64_t>());
    count *= tensor.shape.back();
    if (count > (1 << 24)) invalid(shown(tensor) + " is too large");
  }
  flatten(*data, tensor.data, 0);
  if (static_cast<std::int64_t>(tensor.data.size()) != count)
    invalid(shown(tensor) + ": 'data' holds " + std::to_string(tensor.data.size()) +
            " values but 'shape' says " + std::to_string(count));
  return tensor;
}

std::vector<std::string> text_values(const Tensor& tensor) {
  if (tensor.datatype != "BYTES") invalid(shown(tensor) + " must have datatype BYTES");
  if (tensor.shape.size() > 2 || (tensor.shape.size() == 2 && tensor.shape[1] != 1))
    invalid(shown(tensor) + " must have shape [n] or [n, 1]");
  std::vector<std::string> out;
  for (const Json* v : tensor.data) {
    if (!v->is_string()) invalid(shown(tensor) + " must hold strings");
    out.push_back(v->get<std::string>());
  }
  return out;
}

std::vector<std::int32_t> int_values(const Tensor& tensor, std::int64_t batch,
                                     std::int64_t length) {
  if (tensor.datatype != "INT64" && tensor.datatype != "INT32")
    invalid(shown(tensor) + " must have datatype INT64 or INT32");
  if (tensor.shape.size() != 2 || tensor.shape[0] != batch || tensor.shape[1] != length)
    invalid(shown(tensor) + " must have shape [" + std::to_string(batch) + ", " +
            std::to_string(length) + "]");
  std::vector<std::int32_t> out;
  out.reserve(tensor.data.size());
  for (const Json* v : tensor.data) {
    if (!v->is_number_integer()) invalid(shown(tensor) + " must hold integers");
    const auto value = v->is_number_unsigned() && v->get<std::uint64_t>() > INT32_MAX
                           ? std::int64_t{INT32_MAX} + 1
                           : v->get<std::int64_t>();
    if (value < std::numeric_limits<std::int32_t>::min() || value > INT32_MAX)
      throw ApiError(ApiErrorKind::kInvalidInput,
                     shown(tensor) + " holds a value outside the int32 range");
    out.push_back(static_cast<std::int32_t>(value));
  }
  return out;
}

runtime::ModelDescription model_for(Call& call) {
  auto model = select_model(call.service, call.path_model);
  call.reply.set_model(model.name);
  return model;
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

void write_io(JsonWriter& json, const char* name, const char* datatype,
              std::initializer_list<std::int64_t> shape) {
  json.begin_object()
      .key("name")
      .value(name)
      .key("datatype")
      .value(datatype)
      .key("shape")
      .begin_array();
  for (const auto d : shape) json.value(d);
  json.end_array().end_object();
}

}  // namespace

void handle_server_metadata(Call& call) {
  JsonWriter json;
  json.begin_object()
      .key("name")
      .value("onepass")
      .key("version")
      .value(call.options.version)
      .key("extensions")
      .begin_array()
      .end_array()
      .end_object();
  call.reply.json(json.take());
}

void handle_model_metadata(Call& call) {
  const auto model = model_for(call);
  JsonWriter json;
  json.begin_object().key("name").value(model.name);
  json.key("versions").begin_array().value("1").end_array();
  json.key("platform").value("onepass");
  json.key("inputs").begin_array();
  write_io(json, "text", "BYTES", {-1});
  write_io(json, "text_pair", "BYTES", {-1});
  write_io(json, "input_ids", "INT64", {-1, -1});
  write_io(json, "attention_mask", "INT64", {-1, -1});
  write_io(json, "token_type_ids", "INT64", {-1, -1});
  json.end_array().key("outputs").begin_array();
  if (model.task == runtime::ModelTask::kTokenClassifier) {
    write_io(json, "logits", "FP32", {-1, -1, output_width(model)});
    write_io(json, "attention_mask", "INT64", {-1, -1});
    write_io(json, "offset_mapping", "INT64", {-1, -1, 2});
    write_io(json, "entities", "BYTES", {-1});
  } else if (model.task == runtime::ModelTask::kQuestionAnswerer) {
    write_io(json, "start_logits", "FP32", {-1, -1});
    write_io(json, "end_logits", "FP32", {-1, -1});
    write_io(json, "attention_mask", "INT64", {-1, -1});
  } else {
    write_io(json, output_name(model), "FP32", {-1, output_width(model)});
  }
  json.end_array().end_object();
  call.reply.json(json.take());
}

void handle_model_ready(Call& call) {
  // A model that failed to load is not ready: {"ready": false}, not an error.
  const auto model = select_model_in_any_state(call.service, call.path_model);
  call.reply.set_model(model.name);
  JsonWriter json;
  json.begin_object()
      .key("name")
      .value(model.name)
      .key("ready")
      .value(model.state == runtime::ModelState::kReady)
      .end_object();
  call.reply.json(json.take());
}

void handle_live(Call& call) {
  http::Response response;
  response.content_type.clear();
  call.reply.send(std::move(response));
}

void handle_ready(Call& call) {
  // Triton answers readiness with 200 or 400 and no body.
  http::Response response;
  response.content_type.clear();
  response.status = call.service.ready() ? 200 : 400;
  call.reply.send(std::move(response));
}

void handle_infer(Call& call) {
  const Json body = parse_json_body(call.request);
  const auto model = model_for(call);
  if (!body.is_object()) invalid("body must be an object with 'inputs'");
  const Json* inputs = get_field(body, "inputs");
  if (!inputs || !inputs->is_array() || inputs->empty())
    invalid("'inputs' must be a non-empty list");
  std::optional<Tensor> text, text_pair, input_ids, attention_mask, token_type_ids;
  for (const auto& input : *inputs) {
    Tensor tensor = parse_tensor(input);
    std::optional<Tensor>* slot = nullptr;
    if (tensor.name == "text")
      slot = &text;
    else if (tensor.name == "text_pair")
      slot = &text_pair;
    else if (tensor.name == "input_ids")
      slot = &input_ids;
    else if (tensor.name == "attention_mask")
      slot = &attention_mask;
    else if (tensor.name == "token_type_ids")
      slot = &token_type_ids;
    else
      invalid("unknown " + shown(tensor));
    if (*slot) invalid(shown(tensor) + " is given twice");
    *slot = std::move(tensor);
  }
  const std::string id = get_string(body, "id").value_or("");
  const bool token_classifier = model.task == runtime::ModelTask::kTokenClassifier;
  const bool question_answerer = model.task == runtime::ModelTask::kQuestionAnswerer;
  std::vector<std::string> requested;
  if (const Json* outputs = get_field(body, "outputs")) {
    if (!outputs->is_array()) invalid("'outputs' must be a list");
    const auto listed = [](const auto& names, const std::string& name) {
      return std::find(std::begin(names), std::end(names), name) != std::end(names);
    };
    for (const auto& output : *outputs) {
      const auto name = output.is_object() ? get_string(output, "name") : std::nullopt;
      const bool known = name && (token_classifier    ? listed(kTokenLogitsOutputs, *name)
                                  : question_answerer ? listed(kAnswerLogitsOutputs, *name)
                                                      : *name == output_name(model));
      if (!known)
        invalid(token_classifier ? "unknown output; this model has 'logits', 'attention_mask', "
                                   "'offset_mapping' and 'entities'"
                : question_answerer
                    ? "unknown output; this model has 'start_logits', 'end_logits' and "
                      "'attention_mask'"
                    : std::string("unknown output; this model has '") + output_name(model) + "'");
      requested.push_back(*name);
    }
  }
  const Json* parameters = get_field(body, "parameters");
  if (parameters && !parameters->is_object()) invalid("'parameters' must be an object");

  runtime::InferenceRequest request;
  request.model = model.name;
  request.output = model.task == runtime::ModelTask::kEmbedder   ? runtime::OutputKind::kPooled
                   : model.task == runtime::ModelTask::kMaskedLm ? runtime::OutputKind::kSparse
                                                                 : runtime::OutputKind::kLogits;
  request.truncate = call.options.auto_truncate;
  runtime::apply_long_input({}, call.options.long_input, std::nullopt,
                            request);  // --long-input; ids never chunk
  if (text && input_ids) invalid("give either 'text' or 'input_ids', not both");
  if (text) {
    const auto texts = text_values(*text);
    std::vector<std::string> pairs;
    if (text_pair) {
      pairs = text_values(*text_pair);
      if (pairs.size() != texts.size()) invalid("'text_pair' must have as many values as 'text'");
    }
    check_batch_size(texts.size(), call.options.max_client_batch_size);
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
    check_batch_size(static_cast<std::size_t>(batch), call.options.max_client_batch_size);
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
  if (question_answerer)
    return infer_answer_logits(call, model, id, std::move(request), std::move(requested));
  if (token_classifier)
    return infer_token_logits(call, model, id, std::move(request), std::move(requested),
                              parameters ? *parameters : Json::object());
  const std::int64_t width = output_width(model);
  submit_and_reply(call.service, std::move(request), call.reply,
                   [model, id, width](runtime::InferenceResult& result) {
                     JsonWriter json;
                     json.begin_object().key("model_name").value(model.name).key("id").value(id);
                     json.key("outputs").begin_array().begin_object();
                     json.key("name").value(output_name(model));
                     json.key("shape")
                         .begin_array()
                         .value(static_cast<std::int64_t>(result.items.size()))
                         .value(width)
                         .end_array();
                     json.key("datatype").value("FP32").key("data").begin_array();
                     for (const auto& item : result.items) {
                       if (static_cast<std::int64_t>(item.values.size()) != width)
                         throw ApiError(ApiErrorKind::kInternal, "output width mismatch");
                       for (const float v : item.values) json.value(v);
                     }
                     json.end_array().end_object().end_array().end_object();
                     return json_response(json.take());
                   });
}

}  // namespace onepass::api::kserve_v2
