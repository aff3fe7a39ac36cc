// Position ids of the models that number positions after the padding index (RoBERTa's code,
// MPNet): transformers' create_position_ids_from_input_ids.
#pragma once

#include <cstdint>
#include <span>

namespace onepass::model {

// Real tokens count up from padding_idx + 1; a padding id inside the input keeps padding_idx
// (only non-padding tokens are counted).
inline void positions_after_padding(std::span<const std::int32_t> ids, std::int32_t padding_idx,
                                    std::int32_t* positions) {
  std::int32_t real_tokens = 0;
  for (std::size_t i = 0; i < ids.size(); ++i)
    positions[i] = ids[i] == padding_idx ? padding_idx : padding_idx + (++real_tokens);
}

}  // namespace onepass::model
