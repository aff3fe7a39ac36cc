// The planted model folders (planted_folders.h).
#include "api/fuzz/planted_folders.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "tokenizer/tokenizer.h"
#include "weights/config.h"
#include "weights/weight_summary.h"

namespace onepass::api::fuzzing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kBertConfig =
    R"({"architectures":["BertModel"],"model_type":"bert","hidden_size":8,)"
    R"("num_hidden_layers":1,"num_attention_heads":2,"intermediate_size":16,)"
    R"("vocab_size":5,"max_position_embeddings":16,"type_vocab_size":2})";
constexpr const char* kVocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\na\n";

void write(const fs::path& file, const std::string& bytes) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// A safetensors file of `header` (the 8-byte length, then the JSON).
std::string safetensors(const std::string& header, std::uint64_t claimed_length) {
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((claimed_length >> (8 * i)) & 0xFF);
  return bytes + header;
}

// A folder whose files are all sound (config, one-tensor weights, vocab.txt) except what
// `spoil` then replaces: a fresh folder each call.
fs::path sound_folder(const std::string& name) {
  const fs::path dir = fs::path(kPlantedRoot) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  write(dir / "config.json", kBertConfig);
  const std::string header = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  write(dir / "model.safetensors", safetensors(header, header.size()) + std::string(4, '\0'));
  write(dir / "vocab.txt", kVocab);
  return dir;
}

void replace_with_fifo(const fs::path& file) {
  fs::remove(file);
  ::mkfifo(file.c_str(), 0600);
}

void replace_with_link(const fs::path& file, const fs::path& target) {
  fs::remove(file);
  fs::create_symlink(target, file);
}

}  // namespace

void plant_model_folders() {
  fs::create_directories(kPlantedRoot);
  sound_folder("sound");
  replace_with_fifo(sound_folder("fifo_config") / "config.json");
  replace_with_link(sound_folder("zero_config") / "config.json", "/dev/zero");
  replace_with_link(sound_folder("dangling_config") / "config.json", "no-such-file");
  {
    const fs::path file = sound_folder("dir_config") / "config.json";
    fs::remove(file);
    fs::create_directory(file);
  }
  {
    // Sparse: 128 MiB by its size, no disk behind it.
    const fs::path file = sound_folder("big_config") / "config.json";
    fs::resize_file(file, std::uintmax_t{128} << 20);
  }
  write(sound_folder("broken_config") / "config.json", R"({"model_type":"bert",)");
  {
    const fs::path dir = sound_folder("huge_header");
    write(dir / "model.safetensors", safetensors("{}", ~std::uint64_t{0} >> 4));
  }
  {
    const fs::path dir = sound_folder("zero_weights");
    replace_with_link(dir / "model.safetensors", "/dev/zero");
  }
  {
    // A shard index naming a shard outside the folder.
    const fs::path dir = sound_folder("escaping_index");
    fs::remove(dir / "model.safetensors");
    write(dir / "model.safetensors.index.json",
          R"({"weight_map":{"w":"../sound/model.safetensors"}})");
  }
  replace_with_fifo(sound_folder("fifo_vocab") / "vocab.txt");
  {
    const fs::path dir = sound_folder("fifo_tokenizer_json");
    replace_with_fifo(dir / "tokenizer.json");
  }
  replace_with_link(sound_folder("zero_vocab") / "vocab.txt", "/dev/zero");
}

void read_model_folder(const fs::path& dir) {
  auto config = weights::load_pretrained_config(dir);
  weights::read_encoder_sizes(config);
  weights::validate_encoder_sizes(config);
  weights::summarize_weights(dir);
  tokenizer::load_tokenizer(dir);
}

}  // namespace onepass::api::fuzzing
