#include "base/mapped_file.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace onepass
