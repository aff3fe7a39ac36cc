// How long `onepass serve`'s OpenMP workers spin after a parallel region before they sleep.
//
// libgomp reads GOMP_SPINCOUNT and OMP_WAIT_POLICY once, when the dynamic loader runs its
// constructor, before main(); no call can change them later. Its default (300,000 rounds,
// 8-10 ms here) keeps a worker on its core for that long after every forward pass. With gaps
// between requests that core is the one the woken I/O thread and client want next, and they
// wait behind the spinner (3-4 ms a request under Linux 6.18's EEVDF scheduler, seen with
// `perf sched timehist`). 10,000 rounds still carry a worker across one forward's regions.
#pragma once

namespace onepass::app {

// The spin count `onepass serve` runs with unless the user set GOMP_SPINCOUNT or
// OMP_WAIT_POLICY.
inline constexpr const char* kServeSpinCount = "10000";

// When neither variable is set: sets GOMP_SPINCOUNT to kServeSpinCount and executes this binary
// again with the same arguments, so that libgomp starts with it. Returns only when nothing had
// to change or the exec failed (no /proc): the process then keeps libgomp's defaults.
void reexec_with_serve_spin(char** argv);

}  // namespace onepass::app
