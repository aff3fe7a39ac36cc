#include "tests/support/cli_runner.h"

#include <sys/wait.h>

#include <cstdlib>

#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/temp_dir.h"

namespace onepass::testing {

namespace {

// `text` as one shell word: in single quotes, each ' written as '\''.
std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  quoted += '\'';
  return quoted;
}

}  // namespace

CliResult run_onepass(const std::vector<std::string>& args, const std::string& stdin_text,
                      std::optional<std::chrono::seconds> time_limit) {
  const TempDir dir("cli");
  const auto in = dir.path() / "stdin.txt", out = dir.path() / "stdout.txt",
             err = dir.path() / "stderr.txt";
  write_text(in, stdin_text);
  // Appended piece by piece: GCC 12 warns -Wrestrict on `"literal" + std::string&&`.
  std::string command;
  if (time_limit) {
    command += "timeout ";
    command += std::to_string(time_limit->count());
    command += ' ';
  }
  command += shell_quote(onepass_binary());
  for (const auto& arg : args) {
    command += ' ';
    command += shell_quote(arg);
  }
  command += " <";
  command += shell_quote(in.string());
  command += " >";
  command += shell_quote(out.string());
  command += " 2>";
  command += shell_quote(err.string());
  const int status = std::system(command.c_str());
  CliResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = read_text(out);
  result.err = read_text(err);
  return result;
}

}  // namespace onepass::testing
