// Model folders planted for the multi-model fuzz targets (POST /models), and the read of a
// folder that the fake service's load_model performs in place of a real load.
//
// The folders hold what an operator's storage (or an attacker who can write to it) may hold:
// a config.json that is a named pipe, a link to /dev/zero, a directory, a dangling link, a
// sparse 128 MiB file or broken JSON; weights whose safetensors header claims exabytes; a
// tokenizer.json that is a named pipe. Each must be refused at once with a 4xx naming the
// file, never block the fuzzer (its -timeout) or grow it (its -rss_limit_mb). Seeds in
// corpus/sagemaker_models_fuzz/ name them by path under kPlantedRoot.
#pragma once

#include <filesystem>

namespace onepass::api::fuzzing {

inline constexpr const char* kPlantedRoot = "/tmp/onepass-fuzz-planted";

// Creates (or re-creates) the folders under kPlantedRoot; safe to call more than once.
void plant_model_folders();

// Reads `dir` as a load does before it builds an engine: config.json and its encoder sizes,
// the weight files' headers, the tokenizer. Throws what those readers throw (onepass::Error,
// std::bad_alloc); returns when every file read cleanly.
void read_model_folder(const std::filesystem::path& dir);

}  // namespace onepass::api::fuzzing
