#include "hub/progress.h"

#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <memory>

namespace onepass::hub {
namespace {

constexpr auto kTerminalInterval = std::chrono::milliseconds(100);
constexpr auto kLineInterval = std::chrono::seconds(5);

std::string human_bytes(double bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", bytes, kUnits[unit]);
  return text;
}

std::string clock_time(double seconds) {
  const auto total = static_cast<std::int64_t>(seconds + 0.5);
  char text[32];
  if (total >= 3600)
    std::snprintf(text, sizeof text, "%" PRId64 ":%02" PRId64 ":%02" PRId64, total / 3600,
                  total / 60 % 60, total % 60);
  else
    std::snprintf(text, sizeof text, "%" PRId64 ":%02" PRId64, total / 60, total % 60);
  return text;
}

}  // namespace

std::string format_progress(const ProgressReport& r) {
  std::string line = r.file + "  " + human_bytes(static_cast<double>(r.bytes));
  if (r.total > 0) {
    line += " / " + human_bytes(static_cast<double>(r.total));
    char percent[16];
    std::snprintf(
        percent, sizeof percent, "  %3d%%",
        static_cast<int>(100.0 * static_cast<double>(r.bytes) / static_cast<double>(r.total)));
    line += percent;
  }
  if (r.bytes_per_second > 0) line += "  " + human_bytes(r.bytes_per_second) + "/s";
  if (r.done)
    line += "  done";
  else if (r.eta_seconds >= 0)
    line += "  ETA " + clock_time(r.eta_seconds);
  return line;
}

DownloadProgress::DownloadProgress(Style style, Sink sink, std::function<Clock::time_point()> now)
    : style_(style), sink_(std::move(sink)), now_(std::move(now)) {}

void DownloadProgress::operator()(const std::string& file, std::uint64_t bytes,
                                  std::uint64_t total) {
  const auto now = now_();
  if (file != file_) {
    // A new file: the rate counts only what this download fetches, not a resumed prefix.
    file_ = file;
    started_ = now;
    last_shown_ = now;
    last_shown_bytes_ = bytes;
    first_bytes_ = bytes;
  }
  ProgressReport report;
  report.file = file;
  report.bytes = bytes;
  report.total = total;
  report.done = total > 0 && bytes >= total;
  const bool due = style_ == Style::kTerminal
                       ? now - last_shown_ >= kTerminalInterval
                       : now - last_shown_ >= kLineInterval ||
                             (total > 0 && (bytes - last_shown_bytes_) * 10 >= total);
  if (!report.done && !due) return;
  const double seconds = std::chrono::duration<double>(now - started_).count();
  if (seconds > 0) report.bytes_per_second = static_cast<double>(bytes - first_bytes_) / seconds;
  if (total > bytes && report.bytes_per_second > 0)
    report.eta_seconds = static_cast<double>(total - bytes) / report.bytes_per_second;
  last_shown_ = now;
  last_shown_bytes_ = bytes;
  sink_(report);
  if (report.done) file_.clear();  // the same path downloaded again starts a new report
}

std::function<void(const std::string&, std::uint64_t, std::uint64_t)> stderr_progress(
    bool enabled) {
  if (!enabled) return {};
  const bool tty = ::isatty(STDERR_FILENO) == 1;
  auto progress = std::make_shared<DownloadProgress>(
      tty ? DownloadProgress::Style::kTerminal : DownloadProgress::Style::kLines,
      [tty](const ProgressReport& report) {
        const std::string line = format_progress(report);
        if (tty) {
          // Redraw in place; \x1b[K clears what a longer previous line left.
          std::fprintf(stderr, "\r%s\x1b[K%s", line.c_str(), report.done ? "\n" : "");
        } else {
          std::fprintf(stderr, "download %s\n", line.c_str());
        }
        std::fflush(stderr);
      });
  return [progress](const std::string& file, std::uint64_t bytes, std::uint64_t total) {
    (*progress)(file, bytes, total);
  };
}

}  // namespace onepass::hub
