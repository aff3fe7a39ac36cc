"""What one load phase of a stress check cost, and how long the server held its requests, measured
on the server's side so that a load generator competing for the same cores cannot blur it:

- CPU seconds of the server, of the load generators and of the whole machine (/proc), so that a
  report says who had the cores;
- the server's own histogram `onepass_request_duration_seconds` (admission to answer) for one
  model, taken as the difference of two /metrics scrapes: how many requests the server accepted,
  the mean and p99 of the time it held them, and the mean number it held at once (Little's law:
  total time held / wall time), none of which includes time spent in the client.

Standard library only (python3 from Debian)."""
import math
import os
import re
import threading
import time

DURATION_FAMILY = "onepass_request_duration_seconds"


def parse_histogram(text, family, model):
    """(upper bounds ending with inf, cumulative counts, sum, count) of `family`{model=...}."""
    bucket = re.compile(rf'^{family}_bucket{{model="{re.escape(model)}",le="([^"]+)"}} (\S+)$')
    bounds, counts, total, count = [], [], 0.0, 0
    for line in text.splitlines():
        m = bucket.match(line)
        if m:
            bounds.append(math.inf if m.group(1) == "+Inf" else float(m.group(1)))
            counts.append(int(float(m.group(2))))
        elif line.startswith(f'{family}_sum{{model="{model}"}} '):
            total = float(line.split()[-1])
        elif line.startswith(f'{family}_count{{model="{model}"}} '):
            count = int(float(line.split()[-1]))
    return bounds, counts, total, count


def quantile(q, bounds, cumulative):
    """The q-quantile of a cumulative histogram, interpolated linearly inside its bucket as
    Prometheus' histogram_quantile does; the last finite bound when it falls in +Inf."""
    if not cumulative or cumulative[-1] == 0:
        return 0.0
    rank = q * cumulative[-1]
    below, lower = 0, 0.0
    for bound, count in zip(bounds, cumulative):
        if count >= rank:
            if math.isinf(bound):
                return lower
            return lower + (bound - lower) * (rank - below) / max(count - below, 1)
        below, lower = count, bound
    return lower


def machine_cpu_s():
    """(busy, total) CPU seconds of the whole machine since boot, all cores together."""
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    total = sum(fields[:8])  # user .. steal (guest time is already in user)
    tick = os.sysconf("SC_CLK_TCK")
    return (total - idle) / tick, total / tick


class Snapshot:
    def __init__(self, server, model, benches):
        self.time = time.monotonic()
        self.server_cpu = server.cpu_s()
        self.client_cpu = sum(b.cpu_s() or 0.0 for b in benches)
        self.machine_busy, self.machine_total = machine_cpu_s()
        self.histogram = parse_histogram(server.metrics(), DURATION_FAMILY, model)


class Phase:
    """Measures one phase: construct it before starting the benches, watch() them, finish() with
    their runs. Each bench first sends every distinct input alone (its reference pass); those
    requests are no load, so the phase starts once the server has completed `skip` more requests
    of `model` than it had at construction (a thread polls /metrics to see that moment)."""

    def __init__(self, server, model, skip, interval=0.05):
        self.server, self.model, self.skip, self.interval = server, model, skip, interval
        self.base = Snapshot(server, model, [])
        self.start = None
        self.benches = []
        self._stop = threading.Event()
        self._thread = None

    def watch(self, *benches):
        self.benches = list(benches)
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self):
        target = self.base.histogram[3] + self.skip
        while not self._stop.is_set():
            if parse_histogram(self.server.metrics(), DURATION_FAMILY, self.model)[3] >= target:
                self.start = Snapshot(self.server, self.model, self.benches)
                return
            self._stop.wait(self.interval)

    def finish(self, runs):
        """Figures of the phase, from its start to now. `runs` are the benches' results in the
        order given to watch() (their client_cpu_s is each bench's whole-life CPU time)."""
        self._stop.set()
        self._thread.join()
        end = Snapshot(self.server, self.model, [])
        start = self.start or self.base
        bounds, cum1, sum1, count1 = end.histogram
        _, cum0, sum0, count0 = start.histogram
        delta = [b - a for a, b in zip(cum0, cum1)] if cum0 else cum1
        wall = end.time - start.time
        accepted = count1 - count0
        held = sum1 - sum0
        client = sum(r["client_cpu_s"] for r in runs) - start.client_cpu
        return {
            "wall_s": wall,
            "started_after_reference": self.start is not None,
            "server_cpu_s": end.server_cpu - start.server_cpu,
            "client_cpu_s": client,
            "machine_busy_s": end.machine_busy - start.machine_busy,
            "machine_cpu_s": end.machine_total - start.machine_total,
            "accepted": accepted,
            "accepted_per_s": accepted / wall if wall > 0 else 0.0,
            "server_mean_ms": 1000 * held / accepted if accepted else 0.0,
            "server_p99_ms": 1000 * quantile(0.99, bounds, delta),
            "held_at_once": held / wall if wall > 0 else 0.0,
        }


def describe_cpu(f):
    """One line: who had the cores during a phase."""
    wall = f["wall_s"]
    others = max(0.0, f["machine_busy_s"] - f["server_cpu_s"] - f["client_cpu_s"])
    cores = f["machine_cpu_s"] / wall if wall > 0 else 0.0
    return (f"CPU over {wall:.1f} s on {cores:.0f} cores: server {f['server_cpu_s']:.1f} s "
            f"({f['server_cpu_s'] / wall:.2f} cores), load generator {f['client_cpu_s']:.1f} s "
            f"({f['client_cpu_s'] / wall:.2f} cores), other processes {others:.1f} s "
            f"({others / wall:.2f} cores), idle {(f['machine_cpu_s'] - f['machine_busy_s']) / wall:.2f}"
            f" cores")


def describe_server_time(f):
    """One line: how long the server held the accepted requests."""
    return (f"server side: {f['accepted']} accepted ({f['accepted_per_s']:.1f}/s), held "
            f"mean {f['server_mean_ms']:.1f} ms p99 {f['server_p99_ms']:.1f} ms, "
            f"{f['held_at_once']:.1f} held at once on average")
