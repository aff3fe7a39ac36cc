// TEI /similarity: {"inputs": {"source_sentence", "sentences"}, "parameters": {"truncate",
// "truncation_direction", "prompt_name"}} -> the cosine of the source's embedding with each
// sentence's.
#include "api/common/similarity.h"

#include "api/common/api_error.h"
#include "api/common/json_writer.h"
#include "api/tei/tei.h"
#include "api/tei/tei_common.h"

namespace onepass::api::tei {

void handle_similarity(Call& call) {
  const Json body = parse_json_body(call.request);
  const auto model = select_embedder(call);
  const Json* inputs = get_field(body, "inputs");
  if (!inputs) throw ApiError(ApiErrorKind::kValidation, "missing field `inputs`", "inputs");
  auto request = similarity_request(
      parse_similarity_inputs(*inputs, call.options.max_client_batch_size), model.name);
  const Json* given = get_field(body, "parameters");
  if (given && !given->is_object())
    throw ApiError(ApiErrorKind::kValidation, "`parameters` must be an object", "parameters");
  const Json parameters = given ? *given : Json::object();
  parse_truncation(parameters, call.options, request);
  request.prompt_name = get_string(parameters, "prompt_name");
  const auto received = call.request.received;
  submit_and_reply(call.service, std::move(request), call.reply,
                   [received](runtime::InferenceResult& result) {
                     JsonWriter json;
                     json.floats(similarities(result));
                     auto response = json_response(json.take());
                     response.headers = timing_headers(result, received);
                     return response;
                   });
}

}  // namespace onepass::api::tei
