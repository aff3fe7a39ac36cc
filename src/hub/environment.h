// The environment variables huggingface_hub reads (constants.py), gathered once into a value so
// that the resolver can be tested without touching the process environment.
#pragma once

#include <filesystem>
#include <string>

namespace onepass::hub {

struct Environment {
  std::string endpoint = "https://huggingface.co";  // HF_ENDPOINT, without a trailing '/'
  std::filesystem::path cache_dir;  // HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub
  std::string token;                // HF_TOKEN, else the file HF_TOKEN_PATH or HF_HOME/token
  bool offline = false;             // HF_HUB_OFFLINE: cache only, never the network
  bool progress = true;             // false when HF_HUB_DISABLE_PROGRESS_BARS is set true

  // Reads the process environment the way huggingface_hub does ("1", "ON", "YES", "TRUE" in
  // any case are true).
  static Environment from_process();
};

}  // namespace onepass::hub
