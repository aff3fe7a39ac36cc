#!/usr/bin/env python3
"""Overload (docs/reliability.md): under 3x capacity every request gets exactly one answer, 200
or 429; no resets, no duplicates, no answer swapped between requests; the server holds at most K
accepted requests at once and their server-side p99 stays bounded; goodput per server
CPU-second stays near capacity's.

1. `onepass serve` co-hosts --model (default deberta-v2-tiny-nli, the largest fixture; a
   compute-bound one such as the mDeBERTa-base perf shape works too) under load and
   --side-model (bert-tiny-nli), with --max-concurrent-requests K.
2. Capacity: `onepass bench` closed loop with K connections (never more than K in flight, so
   not one 429 is allowed either), twice before and once after the overload.
3. Overload: `onepass bench` open loop (Poisson arrivals) at 3x capacity for --duration seconds,
   while a light stream checks that the co-hosted model keeps answering.
Every request carries one of --distinct different NLI pairs; the bench first sends each alone and
then checks every load answer against its own input's answer (--tolerance), so a swapped or
duplicated answer is a mismatch. Only 200 and 429 count as answers: any other status or a
transport failure (reset, timeout, a close mid-answer, a retried connection) fails the check.

The load generator shares the machine's cores with the server, so latency and goodput are judged
on the server's side (measure.py), where the generator's CPU use cannot move them: requests held
at once (Little's law on the server's own duration histogram) at most K; the server-side p99 in
units of K / throughput at most --p99-factor times the capacity runs'; accepted requests per
server CPU-second (429s charged at a refused request's measured cost) at least --efficiency
times capacity's. Each phase prints the server's, the generator's and the other processes' CPU
time. Client-side latency and goodput / capacity are printed, not judged.
"""
import argparse
import itertools
import json
import statistics
import sys
import urllib.request

import measure
import stress_lib as lib


def distinguishable(url, samples, tolerance, count=300):
    """How many pairs among `count` single answers differ by more than the tolerance: the share
    of swaps the content check can see at all."""
    answers = []
    for s in samples[:count]:
        req = urllib.request.Request(url + "/invocations", data=json.dumps({"inputs": s}).encode(),
                                     headers={"Content-Type": "application/json",
                                              "X-Amzn-SageMaker-Target-Model": "nli"})
        answers.append(json.loads(urllib.request.urlopen(req, timeout=30).read()))
    same = sum(1 for a, b in itertools.combinations(answers, 2)
               if a["label"] == b["label"] and abs(a["score"] - b["score"]) <= tolerance)
    pairs = len(answers) * (len(answers) - 1) // 2
    return pairs - same, pairs


def refusal_cpu_s(server, count=3000):
    """Server CPU seconds per refused request: `count` requests naming a model that is not loaded
    (404, refused before tokenizing like a 429), one at a time on one keep-alive connection."""
    client = lib.RawClient(server.port)
    request = lib.http_request("POST", "/invocations", json.dumps(
        {"inputs": {"text": "A man walks.", "text_pair": "A man."}}).encode(),
        ["Content-Type: application/json", "X-Amzn-SageMaker-Target-Model: not-loaded"])
    client.exchange(request)
    cpu0 = server.cpu_s()
    statuses = {client.exchange(request)[0] for _ in range(count)}
    cost = (server.cpu_s() - cpu0) / count
    client.close()
    if statuses != {404}:
        sys.exit(f"the refusal probe expected only 404, got {statuses}")
    return cost


def answers_only_200_or_429(run):
    errors = run["errors"]["by_status"]
    others = {k: v for k, v in errors.items() if k != "429"}
    rejected = errors.get("429", 0)
    return others, rejected


def capacity_run(server, dataset, args, when):
    """Closed loop with K connections (never more than K in flight, so not one 429 either)."""
    k = args.max_concurrent
    phase = measure.Phase(server, "nli", min(args.capacity_requests + 3, args.distinct))
    bench = lib.Bench(server.url, dataset, args.capacity_requests, concurrency=k, model="nli",
                      extra=["--tolerance", str(args.tolerance)])
    phase.watch(bench)
    cap, _, rc = bench.wait()
    figures = phase.finish([cap])
    others, rejected = answers_only_200_or_429(cap)
    print(f"capacity {when} (closed loop, {k} connections): {cap['requests_per_s']:.1f} req/s, "
          f"client-side p50 {cap['latency_ms']['p50']:.1f} ms p99 {cap['latency_ms']['p99']:.1f} "
          f"ms, errors {cap['errors']['by_status']}, retries {cap.get('retries', 0)}, mismatches "
          f"{cap['mismatches']}/{cap['verified']}\n  {measure.describe_cpu(figures)}\n  "
          f"{measure.describe_server_time(figures)}")
    good = lib.verdict(f"closed loop of K clients gets no 429 and no error ({when})",
                       rc == 0 and not others and rejected == 0
                       and cap.get("retries", 0) == 0 and cap["mismatches"] == 0,
                       f"{rejected} x 429, other errors {others}, mismatches {cap['mismatches']}")
    return cap, figures, good


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=lib.model("deberta-v2-tiny-nli"),
                    help="folder of the NLI model under load (default: the deberta-v2-tiny-nli fixture)")
    ap.add_argument("--side-model", default=lib.model("bert-tiny-nli"),
                    help="folder of the co-hosted model (default: the bert-tiny-nli fixture)")
    ap.add_argument("--duration", type=float, default=60, help="seconds of overload")
    ap.add_argument("--factor", type=float, default=3.0, help="offered load / capacity")
    ap.add_argument("--max-concurrent", type=int, default=32,
                    help="K: --max-concurrent-requests, and the bound on requests held at once")
    ap.add_argument("--serve-max-concurrent", type=int,
                    help="start the server with this --max-concurrent-requests instead of K, while "
                    "the checks still hold it to K (a server whose admission control is off "
                    "must fail them)")
    ap.add_argument("--capacity-requests", type=int, default=4000, help="requests per capacity run")
    ap.add_argument("--distinct", type=int, default=3000, help="different inputs")
    ap.add_argument("--client-connections", type=int, default=128)
    ap.add_argument("--tolerance", type=float, default=1e-5)
    ap.add_argument("--p99-factor", type=float, default=2.0,
                    help="bound on the accepted requests' server-side p99 in units of K / "
                    "throughput: this times the capacity runs' best")
    ap.add_argument("--efficiency", type=float, default=0.6,
                    help="goodput per server CPU-second under overload / the same at capacity")
    args = ap.parse_args()

    samples = lib.distinct_pairs(args.distinct)
    dataset = lib.write_dataset(samples)
    k = args.max_concurrent
    serve_k = args.serve_max_concurrent or k
    ok = True
    print(f"model under load: {args.model}; co-hosted: {args.side_model}; K = {k}, server "
          f"--max-concurrent-requests {serve_k}")
    with lib.Server([("nli", args.model), ("bert", args.side_model)],
                    "--max-concurrent-requests", serve_k) as server:
        differ, pairs = distinguishable(server.url, samples, args.tolerance)
        print(f"swap visibility: {differ} of {pairs} answer pairs differ by more than "
              f"{args.tolerance:g} ({100.0 * differ / pairs:.3f}%)")

        refusal = refusal_cpu_s(server)
        print(f"a refused request (404, unknown model) costs the server {1e6 * refusal:.0f} us CPU")

        # The machine is shared: capacity is the best of the closed-loop runs, so that a run
        # slowed by other work does not make the overload lighter than 3x.
        caps = []
        for when in ("before 1", "before 2"):
            cap, figures, good = capacity_run(server, dataset, args, when)
            caps.append((cap, figures))
            ok &= good
        capacity = max(c["requests_per_s"] for c, _ in caps)

        rate = args.factor * capacity
        n = int(rate * args.duration)
        side = {}
        phase = measure.Phase(server, "nli", min(n, args.distinct))
        # The co-hosted model, at a trickle: it must keep answering (200 or 429) correctly.
        side_bench = lib.Bench(server.url, dataset, max(20, int(args.duration * 10)),
                               concurrency=2, rate=10, model="bert",
                               extra=["--tolerance", str(args.tolerance)])
        bench = lib.Bench(server.url, dataset, n, concurrency=args.client_connections,
                          rate=f"{rate:.3f}", model="nli", warmup=0,
                          extra=["--tolerance", str(args.tolerance), "--seed", "1"])
        phase.watch(bench, side_bench)
        run, _, rc = bench.wait()
        side["run"], _, side["rc"] = side_bench.wait()
        over = phase.finish([run, side["run"]])
        over["refused"] = answers_only_200_or_429(run)[1] + answers_only_200_or_429(side["run"])[1]
        alive = server.proc.poll() is None
        if alive:
            cap, figures, good = capacity_run(server, dataset, args, "after")
            caps.append((cap, figures))
            ok &= good

    capacity_all = max(c["requests_per_s"] for c, _ in caps)
    others, rejected = answers_only_200_or_429(run)
    accepted = run["ok_requests"]
    answered = accepted + rejected
    retries = run.get("retries", 0)
    goodput = run["requests_per_s"]
    print(f"overload: offered {rate:.1f} req/s ({args.factor:g}x) for {args.duration:g} s, achieved "
          f"{run['achieved_rate']:.1f} req/s; {n} requests: {accepted} x 200, {rejected} x 429, "
          f"other {others}, retries {retries}; mismatches {run['mismatches']}/{run['verified']}; "
          f"goodput {goodput:.1f} req/s ({100 * goodput / capacity_all:.1f}% of the best capacity "
          f"run); client-side accepted p50 {run['latency_ms']['p50']:.1f} ms p99 "
          f"{run['latency_ms']['p99']:.1f} ms max {run['latency_ms']['max']:.1f} ms\n  "
          f"{measure.describe_cpu(over)}\n  {measure.describe_server_time(over)}")
    ok &= lib.verdict("offered load reached", run["achieved_rate"] >= 0.9 * rate,
                      f"achieved {run['achieved_rate']:.1f} of {rate:.1f} req/s")
    ok &= lib.verdict("every request answered exactly once with 200 or 429",
                      not others and answered == n and retries == 0 and alive,
                      f"{answered}/{n} answered, other outcomes {others}, retried {retries}, "
                      f"server alive {alive}")
    ok &= lib.verdict("no answer swapped or duplicated",
                      rc == 0 and run["mismatches"] == 0 and run["verified"] == accepted,
                      f"{run['mismatches']} mismatches, {run['verified']} of {accepted} verified")

    # Judged on the server's side (measure.py): what the load generator's CPU use cannot change.
    ok &= lib.verdict("the server holds at most K accepted requests at once",
                      over["held_at_once"] <= 1.05 * k,
                      f"{over['held_at_once']:.1f} on average (Little's law: time held / wall time) "
                      f"<= 1.05 x K = {1.05 * k:.1f}")

    def drain_units(f):
        # p99 in units of K / throughput: the time K queued requests take at the rate the
        # server answered them then, so that a server slowed by CPU it did not get is not
        # blamed, while one that lets requests wait longer than K of them take is.
        return f["server_p99_ms"] * f["accepted_per_s"] / (1000.0 * k)

    cap_units = min(drain_units(f) for _, f in caps)
    over_units = drain_units(over)
    ok &= lib.verdict("accepted server-side p99 bounded", over_units <= args.p99_factor * cap_units,
                      f"p99 {over['server_p99_ms']:.1f} ms = {over_units:.2f} x K/throughput <= "
                      f"{args.p99_factor:g} x {cap_units:.2f} (best capacity run)")

    # Goodput per server CPU-second: a load generator that takes cores from the server lowers the
    # server's CPU time and its goodput alike, while a server that wastes CPU under overload
    # (thrashing, spinning, expensive refusals) answers fewer requests per CPU-second. Its 429s
    # are charged at what a refused request costs alone, so the bound holds for a tiny model,
    # where a 429 costs a tenth of an answer, as for a compute-bound one.
    cap_eff = statistics.median(f["accepted"] / f["server_cpu_s"] for _, f in caps)
    refusals_cpu = over["refused"] * refusal
    over_eff = over["accepted"] / max(over["server_cpu_s"] - refusals_cpu, 1e-9)
    ok &= lib.verdict(f"goodput per server CPU-second >= {100 * args.efficiency:.0f}% of capacity's",
                      over_eff >= args.efficiency * cap_eff,
                      f"{over_eff:.1f} accepted per server CPU-second ({over['server_cpu_s']:.1f} s"
                      f" less {refusals_cpu:.1f} s for {over['refused']} refusals) vs {cap_eff:.1f}"
                      f" (median capacity run) = {100 * over_eff / cap_eff:.1f}%")
    s_run = side["run"]
    s_others, s_rejected = answers_only_200_or_429(s_run)
    ok &= lib.verdict("co-hosted model keeps answering correctly",
                      side["rc"] == 0 and not s_others and s_run["mismatches"] == 0
                      and s_run["ok_requests"] > 0,
                      f"{s_run['ok_requests']} x 200, {s_rejected} x 429, other {s_others}, "
                      f"mismatches {s_run['mismatches']}, p99 {s_run['latency_ms']['p99']:.1f} ms")
    print("OVERLOAD:", "PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
