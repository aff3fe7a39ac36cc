#!/usr/bin/env python3
"""Memory (docs/reliability.md): RSS flat over a long run (second half: max - mean <= 100 MB), and
10,000 rejected requests of each error class grow RSS by <= 32 MiB.

Long run: `onepass serve` co-hosts deberta-v2-tiny-nli, bert-tiny-nli and bert-tiny-embed; two
`onepass bench` streams (single NLI pairs, and client batches of 8 on the other model, every
answer checked) run open loop for --duration seconds while /proc/<pid>/status VmRSS is sampled.

Rejections: a server with --api-key and --max-concurrent-requests 2 gets --rejections requests of
each class (400 bad JSON, 413, 404 unknown model, 401 wrong key, 422 validation, 400 KServe
validation, 429 overload, 405, 431); each class must answer its status every time, and RSS is
read before and after each class (after a short warm-up of every class, so allocator pools that
fill once are not counted as growth).
"""
import argparse
import json
import statistics
import sys
import threading
import time

import stress_lib as lib

KEY = "stress-key"
AUTH = f"Authorization: Bearer {KEY}"
JSON = "Content-Type: application/json"


def long_run(duration):
    samples = lib.distinct_pairs(3000)
    dataset = lib.write_dataset(samples)
    with lib.Server([("nli", lib.model("deberta-v2-tiny-nli")), ("bert", lib.model("bert-tiny-nli")),
                     ("embed", lib.model("bert-tiny-embed"))]) as server:
        # A quick closed-loop probe sets the open-loop rates to about half of capacity.
        probe, _, _ = lib.bench(server.url, dataset, 1000, concurrency=8, model="nli")
        rate = 0.5 * probe["requests_per_s"]
        start_rss = server.rss_mib()
        sampler = lib.RssSampler(server.pid, 0.5)
        results = {}

        def stream(name, model, batch, r):
            results[name] = lib.bench(server.url, dataset, int(r * duration), concurrency=16,
                                      rate=f"{r:.2f}", model=model, batch_size=batch, warmup=0)

        threads = [threading.Thread(target=stream, args=("nli", "nli", 1, rate * 0.8)),
                   threading.Thread(target=stream, args=("bert", "bert", 8, rate * 0.2 / 8))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        rss = sampler.stop()
        alive = server.proc.poll() is None
    half = rss[len(rss) // 2:]
    spread = max(half) - statistics.mean(half)
    print(f"long run: {duration:g} s, {len(rss)} RSS samples; start {start_rss:.1f} MiB, first-half "
          f"max {max(rss[:len(rss) // 2]):.1f}, second-half mean {statistics.mean(half):.1f} max "
          f"{max(half):.1f}, end {rss[-1]:.1f} MiB")
    ok = True
    for name, (run, _, rc) in results.items():
        errors = run["errors"]["by_status"]
        print(f"  stream {name}: {run['ok_requests']}/{run['requests']} "
              f"ok, {run['requests_per_s']:.1f} req/s, errors {errors}, mismatches "
              f"{run['mismatches']}/{run['verified']}, p99 {run['latency_ms']['p99']:.1f} ms")
        ok &= lib.verdict(f"long-run stream {name} served correctly",
                          rc == 0 and not errors and run["mismatches"] == 0,
                          f"errors {errors}, mismatches {run['mismatches']}")
    ok &= lib.verdict("RSS flat over the long run (second half max - mean <= 100 MB)",
                      alive and spread * 1.048576 <= 100,
                      f"{spread:.2f} MiB ({spread * 1.048576:.2f} MB), server alive {alive}")
    return ok


def error_classes(port):
    big = "x" * 20000
    many = [f"X-Filler-{i}: y" for i in range(150)]
    pair = json.dumps({"inputs": {"text": "A man plays a guitar.", "text_pair": "Music."}}).encode()
    return {
        # class: (expected status, request bytes)
        "400 bad JSON": (400, lib.http_request("POST", "/invocations", b'{"inputs": [1, 2',
                                               [JSON, AUTH, "X-Amzn-SageMaker-Target-Model: nli"])),
        "413 payload": (413, lib.http_request("POST", "/invocations", b"",
                                              [JSON, AUTH, "Content-Length: 50000000"])),
        "404 unknown model": (404, lib.http_request("POST", "/invocations", pair,
                                                    [JSON, AUTH, "X-Amzn-SageMaker-Target-Model: nope"])),
        "401 wrong key": (401, lib.http_request("POST", "/invocations", pair,
                                                [JSON, "Authorization: Bearer wrong-key"])),
        "422 validation": (422, lib.http_request("POST", "/predict", b'{"inputs": []}',
                                                 [JSON, AUTH, "X-Amzn-SageMaker-Target-Model: nli"])),
        "400 KServe validation": (400, lib.http_request("POST", "/v2/models/nli/infer",
                                                        b'{"inputs": [{"name": "text"}]}', [JSON, AUTH])),
        "405 method": (405, lib.http_request("GET", "/invocations", b"", [AUTH])),
        "431 headers": (431, lib.http_request("GET", "/ping", b"", [AUTH, "X-Big: " + big])),
        "431 header count": (431, lib.http_request("GET", "/ping", b"", [AUTH] + many)),
    }


def send_class(port, request, expected, count):
    """Sends `request` `count` times on keep-alive connections (reopened when the server closes
    one); returns the statuses that were not `expected`."""
    wrong = {}
    client = lib.RawClient(port)
    for _ in range(count):
        try:
            status, _, _ = client.exchange(request)
        except (ConnectionError, OSError) as e:
            status = type(e).__name__
            client.close()
        if status != expected:
            wrong[status] = wrong.get(status, 0) + 1
    client.close()
    return wrong


def overload_class(port, count):
    """429s: three background clients keep both slots (--max-concurrent-requests 2) busy with
    large batches; the foreground sends small requests until `count` were refused."""
    stop = threading.Event()
    heavy = json.dumps({"inputs": [" ".join(["music guitar street"] * 60)] * 32}).encode()
    heavy_req = lib.http_request("POST", "/predict", heavy, [JSON, AUTH, "X-Amzn-SageMaker-Target-Model: nli"])

    def hold():
        c = lib.RawClient(port)
        while not stop.is_set():
            c.exchange(heavy_req)
        c.close()

    holders = [threading.Thread(target=hold) for _ in range(3)]
    for t in holders:
        t.start()
    time.sleep(0.3)
    small = lib.http_request("POST", "/predict", b'{"inputs": "a guitar"}',
                             [JSON, AUTH, "X-Amzn-SageMaker-Target-Model: nli"])
    client = lib.RawClient(port)
    refused, other = 0, {}
    while refused < count:
        status, headers, _ = client.exchange(small)
        if status == 429 and "retry-after" in headers:
            refused += 1
        else:
            other[status] = other.get(status, 0) + 1
    stop.set()
    for t in holders:
        t.join()
    client.close()
    return refused, other


def rejections(count):
    ok = True
    with lib.Server([("nli", lib.model("deberta-v2-tiny-nli"))], "--api-key", KEY,
                    "--max-concurrent-requests", 2) as server:
        classes = error_classes(server.port)
        for name, (status, request) in classes.items():  # warm-up of every class
            wrong = send_class(server.port, request, status, 200)
            ok &= lib.verdict(f"class {name} answers {status}", not wrong, f"other outcomes {wrong}")
        overload_class(server.port, 200)
        before_all = server.rss_mib()
        print(f"rejections: RSS after warm-up {before_all:.1f} MiB")
        for name, (status, request) in classes.items():
            before = server.rss_mib()
            t0 = time.monotonic()
            wrong = send_class(server.port, request, status, count)
            grew = server.rss_mib() - before
            ok &= lib.verdict(f"{count} x {name}: RSS growth <= 32 MiB",
                              not wrong and grew <= 32,
                              f"{grew:+.2f} MiB ({count / (time.monotonic() - t0):.0f} req/s), "
                              f"other outcomes {wrong}")
        before = server.rss_mib()
        refused, admitted = overload_class(server.port, count)
        grew = server.rss_mib() - before
        ok &= lib.verdict(f"{count} x 429 overload: RSS growth <= 32 MiB", grew <= 32,
                          f"{grew:+.2f} MiB; {refused} refused with Retry-After, others {admitted}")
        total = server.rss_mib() - before_all
        print(f"rejections: RSS {before_all:.1f} -> {server.rss_mib():.1f} MiB ({total:+.2f}) "
              f"over {count} of each of {len(classes) + 1} classes")
        alive = server.proc.poll() is None
        ok &= lib.verdict("server alive after the rejections", alive, f"exit {server.proc.poll()}")
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, default=180, help="seconds of the long run (0: skip)")
    ap.add_argument("--rejections", type=int, default=10000, help="requests per error class (0: skip)")
    args = ap.parse_args()
    ok = True
    if args.duration > 0:
        ok &= long_run(args.duration)
    if args.rejections > 0:
        ok &= rejections(args.rejections)
    print("MEMORY:", "PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
