#include "held_model.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace onepass::testing {

namespace fs = std::filesystem;

HeldModel::HeldModel(const std::string& fixture_dir) {
  char dir_template[] = "/tmp/onepass_held_model_XXXXXX";
  if (!::mkdtemp(dir_template)) throw std::runtime_error("mkdtemp failed");
  dir_ = dir_template;
  for (const auto& entry : fs::directory_iterator(fixture_dir)) {
    if (entry.path().filename() == "config.json") continue;
    fs::create_symlink(fs::absolute(entry.path()), fs::path(dir_) / entry.path().filename());
  }
  std::ifstream in(fs::path(fixture_dir) / "config.json", std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  config_ = buffer.str();
  const std::string fifo = dir_ + "/config.json";
  if (::mkfifo(fifo.c_str(), 0600) != 0) throw std::runtime_error("mkfifo failed");
  writer_ = std::thread([this] { feed(); });
}

HeldModel::~HeldModel() {
  stop_ = true;
  writer_.join();
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

void HeldModel::feed() {
  const std::string fifo = dir_ + "/config.json";
  while (!stop_) {
    if (served_.load() >= allowed_.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    // Non-blocking open succeeds only while a reader has the FIFO open (ENXIO otherwise), so
    // this thread never blocks and always notices stop_.
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd < 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    std::size_t written = 0;
    while (written < config_.size()) {
      const auto n = ::write(fd, config_.data() + written, config_.size() - written);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      written += static_cast<std::size_t>(n);
    }
    // Counted before the close that lets the reader see the end of the file, so that once the
    // server has used what it read, served() already says so.
    ++served_;
    ::close(fd);
  }
}

}  // namespace onepass::testing
