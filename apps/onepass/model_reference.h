// How a subcommand turns the model reference a user typed (a folder, or a Hub id
// `org/name[@revision]`) into a local folder: hub::resolve_model with the process's Hugging
// Face environment (HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE, HF_HUB_CACHE/HF_HOME) and download
// progress on stderr unless HF_HUB_DISABLE_PROGRESS_BARS is true. Errors are onepass::Error
// (main() prints them and exits 2).
#pragma once

#include <filesystem>
#include <string>

namespace onepass::app {

std::filesystem::path resolve_model_reference(const std::string& reference);

// Where `--precision auto` keeps its verdicts (runtime/precision_verdicts.h): `state_dir` when
// given, else `onepass` beside the Hugging Face hub cache (~/.cache/huggingface/onepass), so
// that `serve`, `check --save-verdict` and `info` agree.
std::filesystem::path precision_state_dir(const std::string& state_dir,
                                          const std::filesystem::path& hub_cache_dir);

}  // namespace onepass::app
