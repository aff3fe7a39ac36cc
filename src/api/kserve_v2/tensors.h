// The Open Inference Protocol v2's tensor logic, shared by its transports (REST in kserve.cpp,
// gRPC in api/kserve_grpc): named, typed input tensors become one runtime::InferenceRequest, and
// an InferenceResult becomes the named output tensors with their shapes. A transport only decodes
// its encoding into InputTensors (JSON arrays; protobuf contents or raw bytes) and encodes the
// OutputTensors back; the names, shapes, datatypes, checks and error messages live here once.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "api/common/call.h"
#include "api/common/json_request.h"
#include "runtime/service.h"

namespace onepass::api::kserve_v2 {

// One input as the client sent it. A transport fills the element list of the datatype's kind:
// `bytes` for BYTES, `integers` for INT64 and INT32; an element that is not of that kind (a
// number in a BYTES tensor of JSON) sets `mistyped`, which the checks here report.
struct InputTensor {
  std::string name;
  std::string datatype;
  std::vector<std::int64_t> shape;
  std::vector<std::string> bytes;
  // Values past the int32 range are kept (clamped to int64), so that the range error names them.
  std::vector<std::int64_t> integers;
  bool mistyped = false;
};

// The inputs onepass takes, by name; the transport adds each tensor with add_input().
struct InferInputs {
  std::optional<InputTensor> text, text_pair, input_ids, attention_mask, token_type_ids;
};

// ApiError kValidation for an unknown name or a name given twice.
void add_input(InferInputs& inputs, InputTensor tensor);

// "input 'text'": the name is the client's, so a message quotes a short, escaped prefix of it.
std::string shown_input(const std::string& name);

// Elements a tensor of `shape` holds; ApiError kValidation past the size limits (1 to 4 dims, at
// most 2^24 elements, non-negative sizes).
std::int64_t element_count(const std::string& name, const std::vector<std::int64_t>& shape);

// One output, its elements in the field of its datatype: FP32 `fp32`, INT64 `int64`, BYTES
// `bytes` (the entities, as JSON text).
struct OutputTensor {
  std::string name;
  std::string datatype;
  std::vector<std::int64_t> shape;
  std::vector<float> fp32;
  std::vector<std::int64_t> int64;
  std::vector<std::string> bytes;
};

// A tensor's name, datatype and shape (-1: any size) in a model's metadata.
struct TensorMetadata {
  const char* name;
  const char* datatype;
  std::vector<std::int64_t> shape;
};
std::vector<TensorMetadata> input_metadata();
std::vector<TensorMetadata> output_metadata(const runtime::ModelDescription& model);

// What one infer call becomes: the request to submit, and how its result reads back as the
// output tensors, in the order the model lists them (throws ApiError, which the transport's
// completion maps). `outputs` runs on a runtime thread, once.
struct PreparedInfer {
  runtime::InferenceRequest request;
  std::function<std::vector<OutputTensor>(runtime::InferenceResult&)> outputs;
};

// `requested`: the output names the client asked for (empty: every output the inputs allow);
// `parameters`: the request's parameters as a JSON object (a token classifier's
// aggregation_strategy and ignore_labels). ApiError kValidation (REST 400, gRPC
// INVALID_ARGUMENT) for anything the model cannot answer as asked.
PreparedInfer prepare_infer(const runtime::ModelDescription& model, const ApiOptions& options,
                            const InferInputs& inputs, std::vector<std::string> requested,
                            const Json& parameters);

}  // namespace onepass::api::kserve_v2
