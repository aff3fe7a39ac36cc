// libFuzzer target: TEI POST /similarity request bodies through the real route, decoder, validation
// and encoder, once per model task (see api_fuzz_common.h for what is checked).
#include "api/fuzz/api_fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  onepass::api::fuzzing::post_to_each_task("/similarity", data, size);
  return 0;
}
