// The Open Inference Protocol v2 over gRPC (Triton's port 8001, KServe's v2 gRPC, onepass
// serve --grpc-port): inference.GRPCInferenceService/ModelInfer, the messages written and read
// with protowire by their field numbers (src/api/kserve_grpc/grpc_predict_v2.proto is the
// contract). The inputs are the REST kserve dialect's (kserve.cpp), carried as Triton's own
// client carries them, in raw_input_contents: BYTES tensors text / text_pair [n], each element
// its 4-byte little-endian length and its bytes; or, with a client-side tokenizer, INT64
// input_ids / attention_mask / token_type_ids [n, seq], little-endian. The answer's logits
// [n, labels] or embeddings [n, width] FP32 are read from raw_output_contents or from
// contents.fp32_contents, whichever the server filled.
#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "bench/dialects/dialects.h"
#include "protowire/wire.h"

namespace onepass::bench {
namespace {

using protowire::Reader;
using protowire::WireType;
using protowire::Writer;

constexpr const char* kDialect = "kserve-grpc";

// ModelInferRequest's fields.
enum : std::uint32_t { kModelName = 1, kInputs = 5, kRawInputContents = 7 };
// InferInputTensor's and InferOutputTensor's.
enum : std::uint32_t { kTensorName = 1, kDatatype = 2, kShape = 3, kContents = 5 };
// ModelInferResponse's.
enum : std::uint32_t { kOutputs = 5, kRawOutputContents = 6 };
// InferTensorContents.fp32_contents.
constexpr std::uint32_t kFp32Contents = 6;

std::string tensor(const char* name, const char* datatype, std::vector<std::int64_t> shape) {
  Writer w;
  w.bytes_field(kTensorName, name);
  w.bytes_field(kDatatype, datatype);
  w.packed_varints(kShape, shape);
  return w.take();
}

void append_le(std::string& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

float float_of(std::uint32_t bits) {
  float value = 0;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// Little-endian FP32 values of a raw content or a packed fp32 run.
void append_floats(std::string_view bytes, std::vector<float>& out) {
  if (bytes.size() % 4 != 0) detail::bad_shape(kDialect, "FP32 data is not a multiple of 4 bytes");
  for (std::size_t at = 0; at < bytes.size(); at += 4) {
    std::uint32_t bits = 0;
    for (int i = 0; i < 4; ++i)
      bits |= std::uint32_t{static_cast<std::uint8_t>(bytes[at + i])} << (8 * i);
    out.push_back(float_of(bits));
  }
}

struct Output {
  std::string name, datatype;
  std::vector<float> contents;  // contents.fp32_contents, when the server used them
};

Output read_output(std::string_view message) {
  Output output;
  Reader r(message);
  while (r.next()) {
    switch (r.field()) {
      case kTensorName:
        output.name = std::string(r.bytes());
        break;
      case kDatatype:
        output.datatype = std::string(r.bytes());
        break;
      case kContents: {
        Reader contents(r.bytes());
        while (contents.next()) {
          if (contents.field() != kFp32Contents) {
            contents.skip();
          } else if (contents.type() == WireType::kFixed32) {
            output.contents.push_back(float_of(contents.fixed32()));
          } else {
            append_floats(contents.bytes(), output.contents);
          }
        }
        break;
      }
      default:
        r.skip();
    }
  }
  return output;
}

class KServeGrpcDialect final : public Dialect {
 public:
  using Dialect::Dialect;

  std::string_view name() const override { return kDialect; }
  Protocol protocol() const override { return Protocol::kGrpc; }
  std::vector<Task> tasks() const override { return {Task::kClassify}; }

  GrpcRequest build_grpc(std::span<const Sample* const> batch, Task) const override {
    if (options().model.empty())
      throw Error(ErrorKind::kInvalidArgument, "the kserve-grpc dialect needs --model NAME");
    Writer request;
    request.bytes_field(kModelName, options().model);
    if (options().tokenize) {
      tensor_inputs(batch, request);
    } else {
      text_inputs(batch, request);
    }
    return {"/inference.GRPCInferenceService/ModelInfer", {request.take()}};
  }

  std::vector<Answer> parse_grpc(const std::vector<std::string>& messages, std::size_t batch_size,
                                 Task) const override {
    if (messages.size() != 1) detail::bad_shape(kDialect, "expected one ModelInferResponse");
    std::vector<Output> outputs;
    std::vector<std::string_view> raw;
    try {
      Reader r(messages.front());
      while (r.next()) {
        if (r.field() == kOutputs) {
          outputs.push_back(read_output(r.bytes()));
        } else if (r.field() == kRawOutputContents) {
          raw.push_back(r.bytes());
        } else {
          r.skip();
        }
      }
    } catch (const protowire::WireError& e) {
      detail::bad_shape(kDialect, e.what());
    }
    if (outputs.empty()) detail::bad_shape(kDialect, "no outputs");
    std::size_t chosen = 0;
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      if (outputs[i].name == "logits" || outputs[i].name == "embeddings") chosen = i;
    }
    const Output& output = outputs[chosen];
    if (output.datatype != "FP32") detail::bad_shape(kDialect, "the output is not FP32");
    std::vector<float> data = output.contents;
    if (!raw.empty()) {
      // raw_output_contents: one entry per output, in the outputs' order.
      if (raw.size() != outputs.size())
        detail::bad_shape(kDialect, "raw_output_contents does not match the outputs");
      data.clear();
      append_floats(raw[chosen], data);
    }
    return detail::answers_from_rows(data, batch_size, output.name != "embeddings",
                                     options().label_names, kDialect);
  }

 private:
  static void text_inputs(std::span<const Sample* const> batch, Writer& request) {
    std::string texts, pairs;
    bool any_pair = false;
    for (const Sample* sample : batch) {
      append_le(texts, sample->text.size(), 4);
      texts += sample->text;
      const std::string pair = sample->text_pair.value_or("");
      append_le(pairs, pair.size(), 4);
      pairs += pair;
      any_pair = any_pair || sample->text_pair.has_value();
    }
    const auto n = static_cast<std::int64_t>(batch.size());
    request.bytes_field(kInputs, tensor("text", "BYTES", {n}));
    if (any_pair) request.bytes_field(kInputs, tensor("text_pair", "BYTES", {n}));
    request.bytes_field(kRawInputContents, texts, true);
    if (any_pair) request.bytes_field(kRawInputContents, pairs, true);
  }

  void tensor_inputs(std::span<const Sample* const> batch, Writer& request) const {
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
    std::string ids, mask, types;
    for (const auto& e : encoded) {
      for (std::size_t t = 0; t < seq; ++t) {
        const bool real = t < e.ids.size();
        append_le(ids, static_cast<std::uint64_t>(real ? e.ids[t] : options().pad_id), 8);
        append_le(mask, real ? 1 : 0, 8);
        if (with_types)
          append_le(types,
                    static_cast<std::uint64_t>(real && t < e.type_ids.size() ? e.type_ids[t] : 0),
                    8);
      }
    }
    const std::vector<std::int64_t> shape{static_cast<std::int64_t>(batch.size()),
                                          static_cast<std::int64_t>(seq)};
    request.bytes_field(kInputs, tensor("input_ids", "INT64", shape));
    request.bytes_field(kInputs, tensor("attention_mask", "INT64", shape));
    if (with_types) request.bytes_field(kInputs, tensor("token_type_ids", "INT64", shape));
    request.bytes_field(kRawInputContents, ids, true);
    request.bytes_field(kRawInputContents, mask, true);
    if (with_types) request.bytes_field(kRawInputContents, types, true);
  }
};

}  // namespace

std::unique_ptr<Dialect> make_kserve_grpc_dialect(DialectOptions options) {
  return std::make_unique<KServeGrpcDialect>(std::move(options));
}

}  // namespace onepass::bench
