// libFuzzer: config.json parsing (the one parse, the PretrainedConfig fields, the encoder sizes
// under BERT's names) either yields a validated config or throws onepass::Error.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "base/error.h"
#include "weights/config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    auto config = onepass::weights::parse_pretrained_config(
        std::string_view(reinterpret_cast<const char*>(data), size));
    if (config.id2label.size() != static_cast<std::size_t>(config.num_labels)) std::abort();
    onepass::weights::read_encoder_sizes(config);
    onepass::weights::validate_encoder_sizes(config);
    if (config.hidden_size <= 0 || config.hidden_size % config.num_attention_heads != 0)
      std::abort();
  } catch (const onepass::Error&) {
  }
  return 0;
}
