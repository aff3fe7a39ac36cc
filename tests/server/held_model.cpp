#include "held_model.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace onepass::testing {

namespace fs = std::filesystem;

HeldModel::HeldModel(const std::string& fixture_dir) {
  char dir_template[] = "/tmp/onepass_held_model_XXXXXX";
  if (!::mkdtemp(dir_template)) throw std::runtime_error("mkdtemp failed");
  dir_ = dir_template;
  // The model in its own folder; config.json a copy (the shim holds it by inode, and another
  // model of the same server may use the fixture's own file).
  const fs::path model = fs::path(dir_) / "model";
  fs::create_directory(model);
  for (const auto& entry : fs::directory_iterator(fixture_dir)) {
    if (entry.path().filename() == "config.json") continue;
    fs::create_symlink(fs::absolute(entry.path()), model / entry.path().filename());
  }
  fs::copy_file(fs::path(fixture_dir) / "config.json", model / "config.json");
  gate_ = dir_ + "/gate";
  log_ = dir_ + "/served";
  if (::mkfifo(gate_.c_str(), 0600) != 0) throw std::runtime_error("mkfifo failed");
  std::ofstream(log_).close();
  // O_RDWR: a FIFO's open for writing would wait for a reader; this one never blocks, and the
  // server's opens for reading find a writer.
  gate_fd_ = ::open(gate_.c_str(), O_RDWR | O_CLOEXEC);
  if (gate_fd_ < 0) throw std::runtime_error("opening the gate failed");
  dir_ = model.string();
}

HeldModel::~HeldModel() {
  if (gate_fd_ >= 0) ::close(gate_fd_);
  std::error_code ec;
  fs::remove_all(fs::path(dir_).parent_path(), ec);
}

std::vector<std::string> HeldModel::env() const {
  // The shim comes before the sanitizer runtime in the asan build's list of libraries, which
  // AddressSanitizer refuses unless told that this is intended.
  std::string asan = "verify_asan_link_order=0";
  if (const char* options = std::getenv("ASAN_OPTIONS"); options != nullptr && *options != 0)
    asan = std::string(options) + ":" + asan;
  return {"LD_PRELOAD=" ONEPASS_HELD_OPEN_SHIM, "ONEPASS_HELD_OPEN_FILE=" + dir_ + "/config.json",
          "ONEPASS_HELD_OPEN_GATE=" + gate_, "ONEPASS_HELD_OPEN_LOG=" + log_,
          "ASAN_OPTIONS=" + asan};
}

void HeldModel::allow(int count) {
  const std::string bytes(static_cast<std::size_t>(count), 'x');
  std::size_t written = 0;
  while (written < bytes.size()) {
    const auto n = ::write(gate_fd_, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error("writing to the gate failed");
    written += static_cast<std::size_t>(n);
  }
}

int HeldModel::served() const {
  struct stat st {};
  if (::stat(log_.c_str(), &st) != 0) throw std::runtime_error("the served log is gone");
  return static_cast<int>(st.st_size);
}

}  // namespace onepass::testing
