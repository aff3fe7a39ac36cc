// Runs the real `onepass` binary with arguments and stdin text; captures exit code, stdout and
// stderr through temp files.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace onepass::testing {

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (const char c : s) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

inline CliResult run_onepass(const std::vector<std::string>& args, const std::string& stdin_text,
                             const std::filesystem::path& work_dir) {
  const auto in = work_dir / "stdin.txt", out = work_dir / "stdout.txt",
             err = work_dir / "stderr.txt";
  {
    std::ofstream f(in, std::ios::binary);
    f << stdin_text;
  }
  std::string cmd = shell_quote(std::string(ONEPASS_BINARY_DIR) + "/apps/onepass/onepass");
  // Appended piece by piece: GCC 12 warns -Wrestrict on `"literal" + std::string&&` here.
  for (const auto& a : args) {
    cmd += ' ';
    cmd += shell_quote(a);
  }
  cmd += " <";
  cmd += shell_quote(in.string());
  cmd += " >";
  cmd += shell_quote(out.string());
  cmd += " 2>";
  cmd += shell_quote(err.string());
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_all(out);
  r.err = read_all(err);
  return r;
}

}  // namespace onepass::testing
