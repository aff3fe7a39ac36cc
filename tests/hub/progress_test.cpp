// DownloadProgress: when a report is shown (terminal: every 100 ms; lines: every 5 s or 10% of
// the file; always at completion), and the rate and ETA it carries, on an injected clock.
#include "hub/progress.h"

#include <vector>

#include "gtest/gtest.h"

namespace onepass::hub {
namespace {

using Clock = DownloadProgress::Clock;

TEST(DownloadProgress, LinesEveryTenPercentWithRateAndEta) {
  Clock::time_point now{};
  std::vector<ProgressReport> shown;
  DownloadProgress progress(
      DownloadProgress::Style::kLines, [&](const ProgressReport& r) { shown.push_back(r); },
      [&] { return now; });
  const std::uint64_t total = 1000;
  for (std::uint64_t bytes = 10; bytes <= total; bytes += 10) {
    now += std::chrono::milliseconds(10);  // 10 bytes per 10 ms: 1000 B/s
    progress("model.safetensors", bytes, total);
  }
  // 100 chunks; shown at 110, 210, ... (10% past the previous report) and at 1000.
  ASSERT_EQ(shown.size(), 10u);
  EXPECT_EQ(shown[0].bytes, 110u);
  EXPECT_NEAR(shown[0].bytes_per_second, 1000.0, 1.0);
  EXPECT_NEAR(shown[0].eta_seconds, 0.89, 0.01);
  EXPECT_FALSE(shown[0].done);
  EXPECT_TRUE(shown.back().done);
  EXPECT_EQ(shown.back().bytes, total);
  EXPECT_EQ(format_progress(shown.back()),
            "model.safetensors  1000 B / 1000 B  100%  1000 B/s  done");
}

TEST(DownloadProgress, TerminalRedrawsAtMostEveryTenthOfASecondAndResumesCountOnlyNewBytes) {
  Clock::time_point now{};
  std::vector<ProgressReport> shown;
  DownloadProgress progress(
      DownloadProgress::Style::kTerminal, [&](const ProgressReport& r) { shown.push_back(r); },
      [&] { return now; });
  const std::uint64_t total = 4u << 20;
  // Resumed at 2 MiB: 1 MiB per second from there.
  for (std::uint64_t bytes = 2u << 20; bytes <= total; bytes += 64u << 10) {
    progress("big.bin", bytes, total);
    now += std::chrono::milliseconds(62) + std::chrono::microseconds(500);
  }
  // 33 chunks over about 2 s: a redraw every other chunk (125 ms), plus the last.
  EXPECT_GE(shown.size(), 15u);
  EXPECT_LE(shown.size(), 18u);
  EXPECT_TRUE(shown.back().done);
  EXPECT_NEAR(shown[1].bytes_per_second, 1024.0 * 1024, 1024.0);
  const std::string line = format_progress(shown[1]);
  EXPECT_NE(line.find("big.bin  2.2 MiB / 4.0 MiB   56%  1.0 MiB/s  ETA 0:02"), std::string::npos)
      << line;
}

}  // namespace
}  // namespace onepass::hub
