#include "runtime/fill_mask.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <span>

#include "base/error.h"

namespace onepass::runtime {
namespace {

SpecialToken find_token(const tokenizer::Tokenizer& tokenizer,
                        const std::optional<std::string>& named,
                        std::initializer_list<const char*> usual) {
  if (named) return {tokenizer.token_to_id(*named).value_or(-1), *named};
  for (const char* token : usual) {
    if (const auto id = tokenizer.token_to_id(token)) return {*id, token};
  }
  return {};
}

}  // namespace

SpecialToken find_mask_token(const tokenizer::Tokenizer& tokenizer,
                             const tokenizer::TokenizerSettings& settings) {
  return find_token(tokenizer, settings.mask_token, {"[MASK]", "<mask>"});
}

SpecialToken find_pad_token(const tokenizer::Tokenizer& tokenizer,
                            const tokenizer::TokenizerSettings& settings) {
  return find_token(tokenizer, settings.pad_token, {"[PAD]", "<pad>"});
}

std::vector<std::int32_t> find_mask_positions(const LoadedModel& model,
                                              std::span<const std::int32_t> ids) {
  if (model.mask_token_id < 0) {
    throw Error(ErrorKind::kInvalidInput,
                "model '" + model.description.name + "' has no mask token in its tokenizer");
  }
  std::vector<std::int32_t> positions;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] == model.mask_token_id) positions.push_back(static_cast<std::int32_t>(i));
  }
  if (positions.empty()) {
    throw Error(ErrorKind::kInvalidInput,
                "No mask_token (" + model.description.mask_token + ") found on the input");
  }
  return positions;
}

std::vector<std::int32_t> resolve_targets(const tokenizer::Tokenizer& tokenizer,
                                          const std::vector<std::string>& targets) {
  std::vector<std::int32_t> ids;
  for (const std::string& target : targets) {
    if (const auto id = tokenizer.token_to_id(target)) {
      ids.push_back(*id);
      continue;
    }
    tokenizer::TruncationOptions first_token;
    first_token.max_length = 1;
    const tokenizer::Encoding e = tokenizer.encode(target, std::nullopt, first_token, false);
    if (!e.ids.empty()) ids.push_back(e.ids.front());
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  if (ids.empty()) {
    throw Error(ErrorKind::kInvalidInput,
                "no target is in the vocabulary or makes a token (targets given: " +
                    std::to_string(targets.size()) + ")");
  }
  return ids;
}

std::vector<std::vector<MaskPrediction>> fill_mask_predictions(
    const LoadedModel& model, std::span<const std::int32_t> input_ids,
    std::span<const std::int32_t> positions, std::span<const std::int32_t> targets,
    std::size_t top_k, const float* logits) {
  const auto vocab = static_cast<std::size_t>(model.description.info.vocab_size);
  const bool single_mask = positions.size() == 1;
  const std::size_t candidates = targets.empty() ? vocab : targets.size();
  const std::size_t k = std::min(top_k, candidates);

  std::vector<std::vector<MaskPrediction>> out(positions.size());
  std::vector<double> probs(vocab);
  std::vector<std::size_t> order(candidates);
  std::vector<std::int32_t> filled;
  for (std::size_t m = 0; m < positions.size(); ++m) {
    const float* row = logits + m * vocab;
    // The softmax over the whole vocabulary, targets or not.
    const float top = *std::max_element(row, row + vocab);
    double sum = 0;
    for (std::size_t v = 0; v < vocab; ++v) sum += probs[v] = std::exp(double(row[v]) - top);
    const auto id_of = [&](std::size_t c) {
      return targets.empty() ? static_cast<std::int32_t>(c) : targets[c];
    };
    std::iota(order.begin(), order.end(), std::size_t{0});
    // Most likely first; equal scores by id.
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                      [&](std::size_t a, std::size_t b) {
                        const double pa = probs[static_cast<std::size_t>(id_of(a))];
                        const double pb = probs[static_cast<std::size_t>(id_of(b))];
                        return pa != pb ? pa > pb : id_of(a) < id_of(b);
                      });
    for (std::size_t r = 0; r < k; ++r) {
      const std::int32_t token = id_of(order[r]);
      MaskPrediction p;
      p.score = static_cast<float>(probs[static_cast<std::size_t>(token)] / sum);
      p.token = token;
      // An id past the tokenizer's vocabulary (an embedding with padded rows) is decoded as
      // transformers' tokenizer of that kind decodes it: as a stand-in id, or not at all.
      const std::optional<std::int32_t> shown =
          static_cast<std::size_t>(token) < model.tokenizer->vocab_size()
              ? std::optional<std::int32_t>(token)
              : model.tokenizer->stand_in_for_id_past_vocabulary();
      const std::span<const std::int32_t> alone =
          shown ? std::span<const std::int32_t>(&*shown, 1) : std::span<const std::int32_t>();
      p.token_str =
          tokenizer::decode_text(*model.tokenizer, model.tokenizer_settings, alone, false);
      // The input with the token in the mask's place, padding left out.
      filled.clear();
      for (std::size_t i = 0; i < input_ids.size(); ++i) {
        if (static_cast<std::int32_t>(i) == positions[m]) {
          if (shown && token != model.pad_token_id) filled.push_back(*shown);
          continue;
        }
        if (input_ids[i] != model.pad_token_id) filled.push_back(input_ids[i]);
      }
      p.sequence =
          tokenizer::decode_text(*model.tokenizer, model.tokenizer_settings, filled, single_mask);
      out[m].push_back(std::move(p));
    }
  }
  return out;
}

}  // namespace onepass::runtime
