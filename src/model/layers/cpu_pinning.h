// Pins the OpenMP team of a forward pass to fixed CPUs, one thread per CPU.
//
// Why: on VMs (measured on this project's 2-vCPU machines) the first parallel region after an
// idle gap of 50 ms or more stalled for 3-15 ms, in multiples of the 4 ms scheduler tick. The
// woken worker thread was placed on the master's CPU, where the master spins at the region's
// barrier waiting for it, until a tick preempts the master. Back to back the cores stay busy
// and nothing moves, which is why only traffic with gaps paid. With team thread i pinned to the
// i-th CPU the worker cannot land on the master's CPU: the first three regions after a 200 ms
// gap took 0.24 ms instead of 10.5 ms (a plain OpenMP program, median of 20; docs/performance.md,
// "Traffic with gaps").
//
// A thread opts in with pin_forward_teams(first); its later forward passes (ThreadScope) pin
// team thread i to the (first + i)-th CPU of those the process may use (its affinity mask when
// first asked, so a container's cpuset is honoured). Nothing is pinned when the user set
// OMP_PROC_BIND or OMP_PLACES (libgomp binds by those) or on a single CPU.
#pragma once

namespace onepass::model {

// The calling thread's forward passes pin their teams from the `first_cpu`-th allowed CPU on.
void pin_forward_teams(int first_cpu);

// Called by ThreadScope inside the calling thread, with its team size set: pins the calling
// thread and its team's workers if the thread opted in. Cheap when nothing changed (one
// parallel region; a thread already on its CPU makes no system call).
void pin_current_team();

// The CPUs this process may use (its affinity mask before any pinning). "All cores" means this:
// omp_get_num_procs() reads the calling thread's mask, which is one CPU once it is pinned.
int usable_cpus();

// Whether pinning can apply in this process (more than one CPU allowed, no OMP_PROC_BIND or
// OMP_PLACES in the environment).
bool cpu_pinning_available();

}  // namespace onepass::model
