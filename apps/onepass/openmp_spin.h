// How long `onepass serve`'s OpenMP workers spin after a parallel region before they sleep.
//
// libgomp reads GOMP_SPINCOUNT and OMP_WAIT_POLICY once, when the dynamic loader runs its
// constructor, before main(); no call can change them later. Its default (300,000 rounds,
// 8-10 ms here) keeps a worker on its core for that long after every forward pass. With gaps
// between requests that core is the one the woken I/O thread and client want next, and they
// wait behind the spinner (3-4 ms a request under Linux 6.18's EEVDF scheduler, seen with
// `perf sched timehist`). Too short a spin costs as much: after a gap the first regions of a
// forward are uneven, the thread that finishes first sleeps, and waking a thread on an idle
// vCPU took 0.25-0.33 ms on these VMs; with 10,000 rounds the master and its worker put each
// other to sleep at region after region (2-3 ms lost at 2 req/s). 30,000 rounds outlast that
// wake-up and still end well before the answer needs the core.
#pragma once

namespace onepass::app {

// The spin count `onepass serve` runs with unless the user set GOMP_SPINCOUNT or
// OMP_WAIT_POLICY.
inline constexpr const char* kServeSpinCount = "30000";

// When neither variable is set: sets GOMP_SPINCOUNT to kServeSpinCount and executes this binary
// again with the same arguments, so that libgomp starts with it. Returns only when nothing had
// to change or the exec failed (no /proc): the process then keeps libgomp's defaults.
void reexec_with_serve_spin(char** argv);

}  // namespace onepass::app
