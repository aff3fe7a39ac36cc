// The protobuf wire format, as much of it as onepass's gRPC messages use: varints,
// length-delimited fields (strings, bytes, messages, packed repeated scalars) and fixed 32/64-bit
// values. onepass reads and writes its gRPC messages with this instead of libprotobuf: Debian 12's
// libsentencepiece exports the protobuf-lite it bundles (3.14), and a process that loads it and
// libprotobuf (3.21) aborts in whichever library's initialiser runs second.
//
// A Reader never reads past its bytes: a malformed message (a varint of 11 bytes, a length past
// the end, an unknown wire type) throws WireError, which the service answers INVALID_ARGUMENT.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace onepass::protowire {

class WireError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class WireType : std::uint8_t { kVarint = 0, kFixed64 = 1, kLength = 2, kFixed32 = 5 };

// Reads one message's fields in order: while (reader.next()) switch (reader.field()) ...
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}

  // Reads the next field's tag; false at the end of the message.
  bool next();
  std::uint32_t field() const { return field_; }
  WireType type() const { return type_; }

  // The current field's value, as its wire type allows (WireError otherwise).
  std::uint64_t varint();
  std::string_view bytes();  // kLength: a string, bytes, a message or a packed run
  std::uint32_t fixed32();
  void skip();  // a field this reader does not know

  // A repeated scalar field, packed (one kLength run) or not (one value per tag): appends the
  // values of this occurrence.
  void varints(std::vector<std::uint64_t>& out);

 private:
  std::uint64_t read_varint();
  std::string_view bytes_;
  std::size_t at_ = 0;
  std::uint32_t field_ = 0;
  WireType type_ = WireType::kVarint;
};

// Appends fields to a message; a nested message is written into its own Writer first.
class Writer {
 public:
  void varint_field(std::uint32_t field, std::uint64_t value);
  void bool_field(std::uint32_t field, bool value) {
    if (value) varint_field(field, 1);
  }
  // Strings, bytes and nested messages; proto3 leaves an empty string out.
  void bytes_field(std::uint32_t field, std::string_view value, bool even_if_empty = false);
  // A float (wire type fixed32, little-endian), written even when 0.
  void float_field(std::uint32_t field, float value);
  void packed_varints(std::uint32_t field, const std::vector<std::int64_t>& values);
  void packed_floats(std::uint32_t field, const std::vector<float>& values);

  const std::string& data() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  void tag(std::uint32_t field, WireType type);
  void raw_varint(std::uint64_t value);
  std::string out_;
};

}  // namespace onepass::protowire
