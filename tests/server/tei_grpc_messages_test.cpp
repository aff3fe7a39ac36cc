// TEI's tei.v1 message codec (src/api/tei_grpc/messages.h) against bytes written by hand from
// the protobuf encoding rules and tei.proto's field numbers, so that neither side is checked only
// against the other.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "api/common/api_error.h"
#include "api/tei_grpc/messages.h"

namespace onepass::api::tei_grpc {
namespace {

using namespace std::string_literals;

// A length-delimited field: its tag byte (field << 3 | 2), a one-byte length, the bytes.
std::string length_field(int field, const std::string& bytes) {
  return std::string(1, static_cast<char>(field << 3 | 2)) +
         std::string(1, static_cast<char>(bytes.size())) + bytes;
}

// A varint field whose value fits one byte.
std::string varint_field(int field, int value) {
  return std::string(1, static_cast<char>(field << 3)) + std::string(1, static_cast<char>(value));
}

std::string le_float(float value) {
  char bytes[4];
  std::memcpy(bytes, &value, 4);  // the test machines are little-endian, as the wire is
  return std::string(bytes, 4);
}

template <typename Decode>
std::string refusal(Decode decode, const std::string& bytes) {
  try {
    decode(bytes);
  } catch (const ApiError& e) {
    EXPECT_EQ(e.kind(), ApiErrorKind::kValidation);
    return e.what();
  }
  return "decoded";
}

TEST(TeiGrpcMessages, EmbedRequestReadsAsTheRestBody) {
  // inputs "hi", truncate true, normalize false, truncation_direction LEFT, prompt_name "q",
  // dimensions 300 (the two-byte varint AC 02), and an unknown field 9 that is skipped.
  const std::string bytes = length_field(1, "hi") + varint_field(2, 1) + varint_field(3, 0) +
                            varint_field(4, 1) + length_field(5, "q") + "\x30\xac\x02"s +
                            varint_field(9, 7);
  const Json body = decode_embed_request(bytes);
  EXPECT_EQ(body["inputs"], "hi");
  EXPECT_EQ(body["truncate"], true);
  EXPECT_EQ(body["normalize"], false);
  EXPECT_EQ(body["truncation_direction"], "left");
  EXPECT_EQ(body["prompt_name"], "q");
  EXPECT_EQ(body["dimensions"], 300);
}

TEST(TeiGrpcMessages, AbsentFieldsAreProto3Defaults) {
  // An empty EmbedRequest: inputs "" and truncate false; the optional fields stay out of the
  // body, so REST's defaults (normalize true, the model's full width) apply.
  const Json body = decode_embed_request("");
  EXPECT_EQ(body["inputs"], "");
  EXPECT_EQ(body["truncate"], false);
  EXPECT_FALSE(body.contains("normalize"));
  EXPECT_FALSE(body.contains("dimensions"));
  EXPECT_FALSE(body.contains("prompt_name"));
  EXPECT_EQ(decode_encode_request("")["add_special_tokens"], false);
}

TEST(TeiGrpcMessages, RepeatedFieldsAndPairs) {
  // RerankRequest: query, texts twice (field 2 repeated), return_text.
  const Json rerank = decode_rerank_request(length_field(1, "q") + length_field(2, "a") +
                                            length_field(2, "b") + varint_field(5, 1));
  EXPECT_EQ(rerank["query"], "q");
  EXPECT_EQ(rerank["texts"], (Json{"a", "b"}));
  EXPECT_EQ(rerank["return_text"], true);
  EXPECT_EQ(rerank["raw_scores"], false);
  // PredictPairRequest: exactly two inputs, else refused naming the pair.
  const Json pair = decode_predict_pair_request(length_field(1, "p") + length_field(1, "h"));
  EXPECT_EQ(pair["inputs"], (Json{"p", "h"}));
  EXPECT_NE(refusal(decode_predict_pair_request, length_field(1, "p")).find("pair"),
            std::string::npos);
  // DecodeRequest ids packed (one run: 5, 300) and unpacked (one tag each) read alike.
  const Json packed = decode_decode_request(length_field(1, "\x05\xac\x02"));
  const Json unpacked = decode_decode_request("\x08\x05\x08\xac\x02"s + varint_field(2, 1));
  EXPECT_EQ(packed["ids"], (Json{5, 300}));
  EXPECT_EQ(unpacked["ids"], (Json{5, 300}));
  EXPECT_EQ(unpacked["skip_special_tokens"], true);
}

TEST(TeiGrpcMessages, MalformedMessagesAreValidationErrors) {
  // A string whose length runs past the end.
  EXPECT_NE(refusal(decode_embed_request, "\x0a\x05hi"s).find("EmbedRequest"), std::string::npos);
  // inputs with the varint wire type.
  EXPECT_NE(refusal(decode_predict_request, varint_field(1, 3)).find("wire type"),
            std::string::npos);
  // A string that is not UTF-8 (C3 28), and an overlong "/" (C0 AF).
  EXPECT_NE(refusal(decode_encode_request, length_field(1, "\xc3\x28")).find("UTF-8"),
            std::string::npos);
  EXPECT_NE(refusal(decode_encode_request, length_field(1, "\xc0\xaf")).find("UTF-8"),
            std::string::npos);
  // A truncation direction that TruncationDirection has no name for.
  EXPECT_NE(refusal(decode_embed_all_request, varint_field(3, 2)).find("truncation_direction"),
            std::string::npos);
  // A tag with field number 0.
  EXPECT_EQ(refusal(decode_rerank_stream_request, "\x02\x00"s).find("decoded"), std::string::npos);
}

TEST(TeiGrpcMessages, AnswersAreWrittenWithTeiFieldNumbers) {
  AnswerMetadata metadata;
  metadata.compute_chars = 2;
  metadata.compute_tokens = 4;
  // Metadata: every field as a varint, in field order.
  const std::string meta =
      length_field(2, varint_field(1, 2) + varint_field(2, 4) + varint_field(3, 0) +
                          varint_field(4, 0) + varint_field(5, 0) + varint_field(6, 0));
  // EmbedResponse: embeddings packed as little-endian floats, then the metadata.
  EXPECT_EQ(encode_embed_response({1.0f, -2.5f}, metadata),
            length_field(1, le_float(1.0f) + le_float(-2.5f)) + meta);
  // PredictResponse: Prediction { score (fixed32, tag 0D), label }.
  EXPECT_EQ(encode_predict_response({{0.75f, "yes"}}, metadata),
            length_field(1, "\x0d"s + le_float(0.75f) + length_field(2, "yes")) + meta);
  // RerankResponse: Rank { index, text (only when asked), score (fixed32, tag 1D) }.
  EXPECT_EQ(
      encode_rerank_response({{1, 0.5f, "doc"}, {0, 0.25f, std::nullopt}}, metadata),
      length_field(1, varint_field(1, 1) + length_field(2, "doc") + "\x1d"s + le_float(0.5f)) +
          length_field(1, varint_field(1, 0) + "\x1d"s + le_float(0.25f)) + meta);
  // EmbedSparseResponse: only the values that are not 0, by index.
  EXPECT_EQ(encode_embed_sparse_response({0.0f, 0.5f, 0.0f}, metadata),
            length_field(1, varint_field(1, 1) + "\x15"s + le_float(0.5f)) + meta);
  // EmbedAllResponse: one TokenEmbedding per row of `hidden` values.
  EXPECT_EQ(encode_embed_all_response({1.0f, 2.0f, 3.0f, 4.0f}, 2, metadata),
            length_field(1, length_field(1, le_float(1.0f) + le_float(2.0f))) +
                length_field(1, length_field(1, le_float(3.0f) + le_float(4.0f))) + meta);
}

TEST(TeiGrpcMessages, SpecialTokensHaveNoOffsets) {
  tei::Token cls;
  cls.id = 101;
  cls.text = "[CLS]";
  cls.special = true;
  tei::Token word;
  word.id = 7;
  word.text = "h\xc3\xa9";
  word.start = 0;
  word.stop = 3;
  // SimpleToken: id, text, special only when true, start and stop (optional: written even
  // when 0) only for a token that is not special.
  EXPECT_EQ(encode_encode_response({cls, word}),
            length_field(1, "\x08\x65"s + length_field(2, "[CLS]") + varint_field(3, 1)) +
                length_field(1, varint_field(1, 7) + length_field(2, "h\xc3\xa9") +
                                    varint_field(4, 0) + varint_field(5, 3)));
  EXPECT_EQ(encode_decode_response("ok"), length_field(1, "ok"));
}

}  // namespace
}  // namespace onepass::api::tei_grpc
