// libFuzzer target: GLiNER-style POST /extract request bodies through the real route, decoding,
// validation and entity decoding, once per model task (the span extractor answers; the others
// must refuse cleanly; see api_fuzz_common.h for what is checked).
#include "api/fuzz/api_fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  onepass::api::fuzzing::post_to_each_task("/extract", data, size);
  return 0;
}
