// Builds throw-away DeBERTa-v2 model folders for tests: a config.json derived from the fixture's
// with some fields changed, and a model.safetensors of random F32 weights holding exactly the
// tensors that config needs (names and shapes of the Hugging Face state_dict).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace onepass::testing::deberta_support {

struct NamedTensor {
  std::vector<std::int64_t> shape;
  std::vector<float> values;
};

// Writes a safetensors file (header padded with spaces to a multiple of 8, tensors in name
// order, back to back, F32 little-endian).
void write_safetensors(const std::filesystem::path& file,
                       const std::map<std::string, NamedTensor>& tensors);

// Reads every tensor of an F32 safetensors file (test-side reader, independent of the engine's).
std::map<std::string, NamedTensor> read_safetensors(const std::filesystem::path& file);

// The state_dict DebertaV2Model / DebertaV2ForSequenceClassification has for `config`, filled
// with random values (LayerNorm weights near 1, everything else small), seeded by `seed`.
std::map<std::string, NamedTensor> random_deberta_weights(const nlohmann::json& config,
                                                          std::uint32_t seed);

// A fresh folder under the system temp dir holding config.json and model.safetensors; removed
// by the destructor.
class TempModelFolder {
 public:
  TempModelFolder(const nlohmann::json& config, std::uint32_t seed);
  ~TempModelFolder();
  TempModelFolder(const TempModelFolder&) = delete;
  TempModelFolder& operator=(const TempModelFolder&) = delete;
  const std::filesystem::path& path() const { return path_; }
  const std::map<std::string, NamedTensor>& tensors() const { return tensors_; }

 private:
  std::filesystem::path path_;
  std::map<std::string, NamedTensor> tensors_;
};

}  // namespace onepass::testing::deberta_support
