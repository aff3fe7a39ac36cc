// TEI /decode: {"ids": [id, ...] or [[id, ...], ...], "skip_special_tokens": true} -> one text
// per id list, as the model's tokenizer reads them back (Tokenizer::decode: the tokenizers
// library's decode for a tokenizer.json, which is what TEI runs).
#include <limits>

#include "api/common/api_error.h"
#include "api/common/json_writer.h"
#include "api/tei/tei.h"
#include "api/tei/tei_common.h"

namespace onepass::api::tei {
namespace {

[[noreturn]] void bad_ids() {
  throw ApiError(ApiErrorKind::kValidation,
                 "`ids` must be a list of token ids or a non-empty list of such lists", "ids");
}

std::vector<std::int32_t> id_list(const Json& list) {
  std::vector<std::int32_t> ids;
  ids.reserve(list.size());
  for (const Json& id : list) {
    if (!id.is_number_integer()) bad_ids();
    const auto value = id.get<std::int64_t>();
    if (value < 0 || value > std::numeric_limits<std::int32_t>::max()) {
      throw ApiError(ApiErrorKind::kValidation,
                     "token id " + std::to_string(value) + " is outside the vocabulary", "ids");
    }
    ids.push_back(static_cast<std::int32_t>(value));
  }
  return ids;
}

}  // namespace

void handle_decode(Call& call) {
  const Json body = parse_json_body(call.request);
  const auto model = select_tei_model(call);
  const Json* given = get_field(body, "ids");
  if (!given) throw ApiError(ApiErrorKind::kValidation, "missing field `ids`", "ids");
  if (!given->is_array()) bad_ids();
  // As TEI reads the untagged field: a list of numbers (an empty list included) is one id list.
  std::vector<std::vector<std::int32_t>> lists;
  if (given->empty() || !given->front().is_array()) {
    lists.push_back(id_list(*given));
  } else {
    for (const Json& list : *given) {
      if (!list.is_array()) bad_ids();
      lists.push_back(id_list(list));
    }
  }
  check_batch_size(lists.size(), call.options.max_client_batch_size);
  const bool skip = get_bool(body, "skip_special_tokens").value_or(true);
  JsonWriter json;
  json.begin_array();
  for (const auto& ids : lists) json.value(call.service.decode(model.name, ids, skip));
  json.end_array();
  call.reply.json(json.take());
}

}  // namespace onepass::api::tei
