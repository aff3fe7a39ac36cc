#include "support/model_folder.h"

#include <unistd.h>

#include <cstring>
#include <fstream>
#include <random>
#include <stdexcept>

namespace onepass::testing::deberta_support {
namespace {

bool contains(const nlohmann::json& list_or_string, const std::string& item) {
  if (list_or_string.is_string())
    return list_or_string.get<std::string>().find(item) != std::string::npos;
  if (!list_or_string.is_array()) return false;
  for (const auto& e : list_or_string)
    if (e == item) return true;
  return false;
}

}  // namespace

void write_safetensors(const std::filesystem::path& file,
                       const std::map<std::string, NamedTensor>& tensors) {
  nlohmann::ordered_json header;
  header["__metadata__"] = {{"format", "pt"}};
  std::uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    const std::uint64_t bytes = t.values.size() * sizeof(float);
    header[name] = {
        {"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  while (text.size() % 8 != 0) text.push_back(' ');
  std::ofstream out(file, std::ios::binary);
  const std::uint64_t n = text.size();
  unsigned char len[8];
  for (int b = 0; b < 8; ++b) len[b] = static_cast<unsigned char>(n >> (8 * b));
  out.write(reinterpret_cast<const char*>(len), 8);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  for (const auto& [name, t] : tensors)
    out.write(reinterpret_cast<const char*>(t.values.data()),
              static_cast<std::streamsize>(t.values.size() * sizeof(float)));
  if (!out) throw std::runtime_error("cannot write test safetensors");
}

std::map<std::string, NamedTensor> read_safetensors(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  unsigned char len[8];
  in.read(reinterpret_cast<char*>(len), 8);
  std::uint64_t n = 0;
  for (int b = 7; b >= 0; --b) n = (n << 8) | len[b];
  std::string text(n, ' ');
  in.read(text.data(), static_cast<std::streamsize>(n));
  const auto header = nlohmann::json::parse(text);
  std::map<std::string, NamedTensor> out;
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__") continue;
    if (info.at("dtype") != "F32") throw std::runtime_error("test reader: F32 only");
    NamedTensor t;
    t.shape = info.at("shape").get<std::vector<std::int64_t>>();
    const auto begin = info.at("data_offsets")[0].get<std::uint64_t>();
    const auto end = info.at("data_offsets")[1].get<std::uint64_t>();
    t.values.resize((end - begin) / sizeof(float));
    in.seekg(static_cast<std::streamoff>(8 + n + begin));
    in.read(reinterpret_cast<char*>(t.values.data()), static_cast<std::streamsize>(end - begin));
    out[name] = std::move(t);
  }
  if (!in) throw std::runtime_error("test reader: short safetensors file");
  return out;
}

std::map<std::string, NamedTensor> random_deberta_weights(const nlohmann::json& c,
                                                          std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::map<std::string, NamedTensor> out;
  const auto add = [&](const std::string& name, std::vector<std::int64_t> shape, float center,
                       float half_width) {
    std::int64_t n = 1;
    for (auto s : shape) n *= s;
    std::uniform_real_distribution<float> dist(center - half_width, center + half_width);
    NamedTensor t{std::move(shape), std::vector<float>(static_cast<std::size_t>(n))};
    for (auto& v : t.values) v = dist(rng);
    out[name] = std::move(t);
  };
  const auto linear = [&](const std::string& p, std::int64_t o, std::int64_t i, bool bias = true) {
    add(p + ".weight", {o, i}, 0.0f, 0.15f);
    if (bias) add(p + ".bias", {o}, 0.0f, 0.05f);
  };
  const auto norm = [&](const std::string& p, std::int64_t n) {
    add(p + ".weight", {n}, 1.0f, 0.1f);
    add(p + ".bias", {n}, 0.0f, 0.05f);
  };
  const auto archs = c.value("architectures", std::vector<std::string>{});
  const bool classifier = !archs.empty() && archs[0] == "DebertaV2ForSequenceClassification";
  const std::string p = classifier ? "deberta." : "";
  const std::int64_t hid = c.at("hidden_size");
  const std::int64_t emb = c.value("embedding_size", hid);
  const std::int64_t inter = c.at("intermediate_size");
  const std::int64_t max_pos = c.value("max_position_embeddings", 512);

  add(p + "embeddings.word_embeddings.weight", {c.at("vocab_size").get<std::int64_t>(), emb}, 0,
      0.5f);
  if (c.value("position_biased_input", true))
    add(p + "embeddings.position_embeddings.weight", {max_pos, emb}, 0, 0.5f);
  if (c.value("type_vocab_size", 0) > 0)
    add(p + "embeddings.token_type_embeddings.weight",
        {c.at("type_vocab_size").get<std::int64_t>(), emb}, 0, 0.5f);
  if (emb != hid) linear(p + "embeddings.embed_proj", hid, emb, false);
  norm(p + "embeddings.LayerNorm", hid);

  const bool relative = c.value("relative_attention", false);
  const nlohmann::json types = c.value("pos_att_type", nlohmann::json::array());
  const bool share = c.value("share_att_key", false);
  if (relative) {
    int max_rel = c.value("max_relative_positions", -1);
    if (max_rel < 1) max_rel = static_cast<int>(max_pos);
    const int buckets = c.value("position_buckets", -1);
    const std::int64_t rows = 2 * (buckets > 0 ? buckets : max_rel);
    add(p + "encoder.rel_embeddings.weight", {rows, hid}, 0, 0.5f);
    if (c.value("norm_rel_ebd", std::string("none")).find("layer_norm") != std::string::npos)
      norm(p + "encoder.LayerNorm", hid);
  }
  for (int l = 0; l < c.at("num_hidden_layers").get<int>(); ++l) {
    const std::string a = p + "encoder.layer." + std::to_string(l) + ".attention.";
    linear(a + "self.query_proj", hid, hid);
    linear(a + "self.key_proj", hid, hid);
    linear(a + "self.value_proj", hid, hid);
    if (relative && !share) {
      if (contains(types, "c2p")) linear(a + "self.pos_key_proj", hid, hid);
      if (contains(types, "p2c")) linear(a + "self.pos_query_proj", hid, hid);
    }
    linear(a + "output.dense", hid, hid);
    norm(a + "output.LayerNorm", hid);
    const std::string o = p + "encoder.layer." + std::to_string(l) + ".";
    linear(o + "intermediate.dense", inter, hid);
    linear(o + "output.dense", hid, inter);
    norm(o + "output.LayerNorm", hid);
  }
  const int kernel = c.value("conv_kernel_size", 0);
  if (kernel > 0) {
    const int groups = c.value("conv_groups", 1);
    add(p + "encoder.conv.conv.weight", {hid, hid / groups, kernel}, 0, 0.15f);
    add(p + "encoder.conv.conv.bias", {hid}, 0, 0.05f);
    norm(p + "encoder.conv.LayerNorm", hid);
  }
  if (classifier) {
    const std::int64_t pooler = c.value("pooler_hidden_size", hid);
    linear("pooler.dense", pooler, pooler);
    std::int64_t labels = 2;
    if (c.contains("id2label")) labels = static_cast<std::int64_t>(c["id2label"].size());
    linear("classifier", labels, pooler);
  }
  return out;
}

TempModelFolder::TempModelFolder(const nlohmann::json& config, std::uint32_t seed)
    : tensors_(random_deberta_weights(config, seed)) {
  std::string templ = (std::filesystem::temp_directory_path() / "onepass-deberta-XXXXXX").string();
  if (mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = templ;
  std::ofstream(path_ / "config.json") << config.dump(2);
  write_safetensors(path_ / "model.safetensors", tensors_);
}

TempModelFolder::~TempModelFolder() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace onepass::testing::deberta_support
