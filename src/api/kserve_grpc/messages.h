// grpc_predict_v2.proto's messages on the wire (wire.h), read into the protocol's typed tensors
// (api/kserve_v2/tensors.h) and written from them. Field numbers are the published ones; a field
// onepass does not use is skipped, as protobuf skips unknown fields. Nothing here knows what a
// tensor means, and nothing here needs gRPC, so the fuzz build covers it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "api/common/json_request.h"
#include "api/kserve_v2/tensors.h"

namespace onepass::api::kserve_grpc {

// ModelInferRequest. Tensors in `contents` or in `raw_input_contents` (one entry per input, in
// order; a BYTES element there is a 4-byte little-endian length and its bytes).
struct DecodedInfer {
  std::string model_name;
  std::string model_version;
  std::string id;
  kserve_v2::InferInputs inputs;
  std::vector<std::string> requested;  // output names, in the request's order
  Json parameters = Json::object();    // the request's parameters as JSON values
  bool raw = false;                    // the inputs came in raw_input_contents
};

// ApiError kValidation for a malformed message or request: bytes that are not the message,
// counts that disagree with shapes, a raw entry per input missing or cut short, both forms at
// once, an unknown or repeated input name.
DecodedInfer decode_model_infer_request(std::string_view bytes);

// A ModelInferRequest's model_name alone, read before anything else is checked (REST finds the
// model before it reads the inputs, so an unknown model is NOT_FOUND whatever else is wrong);
// empty when the message is too malformed to say.
std::string peek_model_name(std::string_view bytes);

// ModelReadyRequest and ModelMetadataRequest (name 1, version 2); the repository requests'
// model_name is field 1 too, and they have no version.
struct ModelRef {
  std::string name;
  std::string version;
};
ModelRef decode_model_ref(std::string_view bytes);

// ServerLiveResponse, ServerReadyResponse, ModelReadyResponse: one bool, field 1.
std::string encode_flag(bool value);
std::string encode_server_metadata(const std::string& name, const std::string& version);
std::string encode_model_metadata(const std::string& name, const std::string& version,
                                  const std::string& platform,
                                  const std::vector<kserve_v2::TensorMetadata>& inputs,
                                  const std::vector<kserve_v2::TensorMetadata>& outputs);
// ModelInferResponse: outputs in raw_output_contents when `raw`, else in each one's contents.
std::string encode_model_infer_response(const std::string& model_name, const std::string& version,
                                        const std::string& id,
                                        const std::vector<kserve_v2::OutputTensor>& outputs,
                                        bool raw);
// RepositoryModelLoadResponse (isLoaded) and RepositoryModelUnloadResponse (isUnloaded).
std::string encode_repository_answer(const std::string& model_name, bool done);

}  // namespace onepass::api::kserve_grpc
