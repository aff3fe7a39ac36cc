#include "base/read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "base/error.h"

namespace onepass {

namespace {

std::string mib(std::size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// nullopt when nothing is at `path` and `missing_ok`.
std::optional<std::string> read_bounded(const std::filesystem::path& path, std::size_t limit_bytes,
                                        bool missing_ok) {
  const std::string name = path.filename().string();
  // O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer, forever.
  const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0) {
    const int err = errno;
    if (missing_ok && err == ENOENT) return std::nullopt;
    throw Error(ErrorKind::kNotFound, "cannot open " + name + ": " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
    throw Error(ErrorKind::kInvalidModel, name + " is not a regular file");
  const auto too_large = [&] {
    return Error(ErrorKind::kInvalidModel,
                 name + " is larger than the " + mib(limit_bytes) + " limit for this file");
  };
  if (static_cast<std::uint64_t>(st.st_size) > limit_bytes) throw too_large();
  // The size may change under us: read at most one byte past the limit, whatever fstat said.
  std::string bytes(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t used = 0;
  for (;;) {
    if (used == bytes.size()) {
      if (bytes.size() > limit_bytes) throw too_large();
      bytes.resize(std::min(limit_bytes + 1, std::max<std::size_t>(bytes.size() * 2, 4096)));
    }
    const ssize_t n = ::read(fd.get(), bytes.data() + used, bytes.size() - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(ErrorKind::kInvalidModel, "cannot read " + name + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
  }
  if (used > limit_bytes) throw too_large();
  bytes.resize(used);
  return bytes;
}

}  // namespace

std::string read_file(const std::filesystem::path& path, std::size_t limit_bytes) {
  return *read_bounded(path, limit_bytes, /*missing_ok=*/false);
}

std::optional<std::string> read_file_if_present(const std::filesystem::path& path,
                                                std::size_t limit_bytes) {
  return read_bounded(path, limit_bytes, /*missing_ok=*/true);
}

}  // namespace onepass
