// Text Embeddings Inference over gRPC (the -grpc images, onepass serve --grpc-port): TEI's
// tei.v1 services (proto/tei.proto in text-embeddings-inference), the messages written and read
// with protowire by their field numbers. TEI's calls carry one input each: a batch of one is a
// unary call (Predict, PredictPair for a pair, Embed, EmbedSparse), a larger batch one
// bidirectional stream of its inputs (PredictStream / PredictPairStream, EmbedStream,
// EmbedSparseStream), which the server batches like concurrent calls and answers in order.
// Classifiers answer every label's score (Prediction{score, label}), read as the REST tei
// dialect reads /predict; embedders a vector; SPLADE models {index, value} pairs.
#include <cstring>

#include "base/error.h"
#include "bench/dialects/dialects.h"
#include "protowire/wire.h"

namespace onepass::bench {
namespace {

using protowire::Reader;
using protowire::WireType;
using protowire::Writer;

constexpr const char* kDialect = "tei-grpc";

float float_of(std::uint32_t bits) {
  float value = 0;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// A repeated float field, packed or one value per tag.
void append_floats(Reader& r, std::vector<float>& out) {
  if (r.type() == WireType::kFixed32) {
    out.push_back(float_of(r.fixed32()));
    return;
  }
  const std::string_view run = r.bytes();
  if (run.size() % 4 != 0) detail::bad_shape(kDialect, "a float run is not a multiple of 4 bytes");
  for (std::size_t at = 0; at < run.size(); at += 4) {
    std::uint32_t bits = 0;
    for (int i = 0; i < 4; ++i)
      bits |= std::uint32_t{static_cast<std::uint8_t>(run[at + i])} << (8 * i);
    out.push_back(float_of(bits));
  }
}

// PredictResponse{predictions = 1: Prediction{score = 1, label = 2}}.
Answer read_predictions(std::string_view message) {
  nlohmann::json list = nlohmann::json::array();
  Reader r(message);
  while (r.next()) {
    if (r.field() != 1) {
      r.skip();
      continue;
    }
    Reader p(r.bytes());
    float score = 0;
    std::string label;
    while (p.next()) {
      if (p.field() == 1) {
        score = float_of(p.fixed32());
      } else if (p.field() == 2) {
        label = std::string(p.bytes());
      } else {
        p.skip();
      }
    }
    list.push_back({{"label", label}, {"score", score}});
  }
  return detail::answer_from_label_scores(list, kDialect);
}

// EmbedResponse{embeddings = 1}.
Answer read_embedding(std::string_view message) {
  Answer answer;
  Reader r(message);
  while (r.next()) {
    if (r.field() == 1) {
      append_floats(r, answer.values);
    } else {
      r.skip();
    }
  }
  if (answer.values.empty()) detail::bad_shape(kDialect, "an embedding without values");
  return answer;
}

// EmbedSparseResponse{sparse_embeddings = 1: SparseValue{index = 1, value = 2}}, as a dense
// vector up to the last index (as the REST tei dialect reads /embed_sparse).
Answer read_sparse(std::string_view message) {
  Answer answer;
  Reader r(message);
  while (r.next()) {
    if (r.field() != 1) {
      r.skip();
      continue;
    }
    Reader v(r.bytes());
    std::uint64_t index = 0;
    float value = 0;
    while (v.next()) {
      if (v.field() == 1) {
        index = v.varint();
      } else if (v.field() == 2) {
        value = float_of(v.fixed32());
      } else {
        v.skip();
      }
    }
    if (index >= (1u << 24)) detail::bad_shape(kDialect, "a sparse index over 2^24");
    if (index >= answer.values.size()) answer.values.resize(index + 1, 0.0f);
    answer.values[index] = value;
  }
  return answer;
}

class TeiGrpcDialect final : public Dialect {
 public:
  using Dialect::Dialect;

  std::string_view name() const override { return kDialect; }
  Protocol protocol() const override { return Protocol::kGrpc; }
  // A classifier first; an embedder refuses Predict, a SPLADE model Predict and Embed.
  std::vector<Task> tasks() const override {
    return {Task::kClassify, Task::kEmbed, Task::kSparse};
  }

  GrpcRequest build_grpc(std::span<const Sample* const> batch, Task task) const override {
    if (task != Task::kClassify && task != Task::kEmbed && task != Task::kSparse)
      throw Error(ErrorKind::kInvalidArgument,
                  std::string("--task ") + task_name(task) +
                      ": the tei-grpc dialect has Predict, Embed and EmbedSparse only");
    GrpcRequest request;
    const bool stream = batch.size() > 1;
    std::size_t pairs_in_batch = 0;
    for (const Sample* sample : batch) pairs_in_batch += sample->text_pair.has_value();
    const bool pairs = pairs_in_batch > 0;
    // A stream carries one message type: PredictPairRequest (two texts) or PredictRequest.
    if (task == Task::kClassify && pairs && pairs_in_batch != batch.size())
      throw Error(ErrorKind::kInvalidArgument,
                  "the tei-grpc dialect cannot send pairs and single texts in one batch "
                  "(PredictPairStream takes pairs only): use a dataset of one kind or "
                  "--batch-size 1");
    if (task == Task::kEmbed) {
      request.method = stream ? "/tei.v1.Embed/EmbedStream" : "/tei.v1.Embed/Embed";
    } else if (task == Task::kSparse) {
      request.method = stream ? "/tei.v1.Embed/EmbedSparseStream" : "/tei.v1.Embed/EmbedSparse";
    } else if (pairs) {
      request.method = stream ? "/tei.v1.Predict/PredictPairStream" : "/tei.v1.Predict/PredictPair";
    } else {
      request.method = stream ? "/tei.v1.Predict/PredictStream" : "/tei.v1.Predict/Predict";
    }
    for (const Sample* sample : batch) {
      Writer w;
      if (task == Task::kClassify && pairs) {
        // PredictPairRequest{inputs = 1 (repeated: the two texts), truncate = 2}.
        w.bytes_field(1, sample->text, true);
        w.bytes_field(1, *sample->text_pair, true);
      } else {
        // PredictRequest, EmbedRequest, EmbedSparseRequest: inputs = 1, truncate = 2.
        w.bytes_field(1, task == Task::kClassify ? sample->text : detail::single_text(*sample));
      }
      w.bool_field(2, true);
      request.messages.push_back(w.take());
    }
    return request;
  }

  std::vector<Answer> parse_grpc(const std::vector<std::string>& messages, std::size_t batch_size,
                                 Task task) const override {
    if (messages.size() != batch_size) detail::bad_shape(kDialect, "expected one answer per input");
    std::vector<Answer> answers;
    answers.reserve(batch_size);
    try {
      for (const auto& message : messages) {
        answers.push_back(task == Task::kEmbed    ? read_embedding(message)
                          : task == Task::kSparse ? read_sparse(message)
                                                  : read_predictions(message));
      }
    } catch (const protowire::WireError& e) {
      detail::bad_shape(kDialect, e.what());
    }
    return answers;
  }
};

}  // namespace

std::unique_ptr<Dialect> make_tei_grpc_dialect(DialectOptions options) {
  return std::make_unique<TeiGrpcDialect>(std::move(options));
}

}  // namespace onepass::bench
