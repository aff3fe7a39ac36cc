// KServe Open Inference Protocol v2 (Triton): POST /v2/models/{model}/infer. With a client-side
// tokenizer the batch travels as INT64 tensors input_ids / attention_mask / token_type_ids
// [n, seq] (padded to the longest input, or to max_len with --pad-to-max: the padding a
// fixed-shape deployment pays); without one, as BYTES tensors text / text_pair [n].
// Answers: logits [n, labels] (softmax, or sigmoid for one label) or embeddings [n, hidden].
#include <algorithm>

#include "base/error.h"
#include "bench/dialects/dialects.h"

namespace onepass::bench {
namespace {

using nlohmann::json;

json tensor(const char* name, const char* datatype, std::vector<std::size_t> shape, json data) {
  return {{"name", name},
          {"shape", std::move(shape)},
          {"datatype", datatype},
          {"data", std::move(data)}};
}

class KServeDialect final : public Dialect {
 public:
  using Dialect::Dialect;

  std::string_view name() const override { return "triton"; }
  std::vector<Task> tasks() const override { return {Task::kClassify}; }

  http::Request build(std::span<const Sample* const> batch, Task) const override {
    if (options().model.empty()) {
      throw Error(ErrorKind::kInvalidArgument, "the triton dialect needs --model NAME");
    }
    json inputs = options().tokenize ? tensor_inputs(batch) : text_inputs(batch);
    const std::string target = "/v2/models/" + options().model + "/infer";
    return json_request(target, json{{"inputs", std::move(inputs)}}.dump());
  }

  std::vector<Answer> parse(const http::Response& response, std::size_t batch_size,
                            Task) const override {
    const json doc = detail::parse_body(response, "triton");
    if (!doc.is_object() || !doc.contains("outputs") || !doc["outputs"].is_array() ||
        doc["outputs"].empty()) {
      detail::bad_shape("triton", "expected {\"outputs\": [...]}");
    }
    const json* output = &doc["outputs"].front();
    for (const auto& o : doc["outputs"]) {
      if (o.value("name", "") == "logits" || o.value("name", "") == "embeddings") output = &o;
    }
    if (!output->is_object() || !output->contains("data")) {
      detail::bad_shape("triton", "output without data");
    }
    std::vector<float> data;
    detail::flatten_numbers((*output)["data"], data, "triton");
    return detail::answers_from_rows(data, batch_size, output->value("name", "") != "embeddings",
                                     options().label_names, "triton");
  }

 private:
  json text_inputs(std::span<const Sample* const> batch) const {
    json texts = json::array(), pairs = json::array();
    bool any_pair = false;
    for (const Sample* sample : batch) {
      texts.push_back(sample->text);
      pairs.push_back(sample->text_pair.value_or(""));
      any_pair = any_pair || sample->text_pair.has_value();
    }
    json inputs = json::array({tensor("text", "BYTES", {batch.size()}, std::move(texts))});
    if (any_pair) inputs.push_back(tensor("text_pair", "BYTES", {batch.size()}, std::move(pairs)));
    return inputs;
  }

  json tensor_inputs(std::span<const Sample* const> batch) const {
    std::vector<TokenizedInput> encoded;
    encoded.reserve(batch.size());
    std::size_t seq = 0;
    for (const Sample* sample : batch) {
      encoded.push_back(options().tokenize(*sample, options().max_len));
      seq = std::max(seq, encoded.back().ids.size());
    }
    if (options().pad_to_max) seq = std::max(seq, options().max_len);
    const bool with_types = std::all_of(encoded.begin(), encoded.end(),
                                        [](const auto& e) { return !e.type_ids.empty(); });
    json ids = json::array(), mask = json::array(), types = json::array();
    for (const auto& e : encoded) {
      for (std::size_t t = 0; t < seq; ++t) {
        const bool real = t < e.ids.size();
        ids.push_back(real ? e.ids[t] : options().pad_id);
        mask.push_back(real ? 1 : 0);
        if (with_types) types.push_back(real && t < e.type_ids.size() ? e.type_ids[t] : 0);
      }
    }
    json inputs =
        json::array({tensor("input_ids", "INT64", {batch.size(), seq}, std::move(ids)),
                     tensor("attention_mask", "INT64", {batch.size(), seq}, std::move(mask))});
    if (with_types) {
      inputs.push_back(tensor("token_type_ids", "INT64", {batch.size(), seq}, std::move(types)));
    }
    return inputs;
  }
};

}  // namespace

std::unique_ptr<Dialect> make_kserve_dialect(DialectOptions options) {
  return std::make_unique<KServeDialect>(std::move(options));
}

}  // namespace onepass::bench
