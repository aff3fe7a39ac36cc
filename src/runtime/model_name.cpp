#include "runtime/model_name.h"

namespace onepass::runtime {

bool is_valid_model_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxModelNameBytes || name == "." || name == "..") return false;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace onepass::runtime
