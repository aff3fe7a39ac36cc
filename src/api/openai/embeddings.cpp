// POST /v1/embeddings. Embeddings are pooled with the model's pooling and L2-normalised, as
// OpenAI's are; "dimensions" keeps the first N values before normalising. The official client
// asks for base64 by default: little-endian float32 bytes, base64-encoded.
#include <cmath>
#include <cstring>

#include "api/common/api_error.h"
#include "api/common/json_writer.h"
#include "api/common/model_select.h"
#include "api/common/task_guard.h"
#include "api/openai/openai.h"
#include "model/heads/postprocess.h"
#include "runtime/long_input.h"

namespace onepass::api::openai {

namespace {

std::string base64(const void* data, std::size_t size) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto* bytes = static_cast<const unsigned char*>(data);
  std::string out;
  out.reserve((size + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < size; i += 3) {
    const unsigned v = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(kAlphabet[(v >> 6) & 63]);
    out.push_back(kAlphabet[v & 63]);
  }
  if (i < size) {
    unsigned v = bytes[i] << 16;
    if (i + 1 < size) v |= bytes[i + 1] << 8;
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(i + 1 < size ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

[[noreturn]] void bad_input() {
  throw ApiError(ApiErrorKind::kValidation,
                 "'input' must be a string, a list of strings, a list of token ids or a list of "
                 "lists of token ids",
                 "input");
}

runtime::InferenceItem token_item(const Json& tokens) {
  runtime::InferenceItem item;
  item.pretokenized = true;
  if (tokens.empty()) bad_input();
  for (const auto& token : tokens) {
    if (!token.is_number_integer()) bad_input();
    const auto id = token.is_number_unsigned() && token.get<std::uint64_t>() > INT32_MAX
                        ? std::int64_t{INT32_MAX} + 1
                        : token.get<std::int64_t>();
    if (id < 0 || id > INT32_MAX)
      throw ApiError(ApiErrorKind::kInvalidInput,
                     "token id " + std::to_string(id) + " is out of range", "input");
    item.input_ids.push_back(static_cast<std::int32_t>(id));
  }
  return item;
}

}  // namespace

void handle_embeddings(Call& call) {
  const Json body = parse_json_body(call.request);
  if (!body.is_object()) bad_input();
  const auto requested = get_string(body, "model").value_or("");
  const auto model = select_model(call.service, requested, true);
  call.reply.set_model(model.name);
  require_task(model, runtime::bits_of({runtime::ModelTask::kEmbedder}), call.request.path(),
               "model");
  const Json* input = get_field(body, "input");
  if (!input) throw ApiError(ApiErrorKind::kValidation, "'input' is required", "input");
  runtime::InferenceRequest request;
  request.model = model.name;
  request.output = runtime::OutputKind::kPooled;
  request.truncate = call.options.auto_truncate;
  runtime::apply_long_input({}, call.options.long_input, std::nullopt,
                            request);  // --long-input; ids never chunk
  if (input->is_string()) {
    runtime::InferenceItem item;
    item.text = input->get<std::string>();
    request.items.push_back(std::move(item));
  } else if (input->is_array()) {
    if (input->empty())
      throw ApiError(ApiErrorKind::kValidation, "'input' cannot be an empty list", "input");
    const Json& first = input->front();
    if (first.is_number_integer()) {
      request.items.push_back(token_item(*input));
    } else {
      for (const auto& element : *input) {
        if (element.is_string() && first.is_string()) {
          runtime::InferenceItem item;
          item.text = element.get<std::string>();
          request.items.push_back(std::move(item));
        } else if (element.is_array() && first.is_array()) {
          request.items.push_back(token_item(element));
        } else {
          bad_input();
        }
      }
    }
  } else {
    bad_input();
  }
  check_batch_size(request.items.size(), call.options.max_client_batch_size);
  const auto format = get_string(body, "encoding_format").value_or("float");
  if (format != "float" && format != "base64")
    throw ApiError(ApiErrorKind::kValidation, "'encoding_format' must be 'float' or 'base64'",
                   "encoding_format");
  // OpenAI's embeddings are unit vectors, shortened first when `dimensions` asks.
  request.embedding.normalize = true;
  if (const auto d = get_int(body, "dimensions")) {
    if (*d < 1 || *d > runtime::embedding_size(model))
      throw ApiError(
          ApiErrorKind::kValidation,
          "'dimensions' must be between 1 and " + std::to_string(runtime::embedding_size(model)),
          "dimensions");
    request.embedding.dimensions = static_cast<std::size_t>(*d);
  }
  const bool as_base64 = format == "base64";
  const std::string name = model.name;
  submit_and_reply(call.service, std::move(request), call.reply,
                   [as_base64, name](runtime::InferenceResult& result) {
                     JsonWriter json;
                     json.begin_object().key("object").value("list").key("data").begin_array();
                     std::size_t tokens = 0;
                     for (std::size_t i = 0; i < result.items.size(); ++i) {
                       const auto& v = result.items[i].values;
                       tokens += static_cast<std::size_t>(result.items[i].num_tokens);
                       json.begin_object().key("object").value("embedding").key("embedding");
                       if (as_base64) {
                         // x86-64 is little-endian, which is what the format asks for.
                         json.value(base64(v.data(), v.size() * sizeof(float)));
                       } else {
                         json.floats(v);
                       }
                       json.key("index").value(i).end_object();
                     }
                     json.end_array().key("model").value(name);
                     json.key("usage")
                         .begin_object()
                         .key("prompt_tokens")
                         .value(tokens)
                         .key("total_tokens")
                         .value(tokens)
                         .end_object()
                         .end_object();
                     return json_response(json.take());
                   });
}

}  // namespace onepass::api::openai
