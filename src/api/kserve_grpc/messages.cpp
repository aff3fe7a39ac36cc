#include "api/kserve_grpc/messages.h"

#include <cstdint>
#include <cstring>

#include "api/common/api_error.h"
#include "protowire/wire.h"

namespace onepass::api::kserve_grpc {

namespace {

using kserve_v2::InputTensor;
using kserve_v2::shown_input;
using protowire::Reader;
using protowire::WireError;
using protowire::WireType;
using protowire::Writer;

[[noreturn]] void invalid(const std::string& message) {
  throw ApiError(ApiErrorKind::kValidation, message);
}

// One InferInputTensor as it came: its elements stay in wire form until the datatype says
// which field holds them.
struct WireInput {
  InputTensor tensor;
  bool has_contents = false;
  std::vector<std::string_view> bytes_contents;  // field 8
  std::vector<std::uint64_t> int64_contents;     // field 3
  std::vector<std::uint64_t> int_contents;       // field 2
};

WireInput read_input(std::string_view bytes) {
  WireInput input;
  Reader reader(bytes);
  while (reader.next()) {
    switch (reader.field()) {
      case 1:
        input.tensor.name = std::string(reader.bytes());
        break;
      case 2:
        input.tensor.datatype = std::string(reader.bytes());
        break;
      case 3: {
        std::vector<std::uint64_t> dims;
        reader.varints(dims);
        for (const auto d : dims) input.tensor.shape.push_back(static_cast<std::int64_t>(d));
        break;
      }
      case 5: {
        input.has_contents = true;
        Reader contents(reader.bytes());
        while (contents.next()) {
          if (contents.field() == 2)
            contents.varints(input.int_contents);
          else if (contents.field() == 3)
            contents.varints(input.int64_contents);
          else if (contents.field() == 8)
            input.bytes_contents.push_back(contents.bytes());
          else
            contents.skip();  // contents of a datatype no input takes
        }
        break;
      }
      default:
        reader.skip();  // parameters (4) and anything newer
    }
  }
  return input;
}

Json parameter_value(std::string_view bytes) {
  Json value;  // null unless set
  Reader reader(bytes);
  while (reader.next()) {
    if (reader.field() == 1)
      value = reader.varint() != 0;
    else if (reader.field() == 2)
      value = static_cast<std::int64_t>(reader.varint());
    else if (reader.field() == 3)
      value = std::string(reader.bytes());
    else
      reader.skip();
  }
  return value;
}

void check_count(const InputTensor& tensor, std::size_t given, std::int64_t count) {
  if (static_cast<std::int64_t>(given) != count)
    invalid(shown_input(tensor.name) + ": its contents hold " + std::to_string(given) +
            " values but 'shape' says " + std::to_string(count));
}

void take_contents(WireInput& input, std::int64_t count) {
  auto& tensor = input.tensor;
  if (tensor.datatype == "BYTES") {
    check_count(tensor, input.bytes_contents.size(), count);
    for (const auto v : input.bytes_contents) tensor.bytes.emplace_back(v);
  } else if (tensor.datatype == "INT64") {
    check_count(tensor, input.int64_contents.size(), count);
    for (const auto v : input.int64_contents)
      tensor.integers.push_back(static_cast<std::int64_t>(v));
  } else if (tensor.datatype == "INT32") {
    check_count(tensor, input.int_contents.size(), count);
    // An int32 travels as a varint of its 64-bit sign extension; the low 32 bits are the value.
    for (const auto v : input.int_contents)
      tensor.integers.push_back(static_cast<std::int32_t>(static_cast<std::uint32_t>(v)));
  }
  // Another datatype: no input takes it, and tensors.cpp names the one it should have.
}

std::uint64_t read_le(const unsigned char* bytes, std::size_t width) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < width; ++i) value |= std::uint64_t{bytes[i]} << (8 * i);
  return value;
}

void take_raw(std::string_view raw, std::int64_t count, InputTensor& tensor) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(raw.data());
  const std::string where = "raw_input_contents of " + shown_input(tensor.name);
  if (tensor.datatype == "BYTES") {
    std::size_t at = 0;
    while (at < raw.size()) {
      if (raw.size() - at < 4) invalid(where + " ends inside an element's 4-byte length");
      const std::uint64_t length = read_le(bytes + at, 4);
      at += 4;
      if (length > raw.size() - at) invalid(where + " ends inside an element");
      if (static_cast<std::int64_t>(tensor.bytes.size()) >= count)
        invalid(where + " holds more elements than 'shape' says (" + std::to_string(count) + ")");
      tensor.bytes.emplace_back(raw.substr(at, static_cast<std::size_t>(length)));
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

void write_le(std::string& out, std::uint64_t value, std::size_t width) {
  for (std::size_t i = 0; i < width; ++i)
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

std::string raw_output(const kserve_v2::OutputTensor& tensor) {
  std::string bytes;
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
  return bytes;
}

// TensorMetadata and InferOutputTensor share their first three fields.
void write_head(Writer& out, std::string_view name, std::string_view datatype,
                const std::vector<std::int64_t>& shape) {
  out.bytes_field(1, name);
  out.bytes_field(2, datatype);
  out.packed_varints(3, shape);
}

}  // namespace

DecodedInfer decode_model_infer_request(std::string_view bytes) {
  DecodedInfer decoded;
  std::vector<WireInput> inputs;
  std::vector<std::string_view> raw;
  try {
    Reader reader(bytes);
    while (reader.next()) {
      switch (reader.field()) {
        case 1:
          decoded.model_name = std::string(reader.bytes());
          break;
        case 2:
          decoded.model_version = std::string(reader.bytes());
          break;
        case 3:
          decoded.id = std::string(reader.bytes());
          break;
        case 4: {  // map<string, InferParameter>: entries of key 1, value 2
          Reader entry(reader.bytes());
          std::string key;
          Json value;
          while (entry.next()) {
            if (entry.field() == 1)
              key = std::string(entry.bytes());
            else if (entry.field() == 2)
              value = parameter_value(entry.bytes());
            else
              entry.skip();
          }
          decoded.parameters[key] = std::move(value);
          break;
        }
        case 5:
          inputs.push_back(read_input(reader.bytes()));
          break;
        case 6: {
          Reader output(reader.bytes());
          std::string name;
          while (output.next()) {
            if (output.field() == 1)
              name = std::string(output.bytes());
            else
              output.skip();
          }
          decoded.requested.push_back(std::move(name));
          break;
        }
        case 7:
          raw.push_back(reader.bytes());
          break;
        default:
          reader.skip();
      }
    }
  } catch (const WireError& e) {
    invalid(std::string("the ModelInferRequest is malformed: ") + e.what());
  }
  if (inputs.empty()) invalid("'inputs' must be a non-empty list");
  decoded.raw = !raw.empty();
  if (decoded.raw && raw.size() != inputs.size())
    invalid("raw_input_contents must hold one entry per input (" + std::to_string(inputs.size()) +
            "), not " + std::to_string(raw.size()));
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    auto& input = inputs[i];
    const std::int64_t count = kserve_v2::element_count(input.tensor.name, input.tensor.shape);
    if (decoded.raw) {
      if (input.has_contents)
        invalid(shown_input(input.tensor.name) +
                ": give its data in 'contents' or in 'raw_input_contents', not both");
      take_raw(raw[i], count, input.tensor);
    } else {
      take_contents(input, count);
    }
    kserve_v2::add_input(decoded.inputs, std::move(input.tensor));
  }
  return decoded;
}

std::string peek_model_name(std::string_view bytes) {
  std::string name;
  try {
    Reader reader(bytes);
    while (reader.next()) {
      if (reader.field() == 1 && reader.type() == WireType::kLength)
        name = std::string(reader.bytes());
      else
        reader.skip();
    }
  } catch (const WireError&) {
    // decode_model_infer_request() says what is wrong, once the model is found.
  }
  return name;
}

ModelRef decode_model_ref(std::string_view bytes) {
  ModelRef ref;
  try {
    Reader reader(bytes);
    while (reader.next()) {
      if (reader.field() == 1)
        ref.name = std::string(reader.bytes());
      else if (reader.field() == 2 && reader.type() == WireType::kLength)
        ref.version = std::string(reader.bytes());
      else
        reader.skip();
    }
  } catch (const WireError& e) {
    invalid(std::string("the request is malformed: ") + e.what());
  }
  return ref;
}

std::string encode_flag(bool value) {
  Writer out;
  out.bool_field(1, value);
  return out.take();
}

std::string encode_server_metadata(const std::string& name, const std::string& version) {
  Writer out;
  out.bytes_field(1, name);
  out.bytes_field(2, version);
  return out.take();
}

std::string encode_model_metadata(const std::string& name, const std::string& version,
                                  const std::string& platform,
                                  const std::vector<kserve_v2::TensorMetadata>& inputs,
                                  const std::vector<kserve_v2::TensorMetadata>& outputs) {
  Writer out;
  out.bytes_field(1, name);
  out.bytes_field(2, version, true);
  out.bytes_field(3, platform);
  for (const auto* list : {&inputs, &outputs}) {
    for (const auto& tensor : *list) {
      Writer entry;
      write_head(entry, tensor.name, tensor.datatype, tensor.shape);
      out.bytes_field(list == &inputs ? 4 : 5, entry.data(), true);
    }
  }
  return out.take();
}

std::string encode_model_infer_response(const std::string& model_name, const std::string& version,
                                        const std::string& id,
                                        const std::vector<kserve_v2::OutputTensor>& outputs,
                                        bool raw) {
  Writer out;
  out.bytes_field(1, model_name);
  out.bytes_field(2, version);
  out.bytes_field(3, id);
  for (const auto& tensor : outputs) {
    Writer entry;
    write_head(entry, tensor.name, tensor.datatype, tensor.shape);
    if (!raw) {
      Writer contents;
      contents.packed_varints(3, tensor.int64);
      contents.packed_floats(6, tensor.fp32);
      for (const auto& element : tensor.bytes) contents.bytes_field(8, element, true);
      entry.bytes_field(5, contents.data(), true);
    }
    out.bytes_field(5, entry.data(), true);
  }
  if (raw)
    for (const auto& tensor : outputs) out.bytes_field(6, raw_output(tensor), true);
  return out.take();
}

std::string encode_repository_answer(const std::string& model_name, bool done) {
  Writer out;
  out.bytes_field(1, model_name);
  out.bool_field(2, done);
  return out.take();
}

}  // namespace onepass::api::kserve_grpc
