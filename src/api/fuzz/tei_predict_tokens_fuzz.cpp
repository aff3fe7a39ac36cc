// libFuzzer target: TEI-style POST /predict_tokens request bodies through the real route, decoder,
// validation, stride windows, entity grouping and encoder, once per model task (the token
// classifier answers; the others must refuse cleanly; see api_fuzz_common.h for what is checked).
#include "api/fuzz/api_fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  onepass::api::fuzzing::post_to_each_task("/predict_tokens", data, size);
  return 0;
}
