#include "tests/support/serve_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "tests/support/http_client.h"
#include "tests/support/paths.h"

namespace onepass::testing {

ServeProcess::ServeProcess(const std::vector<std::string>& args,
                           const std::vector<std::string>& env) {
  int out[2];
  if (::pipe(out) != 0) throw std::runtime_error("pipe failed");
  char log_template[] = "/tmp/onepass_serve_log_XXXXXX";
  const int log_fd = ::mkstemp(log_template);
  log_path_ = log_template;
  std::vector<std::string> argv_strings = {onepass_binary(), "serve",  "--host",
                                           "127.0.0.1",      "--port", "0"};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  // Built before the fork: the child of a multithreaded test may only exec.
  std::vector<std::string> env_strings = env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const auto name = entry.substr(0, entry.find('=') + 1);
    bool replaced = false;
    for (const auto& extra : env) replaced = replaced || extra.rfind(name, 0) == 0;
    if (!replaced) env_strings.push_back(entry);
  }
  std::vector<char*> argv;
  for (auto& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(out[1], 1);
    ::dup2(log_fd, 2);
    ::close(out[0]);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(log_fd);
  // Read stdout until the "listening on" line (with --grpc-port, "grpc listening on HOST:PORT"
  // comes before it).
  std::string text;
  auto http_line = [&text] {
    const auto at = text.find("\nlistening on ");
    if (text.rfind("listening on ", 0) == 0) return std::size_t{0};
    return at == std::string::npos ? at : at + 1;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while ((http_line() == std::string::npos || text.find('\n', http_line()) == std::string::npos) &&
         std::chrono::steady_clock::now() < deadline) {
    pollfd pfd{out[0], POLLIN, 0};
    if (::poll(&pfd, 1, 200) <= 0) continue;
    char buf[256];
    const auto n = ::read(out[0], buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(out[0]);
  const auto at = http_line();
  const auto end = at == std::string::npos ? at : text.find('\n', at);
  const auto colon = end == std::string::npos ? end : text.rfind(':', end);
  if (at == std::string::npos || colon == std::string::npos || colon < at)
    throw std::runtime_error("onepass serve did not start: " + text + log());
  port_ = static_cast<std::uint16_t>(std::stoi(text.substr(colon + 1)));
  const auto grpc = text.find("grpc listening on ");
  if (grpc != std::string::npos && grpc < at) {
    const auto grpc_colon = text.rfind(':', text.find('\n', grpc));
    grpc_port_ = static_cast<std::uint16_t>(std::stoi(text.substr(grpc_colon + 1)));
  }
}

ServeProcess::~ServeProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  ::unlink(log_path_.c_str());
}

bool ServeProcess::wait_ready(int timeout_ms) const {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    try {
      if (get(port_, "/ping").status == 200) return true;
    } catch (...) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

void ServeProcess::signal(int sig) const { ::kill(pid_, sig); }

int ServeProcess::wait_exit(int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}

std::string ServeProcess::log() const {
  std::ifstream in(log_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace onepass::testing
