// Starts `onepass serve` on 127.0.0.1 port 0 for the npm client tests and resolves to
// {port, grpcPort, stop, exited}; the port comes from the "listening on HOST:PORT" line, the gRPC
// port (with --grpc-port) from "grpc listening on HOST:PORT", printed before it.
import { spawn } from "node:child_process";

export function startServe(binary, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, ["serve", "--host", "127.0.0.1", "--port", "0", ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let log = "";
    child.stderr.on("data", (d) => (log += d));
    const exited = new Promise((done) => child.on("exit", (code) => done(code)));
    child.on("exit", (code) => reject(new Error(`onepass serve exited (${code}): ${log}`)));
    child.stdout.on("data", (d) => {
      out += d;
      const m = out.match(/^listening on 127\.0\.0\.1:(\d+)/m);
      if (!m) return;
      const port = Number(m[1]);
      const g = out.match(/^grpc listening on 127\.0\.0\.1:(\d+)/m);
      const grpcPort = g ? Number(g[1]) : undefined;
      const stop = () => child.kill("SIGTERM");
      waitReady(port).then(() => resolve({ port, grpcPort, stop, exited }), reject);
    });
  });
}

async function waitReady(port) {
  for (let i = 0; i < 600; ++i) {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/ping`);
      if (r.status === 200) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("onepass serve never answered /ping with 200");
}

// A tiny assertion helper: the first failure ends the test with exit code 1.
export function check(condition, message) {
  if (!condition) {
    console.error("FAIL: " + message);
    process.exitCode = 1;
    throw new Error(message);
  }
}
