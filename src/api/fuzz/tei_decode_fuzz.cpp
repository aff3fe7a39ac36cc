// libFuzzer target: TEI POST /decode request bodies through the real route, decoder and
// validation, once per model task (see api_fuzz_common.h for what is checked).
#include "api/fuzz/api_fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  onepass::api::fuzzing::post_to_each_task("/decode", data, size);
  return 0;
}
