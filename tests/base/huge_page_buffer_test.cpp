#include "base/huge_page_buffer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

namespace onepass {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;

// The "THPeligible:" value of the mapping that holds `address` in /proc/self/smaps ("" if the
// kernel does not report it).
std::string thp_eligible(const void* address) {
  const auto target = reinterpret_cast<std::uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = lo <= target && target < hi;
      continue;
    }
    if (inside && line.rfind("THPeligible:", 0) == 0) {
      std::istringstream value(line.substr(12));
      std::string v;
      value >> v;
      return v;
    }
  }
  return "";
}

// Transparent huge pages as this kernel has them: "" without, else the bracketed mode.
std::string thp_mode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string all;
  std::getline(in, all);
  const auto open = all.find('['), close = all.find(']');
  return open == std::string::npos ? "" : all.substr(open + 1, close - open - 1);
}

TEST(HugePageBuffer, IsZeroedWritableAndAlignedToAHugePage) {
  const std::size_t bytes = 5 * kHugePage + 12345;  // a tail that is not a whole page
  HugePageBuffer buffer(bytes);
  ASSERT_NE(buffer.data(), nullptr);
  EXPECT_EQ(buffer.size(), bytes);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer.data()) % kHugePage, 0u);
  auto* p = static_cast<unsigned char*>(buffer.data());
  EXPECT_EQ(p[0], 0);
  EXPECT_EQ(p[bytes - 1], 0);
  std::memset(p, 0xab, bytes);
  EXPECT_EQ(p[bytes - 1], 0xab);
}

TEST(HugePageBuffer, AsksForHugePagesWhereTheKernelHasThem) {
  HugePageBuffer buffer(3 * kHugePage);
  std::memset(buffer.data(), 1, buffer.size());
  const std::string mode = thp_mode();
  if (mode == "madvise" || mode == "always") {
    // In "madvise" mode only the hint makes the mapping eligible.
    EXPECT_EQ(thp_eligible(buffer.data()), "1") << "transparent huge pages: " << mode;
  } else {
    EXPECT_NE(thp_eligible(buffer.data()), "1") << "transparent huge pages: " << mode;
  }
}

TEST(HugePageBuffer, MovesOwnership) {
  HugePageBuffer a(kHugePage);
  void* const data = a.data();
  HugePageBuffer b(std::move(a));
  EXPECT_EQ(b.data(), data);
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_EQ(a.size(), 0u);
  HugePageBuffer c;
  c = std::move(b);
  EXPECT_EQ(c.data(), data);
  EXPECT_EQ(c.size(), kHugePage);
  EXPECT_EQ(HugePageBuffer(0).data(), nullptr);
}

}  // namespace
}  // namespace onepass
