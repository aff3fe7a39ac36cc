// KServe v2 REST: JSON tensors into the protocol's typed tensors and back (tensors.h holds what
// they mean, shared with the gRPC transport).
#include "api/kserve_v2/kserve.h"

#include <algorithm>
#include <iterator>
#include <limits>

#include "api/common/api_error.h"
#include "api/common/json_writer.h"
#include "api/common/model_select.h"
#include "api/kserve_v2/tensors.h"

namespace onepass::api::kserve_v2 {

namespace {

[[noreturn]] void invalid(const std::string& message) {
  throw ApiError(ApiErrorKind::kValidation, message);
}

void flatten(const Json& data, std::vector<const Json*>& out, int depth) {
  if (depth > 4) invalid("tensor 'data' is nested too deeply");
  if (data.is_array()) {
    for (const auto& element : data) flatten(element, out, depth + 1);
  } else {
    out.push_back(&data);
  }
}

// One JSON input as a typed tensor: strings for BYTES, integers for INT64/INT32; anything else
// marks it mistyped, which tensors.cpp reports once it knows what the tensor is for.
InputTensor parse_tensor(const Json& input) {
  if (!input.is_object()) invalid("each input must be an object");
  InputTensor tensor;
  const auto name = get_string(input, "name");
  const auto datatype = get_string(input, "datatype");
  const Json* shape = get_field(input, "shape");
  const Json* data = get_field(input, "data");
  if (!name || !datatype || !shape || !data)
    invalid("each input needs 'name', 'shape', 'datatype' and 'data'");
  tensor.name = *name;
  tensor.datatype = *datatype;
  if (!shape->is_array() || shape->empty() || shape->size() > 4)
    invalid(shown_input(tensor.name) + ": 'shape' must be a list of 1 to 4 sizes");
  for (const auto& dim : *shape) {
    if (!dim.is_number_integer() || dim.get<std::int64_t>() < 0 ||
        dim.get<std::int64_t>() > (1 << 24))
      invalid(shown_input(tensor.name) + ": 'shape' must hold non-negative integers");
    tensor.shape.push_back(dim.get<std::int64_t>());
  }
  const std::int64_t count = element_count(tensor.name, tensor.shape);
  std::vector<const Json*> values;
  flatten(*data, values, 0);
  if (static_cast<std::int64_t>(values.size()) != count)
    invalid(shown_input(tensor.name) + ": 'data' holds " + std::to_string(values.size()) +
            " values but 'shape' says " + std::to_string(count));
  const bool bytes = tensor.datatype == "BYTES";
  const bool integers = tensor.datatype == "INT64" || tensor.datatype == "INT32";
  for (const Json* v : values) {
    if (bytes && v->is_string()) {
      tensor.bytes.push_back(v->get<std::string>());
    } else if (integers && v->is_number_integer()) {
      // Past int64: kept just outside the int32 range, which the range check names.
      tensor.integers.push_back(v->is_number_unsigned() && v->get<std::uint64_t>() > INT32_MAX
                                    ? std::int64_t{INT32_MAX} + 1
                                    : v->get<std::int64_t>());
    } else {
      tensor.mistyped = true;
    }
  }
  return tensor;
}

runtime::ModelDescription model_for(Call& call) {
  auto model = select_model(call.service, call.path_model);
  call.reply.set_model(model.name);
  return model;
}

void write_io(JsonWriter& json, const TensorMetadata& tensor) {
  json.begin_object()
      .key("name")
      .value(tensor.name)
      .key("datatype")
      .value(tensor.datatype)
      .key("shape")
      .begin_array();
  for (const auto d : tensor.shape) json.value(d);
  json.end_array().end_object();
}

void write_output(JsonWriter& json, const OutputTensor& tensor) {
  json.begin_object().key("name").value(tensor.name).key("shape").begin_array();
  for (const auto d : tensor.shape) json.value(d);
  json.end_array().key("datatype").value(tensor.datatype).key("data").begin_array();
  for (const float v : tensor.fp32) json.value(v);
  for (const std::int64_t v : tensor.int64) json.value(v);
  for (const auto& v : tensor.bytes) json.value(v);
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
  for (const auto& tensor : input_metadata()) write_io(json, tensor);
  json.end_array().key("outputs").begin_array();
  for (const auto& tensor : output_metadata(model)) write_io(json, tensor);
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
  InferInputs tensors;
  for (const auto& input : *inputs) add_input(tensors, parse_tensor(input));
  const std::string id = get_string(body, "id").value_or("");
  std::vector<std::string> requested;
  if (const Json* outputs = get_field(body, "outputs")) {
    if (!outputs->is_array()) invalid("'outputs' must be a list");
    for (const auto& output : *outputs) {
      // A nameless entry is an unknown output: "" is no output's name.
      requested.push_back(
          (output.is_object() ? get_string(output, "name") : std::nullopt).value_or(""));
    }
  }
  const Json* parameters = get_field(body, "parameters");
  if (parameters && !parameters->is_object()) invalid("'parameters' must be an object");
  auto prepared = prepare_infer(model, call.options, tensors, std::move(requested),
                                parameters ? *parameters : Json::object());
  submit_and_reply(call.service, std::move(prepared.request), call.reply,
                   [name = model.name, id,
                    outputs = std::move(prepared.outputs)](runtime::InferenceResult& result) {
                     JsonWriter json;
                     json.begin_object().key("model_name").value(name).key("id").value(id);
                     json.key("outputs").begin_array();
                     for (const auto& tensor : outputs(result)) write_output(json, tensor);
                     json.end_array().end_object();
                     return json_response(json.take());
                   });
}

}  // namespace onepass::api::kserve_v2
