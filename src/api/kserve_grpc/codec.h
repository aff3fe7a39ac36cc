// The protobuf side of the Open Inference Protocol v2 over gRPC: a ModelInferRequest's tensors
// (in `contents` or in `raw_input_contents`) into the protocol's typed tensors
// (api/kserve_v2/tensors.h), and output tensors back into a ModelInferResponse in the form the
// request used. Nothing here knows what a tensor means.
#pragma once

#include <string>
#include <vector>

#include "api/common/json_request.h"
#include "api/kserve_v2/tensors.h"
#include "grpc_predict_v2.pb.h"

namespace onepass::api::kserve_grpc {

struct DecodedInfer {
  kserve_v2::InferInputs inputs;
  std::vector<std::string> requested;  // output names, in the request's order
  Json parameters = Json::object();    // the request's parameters as JSON
  bool raw = false;                    // the inputs came in raw_input_contents
};

// ApiError kValidation for a malformed request: counts that disagree with shapes, a raw entry
// per input missing or cut short, both forms at once, an unknown or repeated input name.
DecodedInfer decode_infer_request(const inference::ModelInferRequest& request);

// Appends `outputs` to `response`: in raw_output_contents when `raw`, else in each output's
// contents.
void encode_outputs(const std::vector<kserve_v2::OutputTensor>& outputs, bool raw,
                    inference::ModelInferResponse& response);

}  // namespace onepass::api::kserve_grpc
