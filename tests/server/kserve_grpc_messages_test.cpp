// The gRPC ModelInferRequest decoder and response encoder (src/api/kserve_grpc/messages.h)
// against bytes written by hand from the protobuf encoding rules, so that neither side is
// checked only against the other.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "api/common/api_error.h"
#include "api/kserve_grpc/messages.h"

namespace onepass::api::kserve_grpc {
namespace {

// A length-delimited field: its tag byte (field << 3 | 2), a one-byte length, the bytes.
std::string grpc_field(int field, const std::string& bytes) {
  return std::string(1, static_cast<char>(field << 3 | 2)) +
         std::string(1, static_cast<char>(bytes.size())) + bytes;
}

// inputs { name: "input_ids" datatype: "INT64" shape: [1, 2] contents { int64_contents } }
std::string grpc_ids_input(const std::string& shape, const std::string& contents) {
  return grpc_field(
      5, grpc_field(1, "input_ids") + grpc_field(2, "INT64") + shape + grpc_field(5, contents));
}

ApiErrorKind grpc_refusal(const std::string& bytes) {
  try {
    decode_model_infer_request(bytes);
  } catch (const ApiError& e) {
    return e.kind();
  }
  return ApiErrorKind::kInternal;  // decoded: not a refusal
}

TEST(KserveGrpcMessages, PackedAndUnpackedRepeatedFieldsReadAlike) {
  const std::string name = grpc_field(1, "m") + grpc_field(3, "req-1");
  // shape [1, 2] packed (field 3, one run) and int64_contents [5, 300] packed (field 3 inside
  // contents; 300 is the two-byte varint AC 02).
  const std::string packed =
      name + grpc_ids_input(grpc_field(3, "\x01\x02"), grpc_field(3, "\x05\xac\x02"));
  // The same, one tag per value (varint wire type 0: field 3 -> 0x18).
  const std::string unpacked = name + grpc_ids_input("\x18\x01\x18\x02", "\x18\x05\x18\xac\x02");
  for (const auto& bytes : {packed, unpacked}) {
    const auto decoded = decode_model_infer_request(bytes);
    EXPECT_EQ(decoded.model_name, "m");
    EXPECT_EQ(decoded.id, "req-1");
    EXPECT_FALSE(decoded.raw);
    ASSERT_TRUE(decoded.inputs.input_ids);
    EXPECT_EQ(decoded.inputs.input_ids->shape, (std::vector<std::int64_t>{1, 2}));
    EXPECT_EQ(decoded.inputs.input_ids->integers, (std::vector<std::int64_t>{5, 300}));
  }
}

TEST(KserveGrpcMessages, UnknownFieldsAreSkippedAndParametersRead) {
  // Field 99 (varint), field 98 (fixed64), then parameters {"aggregation_strategy": "simple"}.
  std::string bytes = "\x98\x06\x07";
  bytes += std::string("\x91\x06", 2) + std::string(8, '\0');
  bytes +=
      grpc_field(4, grpc_field(1, "aggregation_strategy") + grpc_field(2, grpc_field(3, "simple")));
  bytes += grpc_ids_input(grpc_field(3, "\x01\x01"), grpc_field(3, "\x07"));
  const auto decoded = decode_model_infer_request(bytes);
  EXPECT_EQ(decoded.parameters["aggregation_strategy"], "simple");
  ASSERT_TRUE(decoded.inputs.input_ids);
  EXPECT_EQ(decoded.inputs.input_ids->integers, (std::vector<std::int64_t>{7}));
}

TEST(KserveGrpcMessages, RawBytesElementsCarryTheirLittleEndianLength) {
  const std::string text_input =
      grpc_field(5, grpc_field(1, "text") + grpc_field(2, "BYTES") + grpc_field(3, "\x02"));
  const std::string raw = std::string("\x02\x00\x00\x00", 4) + "hi" +
                          std::string("\x00\x00\x00\x00", 4);  // "hi" and ""
  const auto decoded = decode_model_infer_request(text_input + grpc_field(7, raw));
  EXPECT_TRUE(decoded.raw);
  ASSERT_TRUE(decoded.inputs.text);
  EXPECT_EQ(decoded.inputs.text->bytes, (std::vector<std::string>{"hi", ""}));

  // Cut inside the second length, an element past the shape, a length past the end.
  EXPECT_EQ(grpc_refusal(text_input + grpc_field(7, raw.substr(0, 8))), ApiErrorKind::kValidation);
  EXPECT_EQ(grpc_refusal(text_input + grpc_field(7, raw + raw)), ApiErrorKind::kValidation);
  EXPECT_EQ(grpc_refusal(text_input + grpc_field(7, std::string("\x09\x00\x00\x00", 4) + "hi")),
            ApiErrorKind::kValidation);
  // Two inputs, one raw entry.
  EXPECT_EQ(grpc_refusal(text_input + text_input + grpc_field(7, raw)), ApiErrorKind::kValidation);
}

TEST(KserveGrpcMessages, MalformedMessagesAreValidationErrors) {
  EXPECT_EQ(grpc_refusal("\x0a\x05m"), ApiErrorKind::kValidation);  // length past the end
  EXPECT_EQ(grpc_refusal("\x08"), ApiErrorKind::kValidation);       // varint cut off
  EXPECT_EQ(grpc_refusal(std::string(11, '\xff')), ApiErrorKind::kValidation);  // 11-byte varint
  EXPECT_EQ(grpc_refusal("\x0b"), ApiErrorKind::kValidation);                   // wire type 3
  EXPECT_EQ(grpc_refusal(""), ApiErrorKind::kValidation);                       // no inputs
  EXPECT_EQ(grpc_refusal(grpc_field(5, grpc_field(1, "pixels"))), ApiErrorKind::kValidation);
}

TEST(KserveGrpcMessages, RawOutputsAreLittleEndianFloats) {
  kserve_v2::OutputTensor logits;
  logits.name = "logits";
  logits.datatype = "FP32";
  logits.shape = {1, 2};
  logits.fp32 = {1.0f, -2.5f};
  const std::string raw = encode_model_infer_response("m", "1", "", {logits}, true);
  // model_name, model_version, then outputs (field 5) and raw_output_contents (field 6) last.
  std::string floats;
  for (const float v : logits.fp32) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    for (int i = 0; i < 4; ++i) floats.push_back(static_cast<char>(bits >> (8 * i)));
  }
  const std::string expected_output =
      grpc_field(1, "logits") + grpc_field(2, "FP32") + grpc_field(3, "\x01\x02");
  EXPECT_EQ(raw, grpc_field(1, "m") + grpc_field(2, "1") + grpc_field(5, expected_output) +
                     grpc_field(6, floats));
  // In contents: fp32_contents packed (field 6 inside contents, field 5 of the output).
  const std::string in_contents = encode_model_infer_response("m", "1", "", {logits}, false);
  EXPECT_EQ(in_contents, grpc_field(1, "m") + grpc_field(2, "1") +
                             grpc_field(5, expected_output + grpc_field(5, grpc_field(6, floats))));
}

}  // namespace
}  // namespace onepass::api::kserve_grpc
