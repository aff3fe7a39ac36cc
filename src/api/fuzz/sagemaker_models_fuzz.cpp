// libFuzzer target: SageMaker multi-model POST /models request bodies (model name and folder
// checks; FuzzService never loads anything), once per hosted model set (see api_fuzz_common.h).
#include "api/fuzz/api_fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  onepass::api::fuzzing::post_to_each_task("/models", data, size);
  return 0;
}
