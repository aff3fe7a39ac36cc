// TEI /predict (sequence classification, single texts and pairs) and /rerank.
#include "api/common/json_writer.h"
#include "api/common/scores.h"
#include "api/tei/tasks.h"
#include "api/tei/tei.h"
#include "api/tei/tei_common.h"

namespace onepass::api::tei {

void handle_predict(Call& call) {
  const Json body = parse_json_body(call.request);
  const auto model = select_tei_model(call);
  auto inputs = predict_request(body, call.options, model, "/predict");
  const bool batch = inputs.batch;
  const bool raw_scores = inputs.raw_scores;
  const auto received = call.request.received;
  submit_and_reply(call.service, std::move(inputs.request), call.reply,
                   [model, batch, raw_scores, received](runtime::InferenceResult& result) {
                     JsonWriter json;
                     if (batch) json.begin_array();
                     for (const auto& item : result.items) {
                       json.begin_array();
                       for (const auto& ranked : predictions(item, raw_scores))
                         json.begin_object()
                             .key("score")
                             .value(ranked.score)
                             .key("label")
                             .value(label_name(model.info.id2label, ranked.index))
                             .end_object();
                       json.end_array();
                     }
                     if (batch) json.end_array();
                     auto response = json_response(json.take());
                     response.headers = timing_headers(result, received);
                     return response;
                   });
}

void handle_rerank(Call& call) {
  const Json body = parse_json_body(call.request);
  const auto model = select_tei_model(call);
  auto inputs = rerank_request(body, call.options, model, "/rerank");
  const bool return_text = inputs.return_text;
  const auto received = call.request.received;
  submit_and_reply(
      call.service, std::move(inputs.request), call.reply,
      [documents = inputs.texts, return_text, received](runtime::InferenceResult& result) {
        JsonWriter json;
        json.begin_array();
        for (const auto& ranked : rerank_ranks(result)) {
          json.begin_object().key("index").value(ranked.index).key("score").value(ranked.score);
          if (return_text) json.key("text").value((*documents)[ranked.index]);
          json.end_object();
        }
        json.end_array();
        auto response = json_response(json.take());
        response.headers = timing_headers(result, received);
        return response;
      });
}

}  // namespace onepass::api::tei
