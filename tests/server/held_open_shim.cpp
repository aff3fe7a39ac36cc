// Preloaded (LD_PRELOAD) into an `onepass serve` that a test starts through HeldModel: every
// open of one file waits, as on a filesystem that stalls, until the test lets it through. The
// server itself is the product binary, unchanged; only the C library's open() is wrapped.
//
//   ONEPASS_HELD_OPEN_FILE  the file whose opens are held (matched by device and inode, however
//                           the server spells its path)
//   ONEPASS_HELD_OPEN_GATE  a FIFO that the test keeps open for writing: each held open reads
//                           one byte from it first, so it waits until the test writes one
//   ONEPASS_HELD_OPEN_LOG   a file to which each held open appends one byte once let through
//                           (before it opens the file), so that the test can count them
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdlib>

namespace {

using OpenFn = int (*)(const char*, int, ...);
using OpenatFn = int (*)(int, const char*, int, ...);

OpenFn next_open(const char* name) { return reinterpret_cast<OpenFn>(::dlsym(RTLD_NEXT, name)); }

OpenatFn next_openat(const char* name) {
  return reinterpret_cast<OpenatFn>(::dlsym(RTLD_NEXT, name));
}

// Whether `path` (relative to `dir_fd`) is the held file. Never true without the variables.
bool is_held(int dir_fd, const char* path) {
  static const char* const held = std::getenv("ONEPASS_HELD_OPEN_FILE");
  if (held == nullptr || path == nullptr) return false;
  struct stat target {};
  struct stat opened {};
  if (::stat(held, &target) != 0 || ::fstatat(dir_fd, path, &opened, 0) != 0) return false;
  return target.st_dev == opened.st_dev && target.st_ino == opened.st_ino;
}

// Waits for the test's byte, then counts the open. False (errno set) when the gate is gone.
bool pass_gate() {
  static const OpenFn real_open = next_open("open");
  const char* gate = std::getenv("ONEPASS_HELD_OPEN_GATE");
  const char* log = std::getenv("ONEPASS_HELD_OPEN_LOG");
  if (gate == nullptr || log == nullptr) {
    errno = EIO;
    return false;
  }
  const int gate_fd = real_open(gate, O_RDONLY | O_CLOEXEC);
  if (gate_fd < 0) return false;
  char byte = 0;
  ssize_t n = 0;
  do {
    n = ::read(gate_fd, &byte, 1);
  } while (n < 0 && errno == EINTR);
  ::close(gate_fd);
  if (n != 1) {
    errno = EIO;
    return false;
  }
  const int log_fd = real_open(log, O_WRONLY | O_APPEND | O_CLOEXEC);
  if (log_fd < 0) return false;
  const bool logged = ::write(log_fd, &byte, 1) == 1;
  ::close(log_fd);
  if (!logged) errno = EIO;
  return logged;
}

mode_t mode_arg(int flags, va_list args) {
  return (flags & (O_CREAT | O_TMPFILE)) != 0 ? static_cast<mode_t>(va_arg(args, int)) : 0;
}

}  // namespace

extern "C" {

int open(const char* path, int flags, ...) {
  static const OpenFn real = next_open("open");
  va_list args;
  va_start(args, flags);
  const mode_t mode = mode_arg(flags, args);
  va_end(args);
  if (is_held(AT_FDCWD, path) && !pass_gate()) return -1;
  return real(path, flags, mode);
}

int open64(const char* path, int flags, ...) {
  static const OpenFn real = next_open("open64");
  va_list args;
  va_start(args, flags);
  const mode_t mode = mode_arg(flags, args);
  va_end(args);
  if (is_held(AT_FDCWD, path) && !pass_gate()) return -1;
  return real(path, flags, mode);
}

int openat(int dir_fd, const char* path, int flags, ...) {
  static const OpenatFn real = next_openat("openat");
  va_list args;
  va_start(args, flags);
  const mode_t mode = mode_arg(flags, args);
  va_end(args);
  if (is_held(dir_fd, path) && !pass_gate()) return -1;
  return real(dir_fd, path, flags, mode);
}

int openat64(int dir_fd, const char* path, int flags, ...) {
  static const OpenatFn real = next_openat("openat64");
  va_list args;
  va_start(args, flags);
  const mode_t mode = mode_arg(flags, args);
  va_end(args);
  if (is_held(dir_fd, path) && !pass_gate()) return -1;
  return real(dir_fd, path, flags, mode);
}

}  // extern "C"
