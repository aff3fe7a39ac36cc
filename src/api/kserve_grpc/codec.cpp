// Raw contents are little endian, row-major, without padding; a BYTES element is a 4-byte
// little-endian length and then its bytes (the protocol's layout, which tritonclient writes).
#include "api/kserve_grpc/codec.h"

#include <cstdint>
#include <cstring>

#include "api/common/api_error.h"

namespace onepass::api::kserve_grpc {

namespace {

using kserve_v2::InputTensor;
using kserve_v2::shown_input;

[[noreturn]] void invalid(const std::string& message) {
  throw ApiError(ApiErrorKind::kValidation, message);
}

std::uint64_t read_le(const unsigned char* bytes, std::size_t width) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < width; ++i) value |= std::uint64_t{bytes[i]} << (8 * i);
  return value;
}

void write_le(std::string& out, std::uint64_t value, std::size_t width) {
  for (std::size_t i = 0; i < width; ++i)
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

void check_count(const InputTensor& tensor, std::size_t given, std::int64_t count) {
  if (static_cast<std::int64_t>(given) != count)
    invalid(shown_input(tensor.name) + ": its contents hold " + std::to_string(given) +
            " values but 'shape' says " + std::to_string(count));
}

void decode_contents(const inference::InferTensorContents& contents, std::int64_t count,
                     InputTensor& tensor) {
  if (tensor.datatype == "BYTES") {
    check_count(tensor, static_cast<std::size_t>(contents.bytes_contents_size()), count);
    tensor.bytes.assign(contents.bytes_contents().begin(), contents.bytes_contents().end());
  } else if (tensor.datatype == "INT64") {
    check_count(tensor, static_cast<std::size_t>(contents.int64_contents_size()), count);
    tensor.integers.assign(contents.int64_contents().begin(), contents.int64_contents().end());
  } else if (tensor.datatype == "INT32") {
    check_count(tensor, static_cast<std::size_t>(contents.int_contents_size()), count);
    tensor.integers.assign(contents.int_contents().begin(), contents.int_contents().end());
  }
  // Another datatype: no input takes it, and tensors.cpp names the one it should have.
}

void decode_raw(const std::string& raw, std::int64_t count, InputTensor& tensor) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(raw.data());
  const std::string where = "raw_input_contents of " + shown_input(tensor.name);
  if (tensor.datatype == "BYTES") {
    std::size_t at = 0;
    while (at < raw.size()) {
      if (raw.size() - at < 4) invalid(where + " ends inside an element's 4-byte length");
      const std::uint64_t length = read_le(bytes + at, 4);
      at += 4;
      if (length > raw.size() - at) invalid(where + " ends inside an element");
      tensor.bytes.emplace_back(raw.data() + at, static_cast<std::size_t>(length));
      at += static_cast<std::size_t>(length);
    }
    check_count(tensor, tensor.bytes.size(), count);
  } else if (tensor.datatype == "INT64" || tensor.datatype == "INT32") {
    const std::size_t width = tensor.datatype == "INT64" ? 8 : 4;
    if (raw.size() != static_cast<std::size_t>(count) * width)
      invalid(where + " holds " + std::to_string(raw.size()) + " bytes but 'shape' says " +
              std::to_string(count) + " values of " + std::to_string(width) + " bytes");
    tensor.integers.reserve(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < static_cast<std::size_t>(count); ++i) {
      const std::uint64_t value = read_le(bytes + i * width, width);
      tensor.integers.push_back(width == 8
                                    ? static_cast<std::int64_t>(value)
                                    : static_cast<std::int32_t>(static_cast<std::uint32_t>(value)));
    }
  }
}

Json parameter_json(const inference::InferParameter& parameter) {
  switch (parameter.parameter_choice_case()) {
    case inference::InferParameter::kBoolParam:
      return parameter.bool_param();
    case inference::InferParameter::kInt64Param:
      return parameter.int64_param();
    case inference::InferParameter::kStringParam:
      return parameter.string_param();
    default:
      return nullptr;
  }
}

}  // namespace

DecodedInfer decode_infer_request(const inference::ModelInferRequest& request) {
  DecodedInfer decoded;
  if (request.inputs_size() == 0) invalid("'inputs' must be a non-empty list");
  decoded.raw = request.raw_input_contents_size() > 0;
  if (decoded.raw && request.raw_input_contents_size() != request.inputs_size())
    invalid("raw_input_contents must hold one entry per input (" +
            std::to_string(request.inputs_size()) + "), not " +
            std::to_string(request.raw_input_contents_size()));
  for (int i = 0; i < request.inputs_size(); ++i) {
    const auto& input = request.inputs(i);
    InputTensor tensor;
    tensor.name = input.name();
    tensor.datatype = input.datatype();
    tensor.shape.assign(input.shape().begin(), input.shape().end());
    const std::int64_t count = kserve_v2::element_count(tensor.name, tensor.shape);
    if (decoded.raw) {
      if (input.has_contents())
        invalid(shown_input(tensor.name) +
                ": give its data in 'contents' or in 'raw_input_contents', not both");
      decode_raw(request.raw_input_contents(i), count, tensor);
    } else {
      decode_contents(input.contents(), count, tensor);
    }
    kserve_v2::add_input(decoded.inputs, std::move(tensor));
  }
  for (const auto& output : request.outputs()) decoded.requested.push_back(output.name());
  for (const auto& [key, value] : request.parameters())
    decoded.parameters[key] = parameter_json(value);
  return decoded;
}

void encode_outputs(const std::vector<kserve_v2::OutputTensor>& outputs, bool raw,
                    inference::ModelInferResponse& response) {
  for (const auto& tensor : outputs) {
    auto* out = response.add_outputs();
    out->set_name(tensor.name);
    out->set_datatype(tensor.datatype);
    for (const auto d : tensor.shape) out->add_shape(d);
    if (raw) {
      std::string& bytes = *response.add_raw_output_contents();
      bytes.reserve(tensor.fp32.size() * 4 + tensor.int64.size() * 8);
      for (const float v : tensor.fp32) {
        std::uint32_t bits = 0;
        std::memcpy(&bits, &v, sizeof bits);
        write_le(bytes, bits, 4);
      }
      for (const std::int64_t v : tensor.int64) write_le(bytes, static_cast<std::uint64_t>(v), 8);
      for (const auto& element : tensor.bytes) {
        write_le(bytes, element.size(), 4);
        bytes += element;
      }
    } else {
      auto* contents = out->mutable_contents();
      contents->mutable_fp32_contents()->Add(tensor.fp32.begin(), tensor.fp32.end());
      contents->mutable_int64_contents()->Add(tensor.int64.begin(), tensor.int64.end());
      for (const auto& element : tensor.bytes) contents->add_bytes_contents(element);
    }
  }
}

}  // namespace onepass::api::kserve_grpc
