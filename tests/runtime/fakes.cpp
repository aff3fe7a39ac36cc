#include "fakes.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>

#include "base/error.h"
#include "runtime/model_config.h"

namespace onepass::runtime::testing {

void Gate::open() {
  std::lock_guard lock(mutex_);
  open_ = true;
  cv_.notify_all();
}

void Gate::close() {
  std::lock_guard lock(mutex_);
  open_ = false;
}

void Gate::pass() {
  std::unique_lock lock(mutex_);
  ++blocked_;
  cv_.notify_all();
  cv_.wait(lock, [&] { return open_; });
  --blocked_;
  cv_.notify_all();
}

bool Gate::wait_blocked(int n, int timeout_ms) {
  std::unique_lock lock(mutex_);
  return cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return blocked_ >= n; });
}

int Gate::blocked() const {
  std::lock_guard lock(mutex_);
  return blocked_;
}

std::vector<float> fake_logits(const std::vector<std::int32_t>& ids,
                               const std::vector<std::int32_t>& type_ids, int num_labels) {
  double sum = 0, types = 0;
  for (auto id : ids) sum += id;
  for (auto t : type_ids) types += t;
  std::vector<float> out(num_labels);
  for (int l = 0; l < num_labels; ++l) {
    out[l] = static_cast<float>((l + 1) * sum / 1000.0 + ids.size() * 0.01 + types);
  }
  return out;
}

float fake_hidden(std::int32_t id, std::size_t position, std::size_t h) {
  return static_cast<float>(id * 0.5 + position * 0.25 + static_cast<double>(h));
}

std::vector<std::int32_t> fake_tokenize(const std::string& text) {
  std::vector<std::int32_t> ids;
  std::istringstream words(text);
  std::string word;
  while (words >> word) {
    bool digits = word.find_first_not_of("0123456789") == std::string::npos;
    ids.push_back(digits ? std::stoi(word) : 100 + static_cast<std::int32_t>(word.size()));
  }
  return ids;
}

std::filesystem::path fixture_model(const std::string& name) {
  return std::filesystem::path(ONEPASS_TEST_DATA_DIR) / "fixtures" / "models" / name;
}

namespace {

class FakeEncoder final : public model::Encoder {
 public:
  FakeEncoder(model::ModelInfo info, std::string name, FakeWorld& world)
      : info_(std::move(info)), name_(std::move(name)), world_(world) {}

  const model::ModelInfo& info() const override { return info_; }

  void forward(std::span<const model::SequenceInput> batch,
               model::ForwardOutput& out) const override {
    ++world_.forwards;
    BatchRecord record{name_, {}, {}};
    for (const auto& seq : batch) {
      if (seq.input_ids.empty()) throw Error(ErrorKind::kInvalidInput, "empty sequence");
      for (auto id : seq.input_ids) {
        if (id == kThrowId) throw Error(ErrorKind::kInvalidInput, "fake refuses id 8");
        if (id < 0 || id >= info_.vocab_size) throw Error(ErrorKind::kInvalidInput, "bad id");
      }
      record.lengths.push_back(seq.input_ids.size());
      record.first_ids.push_back(seq.input_ids.size() > 1 ? seq.input_ids[1] : seq.input_ids[0]);
    }
    {
      std::lock_guard lock(world_.mutex);
      world_.batches.push_back(record);
    }
    world_.forward_gate.pass();  // after logging, so tests see the batch that is held
    out.logits.clear();
    out.hidden_states.clear();
    out.token_offsets.assign(1, 0);
    const std::size_t hidden = info_.hidden_size;
    for (const auto& seq : batch) {
      std::vector<std::int32_t> ids(seq.input_ids.begin(), seq.input_ids.end());
      std::vector<std::int32_t> types(seq.token_type_ids.begin(), seq.token_type_ids.end());
      bool nan = false;
      for (auto id : ids) nan |= id == kNanId;
      if (info_.head == model::HeadKind::kSequenceClassification) {
        auto logits = fake_logits(ids, types, info_.num_labels);
        if (nan) logits[0] = std::numeric_limits<float>::quiet_NaN();
        out.logits.insert(out.logits.end(), logits.begin(), logits.end());
      } else {
        for (std::size_t t = 0; t < ids.size(); ++t) {
          for (std::size_t h = 0; h < hidden; ++h) {
            out.hidden_states.push_back(nan ? std::numeric_limits<float>::infinity()
                                            : fake_hidden(ids[t], t, h));
          }
        }
        out.token_offsets.push_back(out.token_offsets.back() + ids.size());
      }
    }
  }

 private:
  model::ModelInfo info_;
  std::string name_;
  FakeWorld& world_;
};

class FakeTokenizer final : public tokenizer::Tokenizer {
 public:
  tokenizer::Encoding encode(std::string_view text, std::optional<std::string_view> pair,
                             const tokenizer::TruncationOptions& truncation,
                             bool add_special_tokens) const override {
    auto a = fake_tokenize(std::string(text));
    std::vector<std::int32_t> b;
    if (pair) b = fake_tokenize(std::string(*pair));
    const std::size_t specials = add_special_tokens ? num_special_tokens(pair.has_value()) : 0;
    if (truncation.max_length != 0) {
      if (truncation.max_length < specials) throw Error(ErrorKind::kInvalidInput, "too short");
      const std::size_t budget = truncation.max_length - specials;
      while (a.size() + b.size() > budget) {  // longest first, from the right
        auto& longer = a.size() >= b.size() ? a : b;
        if (truncation.direction == tokenizer::TruncationDirection::kLeft) {
          longer.erase(longer.begin());
        } else {
          longer.pop_back();
        }
      }
    }
    tokenizer::Encoding e;
    auto add = [&](std::int32_t id, std::int32_t type, bool special) {
      e.ids.push_back(id);
      e.type_ids.push_back(type);
      e.tokens.push_back(std::to_string(id));
      e.offsets.push_back({0, 0});
      e.special_tokens_mask.push_back(special ? 1 : 0);
    };
    if (add_special_tokens) add(kCls, 0, true);
    for (auto id : a) add(id, 0, false);
    if (add_special_tokens) add(kSep, 0, true);
    if (pair) {
      for (auto id : b) add(id, 1, false);
      if (add_special_tokens) add(kSep, 1, true);
    }
    return e;
  }
  std::size_t num_special_tokens(bool pair) const override { return pair ? 3 : 2; }
  std::size_t vocab_size() const override { return 2600; }
  std::optional<std::int32_t> token_to_id(std::string_view) const override { return std::nullopt; }
  std::string decode(std::span<const std::int32_t> ids, bool) const override {
    std::string text;
    for (const auto id : ids) {
      if (!text.empty()) text.push_back(' ');
      text.append(std::to_string(id));
    }
    return text;
  }
  std::string_view source_kind() const override { return "fake"; }
};

}  // namespace

ModelLoaders FakeWorld::loaders() {
  ModelLoaders loaders;
  loaders.encoder = [this](const std::filesystem::path& dir,
                           const model::LoadOptions&) -> std::unique_ptr<model::Encoder> {
    load_gate.pass();
    const std::string folder = dir.filename().string();
    {
      std::lock_guard lock(mutex);
      ++loads[folder];
    }
    if (folder.find("broken") != std::string::npos) {
      throw Error(ErrorKind::kInvalidModel, "model.safetensors is truncated");
    }
    ModelDescription d = describe_model_folder(folder, dir);
    return std::make_unique<FakeEncoder>(d.info, folder, *this);
  };
  loaders.tokenizer = [](const std::filesystem::path&) {
    return std::make_unique<FakeTokenizer>();
  };
  return loaders;
}

std::vector<BatchRecord> FakeWorld::batch_log() {
  std::lock_guard lock(mutex);
  return batches;
}

int FakeWorld::load_count(const std::string& folder) {
  std::lock_guard lock(mutex);
  auto it = loads.find(folder);
  return it == loads.end() ? 0 : it->second;
}

}  // namespace onepass::runtime::testing
