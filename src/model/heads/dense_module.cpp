#include "model/heads/dense_module.h"

#include "base/error.h"
#include "weights/weight_store.h"

namespace onepass::model::heads {

DenseModule DenseModule::load(const std::filesystem::path& model_dir,
                              const DenseModuleConfig& config) {
  ONEPASS_CHECK(config.in_features > 0 && config.out_features > 0, "a described Dense module");
  DenseModule module;
  module.config_ = config;
  const auto in = static_cast<std::size_t>(config.in_features);
  const auto out = static_cast<std::size_t>(config.out_features);
  try {
    const auto store = weights::WeightStore::open(model_dir / config.path);
    const auto weight = store.get("linear.weight", {config.out_features, config.in_features});
    module.weight_in_out_.resize(in * out);
    for (std::size_t o = 0; o < out; ++o) {
      for (std::size_t i = 0; i < in; ++i)
        module.weight_in_out_[i * out + o] = weight.data[o * in + i];
    }
    if (config.bias) {
      const auto bias = store.get("linear.bias", {config.out_features});
      module.bias_.assign(bias.data, bias.data + out);
    }
  } catch (const Error& e) {
    throw Error(e.kind(), "sentence-transformers Dense module " + config.path + ": " + e.what());
  }
  return module;
}

std::vector<float> DenseModule::apply(std::span<const float> in) const {
  const auto out_size = static_cast<std::size_t>(config_.out_features);
  ONEPASS_CHECK(in.size() == static_cast<std::size_t>(config_.in_features),
                "a Dense module's input has in_features values");
  std::vector<float> out = bias_.empty() ? std::vector<float>(out_size, 0.0f) : bias_;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const float x = in[i];
    const float* row = weight_in_out_.data() + i * out_size;
    for (std::size_t o = 0; o < out_size; ++o) out[o] += x * row[o];
  }
  for (float& v : out) v = activate(v, config_.activation);
  return out;
}

}  // namespace onepass::model::heads
