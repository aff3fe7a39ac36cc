// read_file: what the server reads from a folder it did not write is a regular file of bounded
// size, or a clear error at once: never a wait on a named pipe, never a device read forever.
#include "base/read_file.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "base/error.h"

namespace onepass {
namespace {

namespace fs = std::filesystem;

class ReadFile : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "onepass_read_file_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, const std::string& bytes) {
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
    return dir_ / name;
  }

  // The error read_file throws for `path`, checked to come at once.
  Error error_of(const fs::path& path, std::size_t limit_bytes) {
    const auto start = std::chrono::steady_clock::now();
    try {
      read_file(path, limit_bytes);
    } catch (const Error& e) {
      EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
      EXPECT_EQ(std::string(e.what()).find(dir_.string()), std::string::npos)
          << "the message names the folder: " << e.what();
      return e;
    }
    ADD_FAILURE() << "no error for " << path.filename();
    return Error(ErrorKind::kInternal, "");
  }

  fs::path dir_;
};

TEST_F(ReadFile, ReadsAFileUpToItsLimitExactly) {
  const auto path = write("config.json", "{\"a\": 1}");
  EXPECT_EQ(read_file(path, 8), "{\"a\": 1}");
  EXPECT_EQ(read_file_if_present(path, 8), "{\"a\": 1}");
  EXPECT_EQ(read_file(write("empty.json", ""), 8), "");
  const Error e = error_of(path, 7);
  EXPECT_EQ(e.kind(), ErrorKind::kInvalidModel);
  EXPECT_NE(std::string(e.what()).find("config.json is larger than"), std::string::npos)
      << e.what();
}

TEST_F(ReadFile, AMissingFileIsNotFoundOrAbsent) {
  EXPECT_EQ(error_of(dir_ / "config.json", 1024).kind(), ErrorKind::kNotFound);
  EXPECT_FALSE(read_file_if_present(dir_ / "config.json", 1024));
}

TEST_F(ReadFile, ANamedPipeIsRefusedWithoutWaitingForAWriter) {
  const auto fifo = dir_ / "config.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const Error e = error_of(fifo, kSettingsFileLimitBytes);
  EXPECT_EQ(e.kind(), ErrorKind::kInvalidModel);
  EXPECT_STREQ(e.what(), "config.json is not a regular file");
  EXPECT_THROW(read_file_if_present(fifo, kSettingsFileLimitBytes), Error);
}

TEST_F(ReadFile, ALinkToADeviceIsRefused) {
  fs::create_symlink("/dev/zero", dir_ / "tokenizer.json");
  const Error e = error_of(dir_ / "tokenizer.json", kTokenizerFileLimitBytes);
  EXPECT_EQ(e.kind(), ErrorKind::kInvalidModel);
  EXPECT_STREQ(e.what(), "tokenizer.json is not a regular file");
  // A link to a regular file is read through.
  write("real.json", "{}");
  fs::create_symlink(dir_ / "real.json", dir_ / "linked.json");
  EXPECT_EQ(read_file(dir_ / "linked.json", 8), "{}");
}

TEST_F(ReadFile, AnOversizedFileIsRefusedBeforeItIsRead) {
  // 128 MiB of holes: costs no disk, and reading it would cost 128 MiB of memory.
  const auto path = write("config.json", "");
  fs::resize_file(path, std::uintmax_t{128} << 20);
  const Error e = error_of(path, kSettingsFileLimitBytes);
  EXPECT_EQ(e.kind(), ErrorKind::kInvalidModel);
  EXPECT_STREQ(e.what(), "config.json is larger than the 8 MiB limit for this file");
}

}  // namespace
}  // namespace onepass
