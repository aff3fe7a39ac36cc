// libFuzzer target: Hugging Face Inference API request bodies through the real routes, decoder,
// validation and encoder, once per model task (see api_fuzz_common.h for what is checked):
// POST / and POST /models/{model}, which share the decoder but select the model differently.
#include "api/fuzz/api_fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  onepass::api::fuzzing::post_to_each_task("/", data, size);
  onepass::api::fuzzing::post_to_each_task("/models/{model}", data, size);
  return 0;
}
