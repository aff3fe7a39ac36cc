#include "runtime/input_limits.h"

#include <algorithm>
#include <string>

#include "base/error.h"

namespace onepass::runtime {

std::size_t input_byte_limit(const ModelDescription& model, std::size_t configured) {
  if (configured != 0) return configured;
  const std::size_t tokens = static_cast<std::size_t>(std::max(model.max_input_length, 0));
  return std::max(kMinInputBytes, kInputBytesPerToken * tokens);
}

namespace {

[[noreturn]] void refuse(std::size_t bytes, std::size_t limit, std::string_view what) {
  // The rule is stated in full: clients that rely on truncation need to know it does not help.
  throw Error(ErrorKind::kInvalidInput,
              std::string(what) + " is " + std::to_string(bytes) +
                  " bytes, more than the limit of " + std::to_string(limit) +
                  " bytes per text; texts over it are refused before tokenizing, even with "
                  "truncation (the limit is --max-input-bytes, by default " +
                  std::to_string(kInputBytesPerToken) +
                  " bytes per token of the model's input length, at least " +
                  std::to_string(kMinInputBytes) + ")");
}

}  // namespace

void check_input_bytes(std::string_view text, std::size_t limit, std::string_view what) {
  if (limit == 0 || text.size() <= limit) return;
  refuse(text.size(), limit, what);
}

void check_fill_mask_target_bytes(std::span<const std::string> targets, std::size_t limit) {
  if (limit == 0) return;
  std::size_t bytes = 0;
  for (const std::string& target : targets) bytes += std::max<std::size_t>(target.size(), 1);
  if (bytes > limit) refuse(bytes, limit, "the sum of the 'targets'");
}

}  // namespace onepass::runtime
