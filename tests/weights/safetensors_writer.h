// Test helper: writes safetensors images from tensors given as raw bytes, so tests can build
// valid files and break them in exactly one way.
#pragma once

#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace onepass::testing {

struct RawTensor {
  std::string name;
  std::string dtype;  // "F32", "F16", "BF16", ...
  std::vector<std::int64_t> shape;
  std::vector<std::uint8_t> bytes;
};

inline RawTensor f32_tensor(std::string name, std::vector<std::int64_t> shape,
                            const std::vector<float>& values) {
  RawTensor t{std::move(name), "F32", std::move(shape),
              std::vector<std::uint8_t>(values.size() * 4)};
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

// An 8-byte size, the header text, then `data_bytes` zero bytes (written with memcpy: GCC 12's
// -Warray-bounds misfires on vector::insert of a string here).
inline std::vector<std::uint8_t> raw_header_file(const std::string& header_json,
                                                 std::size_t data_bytes) {
  std::vector<std::uint8_t> out(8 + header_json.size() + data_bytes, 0);
  const std::uint64_t n = header_json.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(n >> (8 * i));
  std::memcpy(out.data() + 8, header_json.data(), header_json.size());
  return out;
}

// Tensors back to back in the given order; the header padded with spaces to a multiple of 8.
inline std::vector<std::uint8_t> make_safetensors(const std::vector<RawTensor>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  header["__metadata__"] = {{"format", "pt"}};
  std::uint64_t offset = 0;
  for (const auto& t : tensors) {
    header[t.name] = {{"dtype", t.dtype},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + t.bytes.size()}}};
    offset += t.bytes.size();
  }
  std::string text = header.dump();
  while ((8 + text.size()) % 8 != 0) text.push_back(' ');
  std::vector<std::uint8_t> out = raw_header_file(text, 0);
  for (const auto& t : tensors) {
    const std::size_t at = out.size();
    out.resize(at + t.bytes.size());
    if (!t.bytes.empty()) std::memcpy(out.data() + at, t.bytes.data(), t.bytes.size());
  }
  return out;
}

}  // namespace onepass::testing
