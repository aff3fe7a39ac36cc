// libFuzzer target: KServe v2 gRPC ModelInferRequest messages (protobuf wire bytes) through the
// message decoder (api/kserve_grpc/messages.h) and the protocol's tensor logic, once per model
// task; what decodes is written back as a response in both forms. A malformed message must be
// an ApiError (INVALID_ARGUMENT, NOT_FOUND...), never a crash, a hang or another exception.
// Seeds (corpus/kserve_grpc_infer_fuzz): requests serialized by protoc's Python classes from
// src/api/kserve_grpc/grpc_predict_v2.proto, in both tensor forms, and two malformed ones.
#include <cstdint>
#include <string_view>

#include "api/common/api_error.h"
#include "api/fuzz/fake_models.h"
#include "api/kserve_grpc/messages.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace onepass::api;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  static const ApiOptions options = [] {
    ApiOptions o;
    o.max_client_batch_size = 8;
    return o;
  }();
  fuzzing::FakeLimits limits;
  limits.max_tokens = 16;
  for (const char* kind : {"nli", "rerank", "embed", "ner", "splade", "qa"}) {
    try {
      auto decoded = kserve_grpc::decode_model_infer_request(bytes);
      const auto model = fuzzing::describe_fake_model(kind, kind, limits);
      auto prepared = kserve_v2::prepare_infer(model, options, decoded.inputs,
                                               std::move(decoded.requested), decoded.parameters);
      if (model.task != onepass::runtime::ModelTask::kClassifier &&
          model.task != onepass::runtime::ModelTask::kReranker)
        continue;
      // A label score per item, as the runtime answers a classifier, written back both ways.
      onepass::runtime::InferenceResult result;
      result.items.resize(prepared.request.items.size());
      for (auto& item : result.items)
        item.values.assign(static_cast<std::size_t>(model.info.num_labels), 0.5f);
      const auto outputs = prepared.outputs(result);
      for (const bool raw : {false, true})
        (void)kserve_grpc::encode_model_infer_response(model.name, "1", decoded.id, outputs, raw);
    } catch (const ApiError&) {
      // Refused: the status a client would get.
    }
  }
  return 0;
}
