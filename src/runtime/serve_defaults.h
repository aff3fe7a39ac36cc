// The serving defaults, each written once: the runtime's options, the batcher's limits, the API's
// reported limits and `onepass serve`'s settings table (apps/onepass/serve_settings.cpp) all
// start from these, so that a default changed here is the default everywhere.
#pragma once

#include <chrono>
#include <cstddef>

namespace onepass::runtime {

// A batch holds at most this many tokens (an input longer than the budget runs alone) ...
inline constexpr std::size_t kDefaultMaxBatchTokens = 16384;
// ... and this many inputs (each item of a client batch counts).
inline constexpr std::size_t kDefaultMaxBatchRequests = 256;
// While several models have traffic, one batch takes at most about this much compute.
inline constexpr std::chrono::milliseconds kDefaultMaxBatchTurn{100};
// Requests (not items) in flight across all models before kOverloaded.
inline constexpr std::size_t kDefaultMaxConcurrentRequests = 512;
// Inputs in one client request; also the sequences a request's chunked inputs may need.
inline constexpr std::size_t kDefaultMaxClientBatchSize = 32;
// Threads running forward passes.
inline constexpr int kDefaultComputeThreads = 1;
// Pin each forward pass's threads to CPUs of their own (model/layers/cpu_pinning.h says why).
inline constexpr bool kDefaultPinThreads = true;

}  // namespace onepass::runtime
