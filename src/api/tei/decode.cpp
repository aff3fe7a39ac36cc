// TEI /decode: {"ids": [id, ...] or [[id, ...], ...], "skip_special_tokens": true} -> one text
// per id list, as the model's tokenizer reads them back (Tokenizer::decode: the tokenizers
// library's decode for a tokenizer.json, which is what TEI runs).
#include "api/common/api_error.h"
#include "api/common/json_writer.h"
#include "api/tei/tasks.h"
#include "api/tei/tei.h"
#include "api/tei/tei_common.h"

namespace onepass::api::tei {
void handle_decode(Call& call) {
  const Json body = parse_json_body(call.request);
  const auto model = select_tei_model(call);
  JsonWriter json;
  json.begin_array();
  for (const auto& text : decode(body, call.service, call.options, model)) json.value(text);
  json.end_array();
  call.reply.json(json.take());
}

}  // namespace onepass::api::tei
