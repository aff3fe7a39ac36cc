#include "protowire/wire.h"

#include <cstring>

namespace onepass::protowire {

std::uint64_t Reader::read_varint() {
  std::uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (at_ >= bytes_.size()) throw WireError("a varint runs past the end of the message");
    const auto byte = static_cast<std::uint8_t>(bytes_[at_++]);
    value |= std::uint64_t{byte & 0x7fu} << shift;
    if ((byte & 0x80u) == 0) return value;
  }
  throw WireError("a varint is longer than 10 bytes");
}

bool Reader::next() {
  if (at_ >= bytes_.size()) return false;
  const std::uint64_t key = read_varint();
  const auto type = static_cast<std::uint8_t>(key & 7u);
  if (type != 0 && type != 1 && type != 2 && type != 5)
    throw WireError("a field has wire type " + std::to_string(type) + ", which no field here has");
  if ((key >> 3) == 0 || (key >> 3) > 0x1fffffffu) throw WireError("a field number is invalid");
  field_ = static_cast<std::uint32_t>(key >> 3);
  type_ = static_cast<WireType>(type);
  return true;
}

std::uint64_t Reader::varint() {
  if (type_ != WireType::kVarint)
    throw WireError("field " + std::to_string(field_) + " must be a varint");
  return read_varint();
}

std::string_view Reader::bytes() {
  if (type_ != WireType::kLength)
    throw WireError("field " + std::to_string(field_) + " must be length-delimited");
  const std::uint64_t length = read_varint();
  if (length > bytes_.size() - at_) throw WireError("a field runs past the end of the message");
  const auto view = bytes_.substr(at_, static_cast<std::size_t>(length));
  at_ += static_cast<std::size_t>(length);
  return view;
}

std::uint32_t Reader::fixed32() {
  if (type_ != WireType::kFixed32)
    throw WireError("field " + std::to_string(field_) + " must be a fixed 32-bit value");
  if (bytes_.size() - at_ < 4) throw WireError("a field runs past the end of the message");
  std::uint32_t value = 0;
  for (int i = 0; i < 4; ++i)
    value |= std::uint32_t{static_cast<std::uint8_t>(bytes_[at_ + i])} << (8 * i);
  at_ += 4;
  return value;
}

void Reader::skip() {
  switch (type_) {
    case WireType::kVarint:
      read_varint();
      return;
    case WireType::kLength:
      bytes();
      return;
    case WireType::kFixed32:
    case WireType::kFixed64: {
      const std::size_t width = type_ == WireType::kFixed32 ? 4 : 8;
      if (bytes_.size() - at_ < width) throw WireError("a field runs past the end of the message");
      at_ += width;
      return;
    }
  }
}

void Reader::varints(std::vector<std::uint64_t>& out) {
  if (type_ == WireType::kVarint) {
    out.push_back(read_varint());
    return;
  }
  Reader packed(bytes());
  while (packed.at_ < packed.bytes_.size()) out.push_back(packed.read_varint());
}

void Writer::raw_varint(std::uint64_t value) {
  while (value >= 0x80) {
    out_.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out_.push_back(static_cast<char>(value));
}

void Writer::tag(std::uint32_t field, WireType type) {
  raw_varint((std::uint64_t{field} << 3) | static_cast<std::uint8_t>(type));
}

void Writer::varint_field(std::uint32_t field, std::uint64_t value) {
  tag(field, WireType::kVarint);
  raw_varint(value);
}

void Writer::bytes_field(std::uint32_t field, std::string_view value, bool even_if_empty) {
  if (value.empty() && !even_if_empty) return;
  tag(field, WireType::kLength);
  raw_varint(value.size());
  out_.append(value);
}

void Writer::float_field(std::uint32_t field, float value) {
  tag(field, WireType::kFixed32);
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  for (int i = 0; i < 4; ++i) out_.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

void Writer::packed_varints(std::uint32_t field, const std::vector<std::int64_t>& values) {
  if (values.empty()) return;
  Writer run;
  for (const auto v : values) run.raw_varint(static_cast<std::uint64_t>(v));
  bytes_field(field, run.data());
}

void Writer::packed_floats(std::uint32_t field, const std::vector<float>& values) {
  if (values.empty()) return;
  tag(field, WireType::kLength);
  raw_varint(values.size() * 4);
  for (const float v : values) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    for (int i = 0; i < 4; ++i) out_.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
  }
}

}  // namespace onepass::protowire
