// libFuzzer target: Cohere POST /v1/embed and /v2/embed request bodies through the real routes,
// decoder, validation and encoder, once per model task (see api_fuzz_common.h for what is
// checked). Both versions share one decoder, so one corpus feeds both.
#include "api/fuzz/api_fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  onepass::api::fuzzing::post_to_each_task("/v1/embed", data, size);
  onepass::api::fuzzing::post_to_each_task("/v2/embed", data, size);
  return 0;
}
