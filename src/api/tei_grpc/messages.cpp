#include "api/tei_grpc/messages.h"

#include <span>

#include "api/common/api_error.h"
#include "protowire/wire.h"

namespace onepass::api::tei_grpc {

namespace {

using protowire::Reader;
using protowire::WireError;
using protowire::WireType;
using protowire::Writer;

// How a request field reads into the body.
enum class Kind {
  kString,     // a JSON string
  kBool,       // true or false
  kUint,       // a number
  kDirection,  // TruncationDirection: "right" or "left"
  kStrings,    // repeated string: a list
  kUints,      // repeated uint32 (packed or not): a list
};

struct Spec {
  std::uint32_t number;
  const char* name;  // the REST body's field
  Kind kind;
  bool optional = false;  // proto3 `optional`: in the body only when sent
};

bool valid_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t extra = 0;
    std::uint32_t code = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      extra = 1;
      code = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2;
      code = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3;
      code = c & 0x07;
    } else {
      return false;
    }
    if (text.size() - i <= extra) return false;
    for (std::size_t k = 1; k <= extra; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return false;
      code = (code << 6) | (next & 0x3F);
    }
    // Overlong forms, UTF-16 surrogates and past U+10FFFF are not UTF-8.
    static constexpr std::uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (code < kMin[extra] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return false;
    i += extra + 1;
  }
  return true;
}

void expect(const Reader& reader, WireType type, const Spec& spec) {
  if (reader.type() != type)
    throw WireError("field " + std::to_string(spec.number) + " (" + spec.name +
                    ") has the wrong wire type");
}

std::string read_string(Reader& reader, const Spec& spec) {
  expect(reader, WireType::kLength, spec);
  const std::string_view text = reader.bytes();
  if (!valid_utf8(text)) throw WireError(std::string("`") + spec.name + "` is not valid UTF-8");
  return std::string(text);
}

// Reads `bytes` as the message `message` whose fields are `specs` into a REST body.
Json decode(std::string_view bytes, std::span<const Spec> specs, const char* message) {
  Json body = Json::object();
  for (const Spec& spec : specs) {
    if (spec.optional) continue;
    switch (spec.kind) {
      case Kind::kString:
        body[spec.name] = "";
        break;
      case Kind::kBool:
        body[spec.name] = false;
        break;
      case Kind::kStrings:
      case Kind::kUints:
        body[spec.name] = Json::array();
        break;
      case Kind::kUint:
      case Kind::kDirection:
        break;
    }
  }
  try {
    Reader reader(bytes);
    while (reader.next()) {
      const Spec* spec = nullptr;
      for (const Spec& s : specs)
        if (s.number == reader.field()) spec = &s;
      if (spec == nullptr) {
        reader.skip();
        continue;
      }
      switch (spec->kind) {
        case Kind::kString:
          body[spec->name] = read_string(reader, *spec);
          break;
        case Kind::kStrings:
          body[spec->name].push_back(read_string(reader, *spec));
          break;
        case Kind::kBool:
          expect(reader, WireType::kVarint, *spec);
          body[spec->name] = reader.varint() != 0;
          break;
        case Kind::kUint:
          expect(reader, WireType::kVarint, *spec);
          body[spec->name] = static_cast<std::uint32_t>(reader.varint());
          break;
        case Kind::kDirection: {
          expect(reader, WireType::kVarint, *spec);
          const std::uint64_t value = reader.varint();
          if (value != field::kTruncationRight && value != field::kTruncationLeft)
            throw ApiError(ApiErrorKind::kValidation,
                           "`truncation_direction` must be TRUNCATION_DIRECTION_RIGHT (0) or "
                           "TRUNCATION_DIRECTION_LEFT (1), not " +
                               std::to_string(value),
                           "truncation_direction");
          body[spec->name] = value == field::kTruncationLeft ? "left" : "right";
          break;
        }
        case Kind::kUints: {
          if (reader.type() != WireType::kVarint) expect(reader, WireType::kLength, *spec);
          std::vector<std::uint64_t> values;
          reader.varints(values);
          for (const auto v : values) body[spec->name].push_back(static_cast<std::uint32_t>(v));
          break;
        }
      }
    }
  } catch (const WireError& e) {
    throw ApiError(ApiErrorKind::kValidation,
                   std::string("the request is not a valid tei.v1.") + message + ": " + e.what());
  }
  return body;
}

namespace embed = field::embed_request;
namespace embed_all = field::embed_all_request;
namespace predict = field::predict_request;
namespace rerank = field::rerank_request;
namespace encode = field::encode_request;
namespace decode_ids = field::decode_request;

constexpr Spec kEmbed[] = {
    {embed::kInputs, "inputs", Kind::kString},
    {embed::kTruncate, "truncate", Kind::kBool},
    {embed::kNormalize, "normalize", Kind::kBool, true},
    {embed::kTruncationDirection, "truncation_direction", Kind::kDirection, true},
    {embed::kPromptName, "prompt_name", Kind::kString, true},
    {embed::kDimensions, "dimensions", Kind::kUint, true},
};
constexpr Spec kEmbedAll[] = {
    {embed_all::kInputs, "inputs", Kind::kString},
    {embed_all::kTruncate, "truncate", Kind::kBool},
    {embed_all::kTruncationDirection, "truncation_direction", Kind::kDirection, true},
    {embed_all::kPromptName, "prompt_name", Kind::kString, true},
};
constexpr Spec kPredict[] = {
    {predict::kInputs, "inputs", Kind::kString},
    {predict::kTruncate, "truncate", Kind::kBool},
    {predict::kRawScores, "raw_scores", Kind::kBool},
    {predict::kTruncationDirection, "truncation_direction", Kind::kDirection, true},
};
constexpr Spec kPredictPair[] = {
    {predict::kInputs, "inputs", Kind::kStrings},
    {predict::kTruncate, "truncate", Kind::kBool},
    {predict::kRawScores, "raw_scores", Kind::kBool},
    {predict::kTruncationDirection, "truncation_direction", Kind::kDirection, true},
};
constexpr Spec kRerank[] = {
    {rerank::kQuery, "query", Kind::kString},
    {rerank::kTexts, "texts", Kind::kStrings},
    {rerank::kTruncate, "truncate", Kind::kBool},
    {rerank::kRawScores, "raw_scores", Kind::kBool},
    {rerank::kReturnText, "return_text", Kind::kBool},
    {rerank::kTruncationDirection, "truncation_direction", Kind::kDirection, true},
};
constexpr Spec kRerankStream[] = {
    {rerank::kQuery, "query", Kind::kString},
    {rerank::kText, "text", Kind::kString},
    {rerank::kTruncate, "truncate", Kind::kBool},
    {rerank::kRawScores, "raw_scores", Kind::kBool},
    {rerank::kReturnText, "return_text", Kind::kBool},
    {rerank::kTruncationDirection, "truncation_direction", Kind::kDirection, true},
};
constexpr Spec kEncode[] = {
    {encode::kInputs, "inputs", Kind::kString},
    {encode::kAddSpecialTokens, "add_special_tokens", Kind::kBool},
    {encode::kPromptName, "prompt_name", Kind::kString, true},
};
constexpr Spec kDecode[] = {
    {decode_ids::kIds, "ids", Kind::kUints},
    {decode_ids::kSkipSpecialTokens, "skip_special_tokens", Kind::kBool},
};

void write_metadata(Writer& out, const AnswerMetadata& metadata) {
  namespace m = field::metadata;
  Writer w;
  w.varint_field(m::kComputeChars, metadata.compute_chars);
  w.varint_field(m::kComputeTokens, metadata.compute_tokens);
  w.varint_field(m::kTotalTimeNs, metadata.total_ns);
  w.varint_field(m::kTokenizationTimeNs, metadata.tokenization_ns);
  w.varint_field(m::kQueueTimeNs, metadata.queue_ns);
  w.varint_field(m::kInferenceTimeNs, metadata.inference_ns);
  out.bytes_field(field::kMetadata, w.data(), true);
}

}  // namespace

Json decode_embed_request(std::string_view bytes) { return decode(bytes, kEmbed, "EmbedRequest"); }
Json decode_embed_all_request(std::string_view bytes) {
  return decode(bytes, kEmbedAll, "EmbedAllRequest");
}
Json decode_predict_request(std::string_view bytes) {
  return decode(bytes, kPredict, "PredictRequest");
}
Json decode_predict_pair_request(std::string_view bytes) {
  Json body = decode(bytes, kPredictPair, "PredictPairRequest");
  if (body["inputs"].size() != 2)
    throw ApiError(
        ApiErrorKind::kValidation,
        "`inputs` must be a pair of two texts, not " + std::to_string(body["inputs"].size()),
        "inputs");
  return body;
}
Json decode_rerank_request(std::string_view bytes) {
  return decode(bytes, kRerank, "RerankRequest");
}
Json decode_rerank_stream_request(std::string_view bytes) {
  return decode(bytes, kRerankStream, "RerankStreamRequest");
}
Json decode_encode_request(std::string_view bytes) {
  return decode(bytes, kEncode, "EncodeRequest");
}
Json decode_decode_request(std::string_view bytes) {
  return decode(bytes, kDecode, "DecodeRequest");
}

AnswerMetadata metadata_of(const runtime::InferenceResult& result, std::size_t chars,
                           std::chrono::nanoseconds total) {
  const auto ns = [](std::chrono::nanoseconds d) {
    return static_cast<std::uint64_t>(std::max<std::int64_t>(0, d.count()));
  };
  AnswerMetadata metadata;
  metadata.compute_chars = chars;
  metadata.compute_tokens = result.total_tokens;
  metadata.total_ns = ns(total);
  metadata.tokenization_ns = ns(result.timings.tokenization);
  metadata.queue_ns = ns(result.timings.queue);
  metadata.inference_ns = ns(result.timings.inference);
  return metadata;
}

std::string encode_embed_response(const std::vector<float>& embedding,
                                  const AnswerMetadata& metadata) {
  Writer out;
  out.packed_floats(field::kList, embedding);
  write_metadata(out, metadata);
  return out.take();
}

std::string encode_embed_all_response(const std::vector<float>& values, std::size_t hidden,
                                      const AnswerMetadata& metadata) {
  Writer out;
  for (std::size_t row = 0; hidden > 0 && row + hidden <= values.size(); row += hidden) {
    Writer token;
    token.packed_floats(
        field::token_embedding::kEmbeddings,
        std::vector<float>(values.begin() + static_cast<std::ptrdiff_t>(row),
                           values.begin() + static_cast<std::ptrdiff_t>(row + hidden)));
    out.bytes_field(field::kList, token.data(), true);
  }
  write_metadata(out, metadata);
  return out.take();
}

std::string encode_embed_sparse_response(const std::vector<float>& values,
                                         const AnswerMetadata& metadata) {
  Writer out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i] == 0.0f) continue;
    Writer value;
    value.varint_field(field::sparse_value::kIndex, i);
    value.float_field(field::sparse_value::kValue, values[i]);
    out.bytes_field(field::kList, value.data(), true);
  }
  write_metadata(out, metadata);
  return out.take();
}

std::string encode_predict_response(const std::vector<Label>& predictions,
                                    const AnswerMetadata& metadata) {
  Writer out;
  for (const auto& p : predictions) {
    Writer prediction;
    prediction.float_field(field::prediction::kScore, p.score);
    prediction.bytes_field(field::prediction::kLabel, p.label);
    out.bytes_field(field::kList, prediction.data(), true);
  }
  write_metadata(out, metadata);
  return out.take();
}

std::string encode_rerank_response(const std::vector<Ranked>& ranks,
                                   const AnswerMetadata& metadata) {
  Writer out;
  for (const auto& r : ranks) {
    Writer rank;
    rank.varint_field(field::rank::kIndex, r.index);
    if (r.text) rank.bytes_field(field::rank::kText, *r.text, true);
    rank.float_field(field::rank::kScore, r.score);
    out.bytes_field(field::kList, rank.data(), true);
  }
  write_metadata(out, metadata);
  return out.take();
}

std::string encode_encode_response(const std::vector<tei::Token>& tokens) {
  namespace t = field::simple_token;
  Writer out;
  for (const auto& token : tokens) {
    Writer w;
    w.varint_field(t::kId, static_cast<std::uint32_t>(token.id));
    w.bytes_field(t::kText, token.text);
    w.bool_field(t::kSpecial, token.special);
    if (!token.special) {
      w.varint_field(t::kStart, token.start);
      w.varint_field(t::kStop, token.stop);
    }
    out.bytes_field(field::kList, w.data(), true);
  }
  return out.take();
}

std::string encode_decode_response(const std::string& text) {
  Writer out;
  out.bytes_field(field::decode_response::kText, text);
  return out.take();
}

std::string encode_info_response(const Info& info) {
  namespace i = field::info_response;
  Writer out;
  out.bytes_field(i::kVersion, info.version);
  out.bytes_field(i::kModelId, info.model_id);
  out.bytes_field(i::kModelDtype, info.model_dtype);
  if (info.model_type != 0) out.varint_field(i::kModelType, info.model_type);
  out.varint_field(i::kMaxConcurrentRequests, info.max_concurrent_requests);
  out.varint_field(i::kMaxInputLength, info.max_input_length);
  out.varint_field(i::kMaxBatchTokens, info.max_batch_tokens);
  out.varint_field(i::kMaxBatchRequests, info.max_batch_requests);
  out.varint_field(i::kMaxClientBatchSize, info.max_client_batch_size);
  out.varint_field(i::kTokenizationWorkers, info.tokenization_workers);
  return out.take();
}

}  // namespace onepass::api::tei_grpc
