#include "base/mapped_file.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>

#include "base/error.h"

namespace onepass {
namespace {

TEST(MappedFile, MapsTheFileBytes) {
  const std::filesystem::path path =
      std::string(ONEPASS_TEST_DATA_DIR) + "/fixtures/models/bert-tiny-nli/config.json";
  MappedFile file(path);
  std::ifstream in(path, std::ios::binary);
  const std::string expected((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  ASSERT_EQ(file.size(), expected.size());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(file.bytes().data()), file.size()), expected);
}

TEST(MappedFile, MissingFileIsNotFound) {
  try {
    MappedFile file("/nonexistent/onepass/file.bin");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
    EXPECT_NE(std::string(e.what()).find("file.bin"), std::string::npos);
  }
}

// A weight file that is a named pipe is refused at once; opening it used to wait for a writer.
TEST(MappedFile, ANamedPipeIsRefusedWithoutBlocking) {
  std::string dir = (std::filesystem::temp_directory_path() / "onepass_mapped_XXXXXX").string();
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  const std::filesystem::path fifo = std::filesystem::path(dir) / "model.safetensors";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  try {
    MappedFile file(fifo);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidModel);
    EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace onepass
