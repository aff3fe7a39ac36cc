"""Shared pieces of the long-run reliability scripts (docs/reliability.md): start `onepass serve`,
sample its RSS, run `onepass bench`, make inputs whose answers differ, print verdicts.

Long runs are scripts, not ctest: they take minutes and their numbers go in the issue notes.
Standard library only (python3 from Debian)."""
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = os.path.join(ROOT, "tests", "data", "fixtures", "models")
DEFAULT_BIN = os.path.join(ROOT, "build", "release", "apps", "onepass", "onepass")


def onepass_bin():
    path = os.environ.get("ONEPASS_BIN", DEFAULT_BIN)
    if not os.access(path, os.X_OK):
        sys.exit(f"no onepass binary at {path}: build it with "
                 "`cmake --build --preset release --target onepass` or set ONEPASS_BIN")
    return path


def model(name):
    return os.path.join(MODELS, name)


class Server:
    """`onepass serve` on a free loopback port; its log goes to a temporary file."""

    def __init__(self, models, *flags):
        self.log_file = tempfile.NamedTemporaryFile("w+", prefix="onepass-stress-", suffix=".log")
        args = [onepass_bin(), "serve", "--port", "0"]
        for name, directory in models:
            args += ["--model", f"{name}={directory}"]
        args += [str(f) for f in flags]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self.log_file, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            self.proc.kill()
            self.log_file.seek(0)
            sys.exit(f"server did not start: {line!r}\n{self.log_file.read()}")
        self.port = int(line.strip().rsplit(":", 1)[1])
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                if urllib.request.urlopen(self.url + "/ping", timeout=5).status == 200:
                    break
            except Exception:
                time.sleep(0.1)
        else:
            sys.exit("server never became ready:\n" + self.log())

    @property
    def pid(self):
        return self.proc.pid

    def rss_mib(self):
        return rss_mib(self.pid)

    def threads(self):
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("Threads:"):
                    return int(line.split()[1])
        return 0

    def cpu_s(self):
        """User + system CPU seconds the server has used so far."""
        return cpu_s(self.pid)

    def metrics(self):
        """The Prometheus text of /metrics."""
        return urllib.request.urlopen(self.url + "/metrics", timeout=30).read().decode()

    def open_fds(self):
        return len(os.listdir(f"/proc/{self.pid}/fd"))

    def log(self):
        self.log_file.flush()
        self.log_file.seek(0)
        return self.log_file.read()

    def stop(self, sig=15, timeout=30):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def cpu_s(pid):
    """User + system CPU seconds process `pid` has used so far (all its threads)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    raise RuntimeError(f"no VmRSS for pid {pid}")


class RssSampler:
    """Samples a process's VmRSS every `interval` seconds on a thread until stop()."""

    def __init__(self, pid, interval=0.5):
        self.pid, self.interval, self.samples = pid, interval, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            try:
                self.samples.append((time.monotonic(), rss_mib(self.pid)))
            except (OSError, RuntimeError):
                return
            self._stop.wait(self.interval)

    def stop(self):
        self._stop.set()
        self._thread.join()
        return [rss for _, rss in self.samples]


WORDS = ("the a one every some no man woman child dog cat bird team city river car train book "
         "song letter house garden market school doctor teacher player singer farmer driver "
         "walks runs reads writes sings plays watches builds paints cooks opens closes finds "
         "loses sells buys carries throws catches quickly slowly happily quietly loudly today "
         "yesterday tomorrow near under over behind beside inside outside red green blue old "
         "young tall small large bright dark warm cold early late music football dinner rain "
         "snow morning evening night window door bridge mountain island forest road station").split()


def distinct_pairs(count, seed=7):
    """`count` different premise/hypothesis pairs of 6-24 and 3-10 words, so each request of a
    run carries its own input and a swapped answer shows as a mismatch."""
    rng = random.Random(seed)
    seen, out = set(), []
    while len(out) < count:
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 24))).capitalize() + "."
        pair = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 10))).capitalize() + "."
        if (text, pair) not in seen:
            seen.add((text, pair))
            out.append({"text": text, "text_pair": pair})
    return out


def write_dataset(samples):
    f = tempfile.NamedTemporaryFile("w", prefix="onepass-stress-", suffix=".jsonl", delete=False)
    for s in samples:
        f.write(json.dumps(s) + "\n")
    f.close()
    return f.name


class Bench:
    """`onepass bench` running in the background, so that a caller can sample its CPU time
    while it runs (cpu_s) and get its total CPU time when it ends (wait)."""

    def __init__(self, url, dataset, requests, *, concurrency, rate="inf", model=None,
                 batch_size=1, warmup=3, timeout_s=30, extra=()):
        self.out = tempfile.NamedTemporaryFile(prefix="onepass-stress-", suffix=".json",
                                               delete=False)
        self.out.close()
        args = [onepass_bin(), "bench", "--endpoint", url, "--dataset", dataset, "-n",
                str(requests), "--concurrency", str(concurrency), "--request-rate", str(rate),
                "--batch-size", str(batch_size), "--warmup", str(warmup), "--timeout",
                str(timeout_s), "--task", "classify", "--no-progress", "-o", self.out.name, *extra]
        if model:
            args += ["--target-model", model]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True)
        self.pid = self.proc.pid

    def cpu_s(self):
        """CPU seconds used so far; None once the process has ended."""
        try:
            return cpu_s(self.pid)
        except (OSError, IndexError, ValueError):
            return None

    def wait(self):
        """Returns (the run's JSON object, the reference's JSON, exit code); the run object gains
        "client_cpu_s", the bench process's user + system CPU seconds over its whole life."""
        output = self.proc.stdout.read()
        # wait4 rather than Popen.wait: it also returns the child's own resource usage.
        _, status, usage = os.wait4(self.pid, 0)
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        try:
            with open(self.out.name) as f:
                result = json.load(f)
        except (OSError, ValueError):
            sys.exit(f"onepass bench failed (exit {self.proc.returncode}):\n{output}")
        finally:
            os.unlink(self.out.name)
        endpoint = result["endpoints"][0]
        run = endpoint["runs"][0]
        run["client_cpu_s"] = usage.ru_utime + usage.ru_stime
        return run, endpoint["reference"], self.proc.returncode


def bench(url, dataset, requests, **kwargs):
    """Runs `onepass bench` once (keywords as Bench); returns (the run's JSON object, the
    reference's JSON, exit code). Exit code 3 means some answer did not match its own input's
    single-request answer."""
    return Bench(url, dataset, requests, **kwargs).wait()


def verdict(name, ok, details):
    """One line per check: PASS/FAIL, the check's name and its numbers."""
    print(f"{'PASS' if ok else 'FAIL'}  {name}: {details}", flush=True)
    return ok


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RawClient:
    """A minimal HTTP/1.1 client on one keep-alive socket, sending prebuilt request bytes (the
    checks need malformed and oversized requests that no library would send). Reconnects when
    the server closes; `closes` counts how often it did."""

    def __init__(self, port, timeout=30):
        self.port, self.timeout, self.sock, self.buf, self.closes = port, timeout, None, b"", 0

    def _connect(self):
        self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=self.timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def close(self):
        if self.sock:
            self.sock.close()
        self.sock = None

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("server closed the connection before the response ended")
        self.buf += chunk

    def exchange(self, request: bytes):
        """Sends `request`; returns (status, headers dict lower-cased, body)."""
        if self.sock is None:
            self._connect()
        self.sock.sendall(request)
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        while len(self.buf) < length:
            self._fill()
        body, self.buf = self.buf[:length], self.buf[length:]
        if headers.get("connection", "").lower() == "close":
            self.closes += 1
            self.close()
        return status, headers, body


def http_request(method, target, body=b"", headers=()):
    """Request bytes with Content-Length (unless a header already frames the body)."""
    lines = [f"{method} {target} HTTP/1.1", "Host: 127.0.0.1"]
    names = {h.split(":", 1)[0].strip().lower() for h in headers}
    lines += list(headers)
    if "content-length" not in names and "transfer-encoding" not in names and (body or method == "POST"):
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body
