// One model repo's folder in the huggingface_hub cache, laid out exactly as file_download.py
// writes it, so that onepass and Hugging Face's tools share one cache:
//   models--{org}--{name}/blobs/{etag}                 file contents, named by ETag
//   models--{org}--{name}/blobs/{etag}.incomplete      a download in progress (resumable)
//   models--{org}--{name}/refs/{revision}              the commit a branch or tag pointed at
//   models--{org}--{name}/snapshots/{commit}/{path}    relative symlinks to ../../blobs/{etag}
//   models--{org}--{name}/.no_exist/{commit}/{path}    empty: the repo lacks this file
//   .locks/models--{org}--{name}/{etag}.lock           flock() held while a blob is written
// Not thread-safe by itself; concurrent writers of one blob serialise on its BlobLock.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace onepass::hub {

class RepoCache {
 public:
  RepoCache(std::filesystem::path cache_dir, const std::string& repo_id);

  const std::filesystem::path& repo_dir() const { return repo_dir_; }
  std::filesystem::path blob(const std::string& etag) const;
  std::filesystem::path incomplete(const std::string& etag) const;
  std::filesystem::path lock_file(const std::string& etag) const;
  std::filesystem::path snapshot(const std::string& commit) const;

  // The commit `revision` means here: itself when it is a commit with a snapshot folder, else
  // the content of refs/{revision}; nullopt when the cache does not know it.
  std::optional<std::string> commit_for(const std::string& revision) const;
  void write_ref(const std::string& revision, const std::string& commit) const;

  // True when snapshots/{commit}/{path} exists and its target blob too.
  bool has_file(const std::string& commit, const std::string& path) const;
  // Points snapshots/{commit}/{path} at blobs/{etag} with a relative symlink (replacing one).
  void link(const std::string& commit, const std::string& path, const std::string& etag) const;
  void mark_missing(const std::string& commit, const std::string& path) const;
  bool known_missing(const std::string& commit, const std::string& path) const;

 private:
  std::filesystem::path cache_dir_;
  std::filesystem::path repo_dir_;
  std::string folder_;  // models--org--name
};

// An exclusive flock() on a lock file, as Python's filelock takes it, so that onepass and
// huggingface_hub downloading the same blob at once wait for each other. Blocks until held.
class BlobLock {
 public:
  explicit BlobLock(const std::filesystem::path& path);
  ~BlobLock();
  BlobLock(const BlobLock&) = delete;
  BlobLock& operator=(const BlobLock&) = delete;

 private:
  int fd_ = -1;
};

// A repo path is relative, uses '/', and has no empty, "." or ".." component (a hostile file
// list must not write outside the snapshot).
bool is_safe_repo_path(const std::string& path);

}  // namespace onepass::hub
