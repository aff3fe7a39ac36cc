#!/usr/bin/env bash
# Time from process start to first answer (issue 6: <= 1 s for the mDeBERTa-base shape with a
# warm page cache), and the resident memory of the serving process against the weights' size.
# Starts `onepass serve` RUNS times; each time a client retries one request every 5 ms from the
# moment the process is spawned, and the clock stops at the first 200 answer.
#   bench/perf/startup.sh [MODEL_DIR] [RUNS]   (default: the mDeBERTa-base perf shape, 5 runs)
# Environment: THREADS (default 2), SERVE_ARGS (more serve flags, split on spaces, e.g.
# "--precision auto --state-dir DIR": auto.sh times a start from a saved verdict this way).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
model=${1:-$root/bench/out/perf/mdeberta-v3-base-shaped}
runs=${2:-5}
bin=$root/build/release/apps/onepass/onepass
[ -f "$model/model.safetensors" ] || { echo "no weights in $model: run bench/perf/run.sh first" >&2; exit 2; }
cat "$model"/*.safetensors >/dev/null  # warm page cache, as the target says

/usr/bin/python3 - "$bin" "$model" "$runs" "${THREADS:-2}" "${SERVE_ARGS:-}" <<'PY'
import json, os, socket, statistics, subprocess, sys, time, urllib.request

binary, model, runs, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
extra = sys.argv[5].split()
weights = sum(os.path.getsize(os.path.join(model, f)) for f in os.listdir(model) if f.endswith(".safetensors"))
body = json.dumps({"inputs": "Angela Merkel ist eine Politikerin in Deutschland"}).encode()

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]

def rss_kb(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0

times, rss, hwm = [], [], []
for _ in range(runs):
    port = free_port()
    start = time.perf_counter()
    proc = subprocess.Popen([binary, "serve", "--model", f"m={model}", "--port", str(port), "--threads", threads, *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            if proc.poll() is not None:
                sys.exit(f"onepass serve exited with {proc.returncode}")
            try:
                req = urllib.request.Request(f"http://127.0.0.1:{port}/invocations", data=body,
                                             headers={"Content-Type": "application/json"})
                with urllib.request.urlopen(req, timeout=30) as r:
                    if r.status == 200:
                        r.read()
                        break
            except OSError:
                pass
            time.sleep(0.005)
        times.append(time.perf_counter() - start)
        rss.append(rss_kb(proc.pid, "VmRSS") * 1024)
        hwm.append(rss_kb(proc.pid, "VmHWM") * 1024)
    finally:
        proc.terminate()
        proc.wait()

mb = 1 << 20
print(json.dumps({
    "model": os.path.basename(model.rstrip("/")),
    "runs": runs,
    "start_to_first_answer_s": {"median": statistics.median(times), "min": min(times), "max": max(times)},
    "weights_mb": round(weights / mb, 1),
    "rss_after_first_answer_mb": round(statistics.median(rss) / mb, 1),
    "rss_minus_weights_mb": round((statistics.median(rss) - weights) / mb, 1),
    "peak_rss_during_load_mb": round(max(hwm) / mb, 1),
}, indent=2))
PY
