// Download progress a person can watch: per file, bytes so far, size, rate and ETA. The resolver
// reports every chunk (ResolveOptions::progress); DownloadProgress decides when a report is
// worth showing and hands it to a sink:
//   kTerminal: often (every 100 ms), for one carriage-return line redrawn in place on a TTY;
//   kLines:    rarely (every 5 s or 10% of the file), for logs and pipes, one line each;
// and always once when a file completes. format_progress() renders the human line.
// Not thread-safe: one DownloadProgress per resolve_model call.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace onepass::hub {

struct ProgressReport {
  std::string file;             // path in the repo
  std::uint64_t bytes = 0;      // written so far (a resumed prefix included)
  std::uint64_t total = 0;      // 0 when the Hub gave no size
  double bytes_per_second = 0;  // over this download, the resumed prefix excluded; 0: unknown
  double eta_seconds = -1;      // -1 when unknown
  bool done = false;            // the file is complete: the last report for it
};

// "model.safetensors  12.3 MiB / 45.6 MiB  27%  3.1 MiB/s  ETA 0:11"
std::string format_progress(const ProgressReport& report);

class DownloadProgress {
 public:
  enum class Style { kTerminal, kLines };
  using Clock = std::chrono::steady_clock;
  using Sink = std::function<void(const ProgressReport&)>;

  DownloadProgress(Style style, Sink sink, std::function<Clock::time_point()> now = Clock::now);

  // The resolver's callback: (file, bytes so far, total bytes).
  void operator()(const std::string& file, std::uint64_t bytes, std::uint64_t total);

 private:
  Style style_;
  Sink sink_;
  std::function<Clock::time_point()> now_;
  std::string file_;
  std::uint64_t first_bytes_ = 0;  // what the file held when this download started
  Clock::time_point started_;
  Clock::time_point last_shown_;
  std::uint64_t last_shown_bytes_ = 0;
};

// Progress to stderr the way a CLI shows it: a redrawn line when stderr is a terminal, else a
// line every few seconds. Returns an empty function when `enabled` is false
// (HF_HUB_DISABLE_PROGRESS_BARS).
std::function<void(const std::string&, std::uint64_t, std::uint64_t)> stderr_progress(bool enabled);

}  // namespace onepass::hub
