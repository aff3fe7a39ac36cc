#include "hub/cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "base/read_file.h"

namespace onepass::hub {
namespace fs = std::filesystem;

// A ref holds a 40-hex-digit commit; anything much longer is not one.
constexpr std::size_t kRefFileLimitBytes = 4096;

namespace {

std::string repo_folder(const std::string& repo_id) {
  std::string out = "models--";
  for (const char c : repo_id) {
    if (c == '/')
      out += "--";
    else
      out += c;
  }
  return out;
}

void make_dirs(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw Error(ErrorKind::kUnavailable,
                "cannot create cache folder " + dir.string() + ": " + ec.message());
}

}  // namespace

bool is_safe_repo_path(const std::string& path) {
  if (path.empty() || path.front() == '/' || path.find('\\') != std::string::npos) return false;
  std::size_t start = 0;
  while (start <= path.size()) {
    const auto slash = path.find('/', start);
    const auto part = path.substr(start, slash == std::string::npos ? path.npos : slash - start);
    if (part.empty() || part == "." || part == "..") return false;
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return true;
}

RepoCache::RepoCache(fs::path cache_dir, const std::string& repo_id)
    : cache_dir_(std::move(cache_dir)), folder_(repo_folder(repo_id)) {
  repo_dir_ = cache_dir_ / folder_;
}

fs::path RepoCache::blob(const std::string& etag) const { return repo_dir_ / "blobs" / etag; }
fs::path RepoCache::incomplete(const std::string& etag) const {
  return repo_dir_ / "blobs" / (etag + ".incomplete");
}
fs::path RepoCache::lock_file(const std::string& etag) const {
  return cache_dir_ / ".locks" / folder_ / (etag + ".lock");
}
fs::path RepoCache::snapshot(const std::string& commit) const {
  return repo_dir_ / "snapshots" / commit;
}

std::optional<std::string> RepoCache::commit_for(const std::string& revision) const {
  std::error_code ec;
  if (fs::is_directory(snapshot(revision), ec) && revision.size() == 40) return revision;
  const auto text = read_file_if_present(repo_dir_ / "refs" / revision, kRefFileLimitBytes);
  if (!text) return std::nullopt;
  std::string commit = text->substr(0, text->find('\n'));
  while (!commit.empty() &&
         (commit.back() == '\n' || commit.back() == '\r' || commit.back() == ' '))
    commit.pop_back();
  if (commit.empty()) return std::nullopt;
  return commit;
}

void RepoCache::write_ref(const std::string& revision, const std::string& commit) const {
  if (revision == commit) return;
  const fs::path ref = repo_dir_ / "refs" / revision;
  make_dirs(ref.parent_path());
  if (auto known = commit_for(revision); known && *known == commit) return;
  // Written beside and renamed, so a reader never sees a half-written ref. The name is the
  // writer's own (process and a per-process count): two threads of one server resolving the
  // same repository must not rename each other's file away.
  static std::atomic<std::uint64_t> writes{0};
  const fs::path tmp = ref.string() + ".tmp" + std::to_string(::getpid()) + "." +
                       std::to_string(writes.fetch_add(1));
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << commit;
    if (!out) throw Error(ErrorKind::kUnavailable, "cannot write " + ref.string());
  }
  fs::rename(tmp, ref);
}

bool RepoCache::has_file(const std::string& commit, const std::string& path) const {
  std::error_code ec;
  return fs::exists(snapshot(commit) / path, ec);  // follows the symlink to the blob
}

void RepoCache::link(const std::string& commit, const std::string& path,
                     const std::string& etag) const {
  const fs::path pointer = snapshot(commit) / path;
  make_dirs(pointer.parent_path());
  const fs::path target = fs::relative(blob(etag), pointer.parent_path());
  std::error_code ec;
  fs::remove(pointer, ec);
  fs::create_symlink(target, pointer, ec);
  if (ec && !fs::exists(pointer)) {
    throw Error(ErrorKind::kUnavailable,
                "cannot link " + pointer.string() + " to its blob: " + ec.message());
  }
}

void RepoCache::mark_missing(const std::string& commit, const std::string& path) const {
  const fs::path marker = repo_dir_ / ".no_exist" / commit / path;
  make_dirs(marker.parent_path());
  std::ofstream touch(marker, std::ios::app);
}

bool RepoCache::known_missing(const std::string& commit, const std::string& path) const {
  std::error_code ec;
  return fs::exists(repo_dir_ / ".no_exist" / commit / path, ec);
}

BlobLock::BlobLock(const fs::path& path) {
  make_dirs(path.parent_path());
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw Error(ErrorKind::kUnavailable,
                "cannot open lock file " + path.string() + ": " + std::strerror(errno));
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    const std::string why = std::strerror(errno);
    ::close(fd_);
    throw Error(ErrorKind::kUnavailable, "cannot lock " + path.string() + ": " + why);
  }
}

BlobLock::~BlobLock() {
  if (fd_ >= 0) {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
}

}  // namespace onepass::hub
