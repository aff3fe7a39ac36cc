#include "api/tei_grpc/service.h"

#include <memory>
#include <string_view>

#include "api/common/api_error.h"
#include "api/common/model_select.h"
#include "api/common/reply.h"
#include "api/tei/tasks.h"
#include "api/tei_grpc/messages.h"

namespace onepass::api::tei_grpc {

namespace {

using grpc_server::Access;
using grpc_server::Answer;
using grpc_server::Shape;

// Code points, as TEI counts a Metadata's compute_chars.
std::size_t chars_of(std::string_view text) {
  std::size_t n = 0;
  for (const char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::size_t chars_of(const runtime::InferenceRequest& request) {
  std::size_t n = 0;
  for (const auto& item : request.items)
    n += chars_of(item.text) + (item.text_pair ? chars_of(*item.text_pair) : 0);
  return n;
}

class Methods {
 public:
  explicit Methods(const grpc_server::ServiceContext& context)
      : service_(context.service), options_(context.options) {}

  // Info
  void info(const Answer& call, std::string_view) {
    const auto model = model_for(call);
    Info info;
    info.version = options_.version;
    info.model_id = model.name;
    info.model_dtype = tei::model_dtype(model.precision.precision);
    info.model_type =
        model.task == runtime::ModelTask::kReranker ? field::kModelReranker
        : model.task == runtime::ModelTask::kEmbedder || model.task == runtime::ModelTask::kMaskedLm
            ? field::kModelEmbedding
            : field::kModelClassifier;
    info.max_concurrent_requests = options_.max_concurrent_requests;
    info.max_input_length = tei::max_input_length(model, options_);
    info.max_batch_tokens = options_.max_batch_tokens;
    info.max_batch_requests = options_.max_batch_requests;
    info.max_client_batch_size = options_.max_client_batch_size;
    call.respond(encode_info_response(info));
  }

  // Embed
  void embed(const Answer& call, std::string_view bytes) {
    const Json body = decode_embed_request(bytes);
    const auto model = model_for(call);
    submit(call, tei::embed_request(body, options_, model, "tei.v1.Embed/Embed"),
           [](const runtime::InferenceResult& result, const AnswerMetadata& metadata) {
             return encode_embed_response(result.items.at(0).values, metadata);
           });
  }

  void embed_all(const Answer& call, std::string_view bytes) {
    const Json body = decode_embed_all_request(bytes);
    const auto model = model_for(call);
    const auto hidden = static_cast<std::size_t>(model.info.hidden_size);
    submit(call, tei::embed_all_request(body, options_, model, "tei.v1.Embed/EmbedAll"),
           [hidden](const runtime::InferenceResult& result, const AnswerMetadata& metadata) {
             return encode_embed_all_response(result.items.at(0).values, hidden, metadata);
           });
  }

  void embed_sparse(const Answer& call, std::string_view bytes) {
    const Json body = decode_embed_all_request(bytes);
    const auto model = model_for(call);
    submit(call, tei::embed_sparse_request(body, options_, model, "tei.v1.Embed/EmbedSparse"),
           [](const runtime::InferenceResult& result, const AnswerMetadata& metadata) {
             return encode_embed_sparse_response(result.items.at(0).values, metadata);
           });
  }

  // Predict
  void predict(const Answer& call, std::string_view bytes) {
    predict_body(call, decode_predict_request(bytes), "tei.v1.Predict/Predict");
  }

  void predict_pair(const Answer& call, std::string_view bytes) {
    predict_body(call, decode_predict_pair_request(bytes), "tei.v1.Predict/PredictPair");
  }

  // Rerank
  void rerank(const Answer& call, std::string_view bytes) {
    const Json body = decode_rerank_request(bytes);
    const auto model = model_for(call);
    auto inputs = tei::rerank_request(body, options_, model, "tei.v1.Rerank/Rerank");
    rerank_submit(call, std::move(inputs.request), std::move(inputs.texts), inputs.return_text);
  }

  // Every message one (query, text) pair, checked as REST /rerank checks its own; raw_scores,
  // return_text and truncation are the first message's.
  void rerank_stream(const Answer& call, const std::vector<std::string>& messages) {
    const auto model = model_for(call);
    check_batch_size(messages.size(), options_.max_client_batch_size);
    runtime::InferenceRequest request;
    auto texts = std::make_shared<std::vector<std::string>>();
    bool return_text = false;
    for (std::size_t i = 0; i < messages.size(); ++i) {
      Json body = decode_rerank_stream_request(messages[i]);
      body["texts"] = Json::array({std::move(body["text"])});
      body.erase("text");
      auto one = tei::rerank_request(body, options_, model, "tei.v1.Rerank/RerankStream");
      if (i == 0) {
        request = std::move(one.request);
        return_text = one.return_text;
      } else {
        request.items.push_back(std::move(one.request.items.at(0)));
      }
      texts->push_back(one.texts->at(0));
    }
    rerank_submit(call, std::move(request), std::move(texts), return_text);
  }

  // Tokenize
  void tokenize(const Answer& call, std::string_view bytes) {
    const Json body = decode_encode_request(bytes);
    const auto model = model_for(call);
    call.respond(encode_encode_response(tei::tokenize(body, service_, options_, model).at(0)));
  }

  void decode(const Answer& call, std::string_view bytes) {
    const Json body = decode_decode_request(bytes);
    const auto model = model_for(call);
    call.respond(encode_decode_response(tei::decode(body, service_, options_, model).at(0)));
  }

 private:
  // The model the x-amzn-sagemaker-target-model metadata names, or the only one.
  runtime::ModelDescription model_for(const Answer& call) {
    const std::string* target = call.context().metadata("x-amzn-sagemaker-target-model");
    const auto model = target == nullptr ? select_model(service_, "")
                                         : select_model(service_, sagemaker_target_name(*target));
    call.record().set_model(model.name);
    return model;
  }

  void predict_body(const Answer& call, const Json& body, std::string_view route) {
    const auto model = model_for(call);
    auto inputs = tei::predict_request(body, options_, model, route);
    submit(call, std::move(inputs.request),
           [raw = inputs.raw_scores, labels = model.info.id2label](
               const runtime::InferenceResult& result, const AnswerMetadata& metadata) {
             std::vector<Label> predictions;
             for (const auto& ranked : tei::predictions(result.items.at(0), raw))
               predictions.push_back({ranked.score, label_name(labels, ranked.index)});
             return encode_predict_response(predictions, metadata);
           });
  }

  void rerank_submit(const Answer& call, runtime::InferenceRequest request,
                     std::shared_ptr<std::vector<std::string>> texts, bool return_text) {
    submit(call, std::move(request),
           [texts, return_text](const runtime::InferenceResult& result,
                                const AnswerMetadata& metadata) {
             std::vector<Ranked> ranks;
             for (const auto& ranked : tei::rerank_ranks(result)) {
               Ranked& rank = ranks.emplace_back();
               rank.index = static_cast<std::uint32_t>(ranked.index);
               rank.score = ranked.score;
               if (return_text) rank.text = texts->at(static_cast<std::size_t>(ranked.index));
             }
             return encode_rerank_response(ranks, metadata);
           });
  }

  // Submits `request` (admission happens here: a refusal throws before anything is queued) and
  // answers with `format` of its result, as REST's submit_and_reply does.
  template <typename Format>
  void submit(const Answer& call, runtime::InferenceRequest request, Format format) {
    if (!call.prepare(request)) return;
    const std::size_t chars = chars_of(request);
    const auto start = std::chrono::steady_clock::now();
    service_.submit(std::move(request), [call, chars, start, format = std::move(format)](
                                            runtime::InferenceResult result) {
      try {
        if (!call.accept(result)) return;
        call.respond(
            format(result, metadata_of(result, chars, std::chrono::steady_clock::now() - start)));
      } catch (...) {
        call.fail(std::current_exception());
      }
    });
  }

  runtime::InferenceService& service_;
  const ApiOptions& options_;
};

using Handler = void (Methods::*)(const Answer&, std::string_view);

}  // namespace

std::vector<grpc_server::ServiceTable> services(const grpc_server::ServiceContext& context) {
  auto methods = std::make_shared<Methods>(context);
  const auto method = [&methods](const char* name, Shape shape, Handler handle) {
    grpc_server::Method entry{name, Access::kClosed, shape, {}, {}, 0};
    entry.handle = [methods, handle](const Answer& call, std::string_view request) {
      ((*methods).*handle)(call, request);
    };
    return entry;
  };
  grpc_server::Method rerank_stream{"RerankStream",
                                    Access::kClosed,
                                    Shape::kClientStream,
                                    {},
                                    {},
                                    context.options.max_client_batch_size};
  rerank_stream.handle_all = [methods](const Answer& call,
                                       const std::vector<std::string>& requests) {
    methods->rerank_stream(call, requests);
  };
  constexpr Shape kUnary = Shape::kUnary, kStream = Shape::kBidiStream;
  std::vector<grpc_server::ServiceTable> tables;
  tables.push_back({"tei.v1.Info", "tei-grpc", {method("Info", kUnary, &Methods::info)}});
  tables.push_back({"tei.v1.Embed",
                    "tei-grpc",
                    {
                        method("Embed", kUnary, &Methods::embed),
                        method("EmbedStream", kStream, &Methods::embed),
                        method("EmbedAll", kUnary, &Methods::embed_all),
                        method("EmbedAllStream", kStream, &Methods::embed_all),
                        method("EmbedRaw", kUnary, &Methods::embed_all),
                        method("EmbedRawStream", kStream, &Methods::embed_all),
                        method("EmbedSparse", kUnary, &Methods::embed_sparse),
                        method("EmbedSparseStream", kStream, &Methods::embed_sparse),
                    }});
  tables.push_back({"tei.v1.Predict",
                    "tei-grpc",
                    {
                        method("Predict", kUnary, &Methods::predict),
                        method("PredictPair", kUnary, &Methods::predict_pair),
                        method("PredictStream", kStream, &Methods::predict),
                        method("PredictPairStream", kStream, &Methods::predict_pair),
                    }});
  tables.push_back({"tei.v1.Rerank",
                    "tei-grpc",
                    {method("Rerank", kUnary, &Methods::rerank), std::move(rerank_stream)}});
  tables.push_back({"tei.v1.Tokenize",
                    "tei-grpc",
                    {
                        method("Tokenize", kUnary, &Methods::tokenize),
                        method("TokenizeStream", kStream, &Methods::tokenize),
                        method("Decode", kUnary, &Methods::decode),
                        method("DecodeStream", kStream, &Methods::decode),
                    }});
  return tables;
}

}  // namespace onepass::api::tei_grpc
