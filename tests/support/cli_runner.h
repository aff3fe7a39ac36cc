// Runs this build's `onepass` binary as a user would, through the shell, and captures its exit
// code, standard output and standard error (through files in a temporary folder of its own).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace onepass::testing {

struct CliResult {
  int exit_code = -1;  // -1: the command did not exit (a signal ended it)
  std::string out;
  std::string err;
};

// `onepass ARGS` (each argument quoted for the shell) with `stdin_text` as its standard input.
// With `time_limit`, coreutils' timeout stops it after that long (exit code 124): for a command
// that should have refused but serves, which would otherwise never return.
CliResult run_onepass(const std::vector<std::string>& args, const std::string& stdin_text = {},
                      std::optional<std::chrono::seconds> time_limit = std::nullopt);

}  // namespace onepass::testing
