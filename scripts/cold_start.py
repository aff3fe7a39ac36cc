#!/usr/bin/env python3
"""Cold start of the onepass image, measured end to end: from `podman run` to the first 200 answer
of POST /invocations (the client retries every 5 ms from the moment podman is called), the way a
scale-from-zero request sees it once a node is there. Three ways the model reaches the container:

  volume     the model folder mounted read-only at /opt/ml/model (a PVC, an image volume, an
             unpacked model.tar.gz);
  hub-warm   HF_MODEL_ID with the Hub cache on a volume already holding the snapshot
             (HF_HUB_OFFLINE=1: nothing asked of the Hub);
  hub-cold   HF_MODEL_ID with an empty cache volume, downloaded from a Hub stand-in on loopback
             (tests/hub/hub_server.py serving MODEL_DIR as acme/tiny-nli@v1): MB/s is the
             bytes of the downloaded blobs over the time hub-cold takes beyond hub-warm.

  scripts/cold_start.py IMAGE MODEL_DIR [RUNS [KEY=VALUE...]]
      as root, with CONTAINERS_CONF set as scripts/image-test.sh sets it; KEY=VALUE are passed
      to every container's environment

Every run uses host networking (the Hub's redirects name 127.0.0.1) and a read-only root
filesystem; the page cache is warmed before each series (the weights read once), as on a node
that served the model before. Prints one line per case: median, min and max of RUNS runs, and
onepass's own model_load duration_ms (the part of the start that is onepass's).
"""
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests/data/fixtures/models")
BODY = json.dumps({"inputs": {"text": "A man plays a guitar.",
                              "text_pair": "Someone makes music."}}).encode()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def podman(*args, check=True):
    return subprocess.run(["podman", *args], check=check, capture_output=True, text=True).stdout


EXTRA_ENV = {}


def first_answer(image, env, volumes):
    """Seconds from `podman run` to the first 200, and onepass's model_load duration_ms."""
    env = {**EXTRA_ENV, **env}
    port = free_port()
    name = f"cold-start-{port}"
    args = ["run", "-d", "--name", name, "--network", "host", "--read-only",
            "-e", "ONEPASS_LOG_FORMAT=json", "-e", "ONEPASS_HOST=127.0.0.1",
            "-e", f"ONEPASS_PORT={port}"]
    for key, value in env.items():
        args += ["-e", f"{key}={value}"]
    for volume in volumes:
        args += ["-v", volume]
    url = f"http://127.0.0.1:{port}/invocations"
    start = time.perf_counter()
    subprocess.run(["podman", *args, image, "serve"], check=True, capture_output=True)
    try:
        while True:
            try:
                req = urllib.request.Request(url, data=BODY,
                                             headers={"Content-Type": "application/json"})
                with urllib.request.urlopen(req, timeout=60) as r:
                    if r.status == 200:
                        r.read()
                        break
            except OSError:
                pass
            if time.perf_counter() - start > 300:
                sys.exit(f"no answer in 300 s:\n{podman('logs', name, check=False)}")
            time.sleep(0.005)
        took = time.perf_counter() - start
        load_ms = None
        for line in subprocess.run(["podman", "logs", name], capture_output=True,
                                   text=True).stderr.splitlines():
            if '"model_load"' in line:
                load_ms = json.loads(line).get("duration_ms")
        return took, load_ms
    finally:
        podman("rm", "-f", "-t", "0", name, check=False)


def series(label, runs, run_once):
    results = [run_once() for _ in range(runs)]
    times = [t for t, _ in results]
    loads = [ms for _, ms in results if ms is not None]
    load = f"{statistics.median(loads):.0f} ms" if loads else "?"
    print(f"{label}: first 200 after {statistics.median(times):.2f} s (median of {runs}; "
          f"{min(times):.2f}-{max(times):.2f}), model_load {load}", flush=True)
    return statistics.median(times)


def main(image, model_dir, runs):
    model_dir = os.path.abspath(model_dir)
    for f in os.listdir(model_dir):  # warm page cache
        with open(os.path.join(model_dir, f), "rb") as fh:
            while fh.read(1 << 24):
                pass
    work = tempfile.mkdtemp(prefix="cold-start-")
    hub = None
    try:
        label = os.path.basename(model_dir)
        series(f"{label} volume", runs,
               lambda: first_answer(image, {}, [f"{model_dir}:/opt/ml/model:ro"]))
        # The Hub stand-in serves the fixtures, with this model as acme/tiny-nli@v1.
        models = os.path.join(work, "models")
        os.mkdir(models)
        for name in os.listdir(FIXTURES):
            os.symlink(model_dir if name == "bert-tiny-nli" else os.path.join(FIXTURES, name),
                       os.path.join(models, name))
        ports = os.path.join(work, "hub.ports")
        with open(ports, "w") as out:
            hub = subprocess.Popen([sys.executable, os.path.join(ROOT, "tests/hub/hub_server.py"),
                                    models], stdout=out)
        while not open(ports).read().strip():
            time.sleep(0.1)
        hub_port = open(ports).read().split()[0]
        hub_env = {"HF_MODEL_ID": "acme/tiny-nli", "HF_MODEL_REVISION": "v1",
                   "HF_ENDPOINT": f"http://127.0.0.1:{hub_port}"}

        def cold():
            cache = os.path.join(work, "cold-cache")
            shutil.rmtree(cache, ignore_errors=True)
            os.mkdir(cache)
            os.chmod(cache, 0o777)
            return first_answer(image, hub_env, [f"{cache}:/var/cache/onepass/huggingface"])

        cold_s = series(f"{label} hub-cold", runs, cold)
        warm_cache = os.path.join(work, "cold-cache")  # the last cold run filled it
        warm_s = series(f"{label} hub-warm", runs, lambda: first_answer(
            image, {**hub_env, "HF_HUB_OFFLINE": "1"},
            [f"{warm_cache}:/var/cache/onepass/huggingface"]))
        blobs = os.path.join(warm_cache, "hub/models--acme--tiny-nli/blobs")
        mb = sum(os.path.getsize(os.path.join(blobs, f)) for f in os.listdir(blobs)) / 1e6
        print(f"{label}: {mb:.1f} MB downloaded in {cold_s - warm_s:.2f} s beyond hub-warm "
              f"({mb / max(cold_s - warm_s, 1e-3):.0f} MB/s from the loopback Hub)")
    finally:
        if hub:
            hub.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    EXTRA_ENV.update(arg.split("=", 1) for arg in sys.argv[4:])
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 3)
