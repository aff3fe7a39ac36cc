#include "runtime/finish_outputs.h"

namespace onepass::runtime {

namespace {

void activate_all(std::vector<float>& values, model::heads::Activation activation) {
  for (float& v : values) v = model::heads::activate(v, activation);
}

}  // namespace

void finish_outputs(const InferenceRequest& request, std::vector<ItemOutput>& items) {
  if (request.output == OutputKind::kPooled) {
    for (ItemOutput& item : items)
      model::heads::shorten_and_normalize(item.values, request.embedding.dimensions,
                                          request.embedding.normalize);
    return;
  }
  if (request.output == OutputKind::kLogits && request.score_activation) {
    for (ItemOutput& item : items) {
      activate_all(item.values, *request.score_activation);
      for (WindowOutput& window : item.windows)
        activate_all(window.values, *request.score_activation);
    }
  }
}

}  // namespace onepass::runtime
