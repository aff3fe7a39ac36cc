// libFuzzer target: TEI's tei.v1 request messages (protobuf wire bytes) through the message
// decoder (api/tei_grpc/messages.h) and the TEI task logic the gRPC services hand them to
// (api/tei/tasks.h), once per model task; what decodes is answered with made-up outputs through
// the answer encoders. The first byte chooses the message, the rest is its bytes. A malformed
// message must be an ApiError (INVALID_ARGUMENT, NOT_FOUND...), never a crash, a hang or another
// exception.
// Seeds (corpus/tei_grpc_request_fuzz): requests serialized by protoc's Python classes from
// src/api/tei_grpc/tei.proto, one or two per message, and two malformed ones.
#include <cstdint>
#include <string_view>

#include "api/common/api_error.h"
#include "api/fuzz/fake_models.h"
#include "api/tei/tasks.h"
#include "api/tei_grpc/messages.h"

namespace {

using namespace onepass::api;
using onepass::runtime::InferenceResult;
using onepass::runtime::ModelDescription;

enum Message : std::uint8_t {
  kEmbed,
  kEmbedAll,
  kEmbedSparse,
  kPredict,
  kPredictPair,
  kRerank,
  kRerankStream,
  kEncode,
  kDecode,
  kMessages
};

// Made-up outputs for `request`, as the runtime answers it: `width` values per item.
InferenceResult outputs_for(const onepass::runtime::InferenceRequest& request, std::size_t width) {
  InferenceResult result;
  result.items.resize(request.items.size());
  for (auto& item : result.items) item.values.assign(width, 0.5f);
  return result;
}

void answer(Message message, std::string_view bytes, const ModelDescription& model,
            const ApiOptions& options) {
  const tei_grpc::AnswerMetadata metadata;
  const auto hidden = static_cast<std::size_t>(model.info.hidden_size);
  switch (message) {
    case kEmbed: {
      const auto request =
          tei::embed_request(tei_grpc::decode_embed_request(bytes), options, model, "Embed");
      (void)tei_grpc::encode_embed_response(outputs_for(request, hidden).items.at(0).values,
                                            metadata);
      return;
    }
    case kEmbedAll: {
      const auto request = tei::embed_all_request(tei_grpc::decode_embed_all_request(bytes),
                                                  options, model, "EmbedAll");
      (void)tei_grpc::encode_embed_all_response(outputs_for(request, 3 * hidden).items.at(0).values,
                                                hidden, metadata);
      return;
    }
    case kEmbedSparse: {
      const auto request = tei::embed_sparse_request(tei_grpc::decode_embed_all_request(bytes),
                                                     options, model, "EmbedSparse");
      (void)tei_grpc::encode_embed_sparse_response(outputs_for(request, 8).items.at(0).values,
                                                   metadata);
      return;
    }
    case kPredict:
    case kPredictPair: {
      const Json body = message == kPredict ? tei_grpc::decode_predict_request(bytes)
                                            : tei_grpc::decode_predict_pair_request(bytes);
      const auto inputs = tei::predict_request(body, options, model, "Predict");
      const auto result =
          outputs_for(inputs.request, static_cast<std::size_t>(model.info.num_labels));
      std::vector<tei_grpc::Label> labels;
      for (const auto& ranked : tei::predictions(result.items.at(0), inputs.raw_scores))
        labels.push_back({ranked.score, label_name(model.info.id2label, ranked.index)});
      (void)tei_grpc::encode_predict_response(labels, metadata);
      return;
    }
    case kRerank:
    case kRerankStream: {
      Json body = message == kRerank ? tei_grpc::decode_rerank_request(bytes)
                                     : tei_grpc::decode_rerank_stream_request(bytes);
      if (message == kRerankStream) {
        body["texts"] = Json::array({std::move(body["text"])});
        body.erase("text");
      }
      const auto inputs = tei::rerank_request(body, options, model, "Rerank");
      std::vector<tei_grpc::Ranked> ranks;
      for (const auto& ranked : tei::rerank_ranks(outputs_for(inputs.request, 1)))
        ranks.push_back({static_cast<std::uint32_t>(ranked.index), ranked.score,
                         inputs.texts->at(static_cast<std::size_t>(ranked.index))});
      (void)tei_grpc::encode_rerank_response(ranks, metadata);
      return;
    }
    case kEncode:
      (void)tei_grpc::decode_encode_request(bytes);
      return;
    case kDecode:
      (void)tei_grpc::decode_decode_request(bytes);
      return;
    case kMessages:
      return;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const ApiOptions options = [] {
    ApiOptions o;
    o.max_client_batch_size = 8;
    return o;
  }();
  const auto message = static_cast<Message>(data[0] % kMessages);
  const std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  fuzzing::FakeLimits limits;
  limits.max_tokens = 16;
  for (const char* kind : {"nli", "rerank", "embed", "splade"}) {
    try {
      answer(message, bytes, fuzzing::describe_fake_model(kind, kind, limits), options);
    } catch (const ApiError&) {
      // Refused: the status a client would get.
    }
  }
  return 0;
}
