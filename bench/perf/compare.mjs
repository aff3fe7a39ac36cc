#!/usr/bin/env node
// Side-by-side speed run: onepass (`onepass run --bench`) and ONNX Runtime (onnxruntime-node, CPU,
// graph optimizations 'all') on the same weights, the same token ids and the same machine, in one
// run. Both see exactly the same batches in the same order.
//
//   node bench/perf/compare.mjs --model DIR --onepass BIN --ort-from FOLDER [--threads 1,2]
//        [--runs 10] [--budget 60] [--only 1x59,mixed32] [--precisions bf16,int8]
//        [--also NAME=BIN[,NAME=BIN]] [--state-dir DIR] [--out result.json]
//
// DIR is a perf-models folder with its regenerated model.safetensors (see bench/perf/run.sh).
// Workloads (issue 6):
//   1xL   batch 1 of L real tokens, L in 16, 59, 128, 512
//   mixedB  batches of B (8, 32) real-length rows, lengths drawn uniformly from 10..120 (seeded);
//           ONNX Runtime pads each batch to its longest row, onepass pads nothing
//   8x512   batch 8 of 512 tokens (the fixed-512 worst case)
//   idleG   batch 1 of 31 tokens (one NLI pair) after G ms idle, G in 0, 20, 50, 200, 1000
//           (issue 14: traffic with gaps; both engines sleep G ms before each timed batch)
// Latency is per batch (one session.run / one forward pass), samples/s = rows / mean batch time.
// --precisions also runs onepass in those precisions on every workload and reports each one's
// samples/s against onepass fp32 (issue 6: bf16 >= 1.8x, int8 >= 3x at mixed32). They run with
// --force-precision: this measures speed only; `onepass check` is the accuracy gate. The
// precision `auto` runs `onepass run --precision auto --state-dir DIR` instead (with --state-dir,
// where `onepass check --save-verdict` saved the verdict: bench/perf/auto.sh): what auto serves,
// gate included, and the entry names the precision it chose.
// --also times other onepass builds (for example a plain `cmake` build beside the release
// preset's, issue 34) on every workload right after BIN, on the same batches, and reports each
// one's p50 and samples/s against BIN's.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const args = { model: '', onepass: '', 'ort-from': '', threads: '1,2', runs: 10, budget: 60,
  only: '', out: '', seed: 7, precisions: '', also: '', 'state-dir': '' };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (!a.startsWith('--') || i + 1 >= process.argv.length) {
    console.error(`unexpected argument ${a}`);
    process.exit(2);
  }
  args[a.slice(2)] = process.argv[++i];
}
if (!args.model || !args.onepass) {
  console.error('usage: compare.mjs --model DIR --onepass BIN --ort-from FOLDER [--threads 1,2]');
  process.exit(2);
}
if (String(args.precisions).split(',').includes('auto') && !args['state-dir']) {
  console.error('--precisions auto needs --state-dir (the verdicts\' folder)');
  process.exit(2);
}
const dir = path.resolve(args.model);
const ort = createRequire(path.join(path.resolve(args['ort-from'] || '.'), 'noop.js'))('onnxruntime-node');
const golden = JSON.parse(fs.readFileSync(path.join(dir, 'golden.json'), 'utf8'));
const config = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
const padId = config.pad_token_id ?? 0;

// A row of exactly L tokens cut from a golden case, keeping its final separator token.
function row(L, k) {
  const src = golden.cases.filter((c) => c.input_ids.length >= L);
  const c = src[k % src.length];
  const n = c.input_ids.length;
  const ids = [];
  const types = [];
  for (let j = 0; j < L; j++) {
    const s = j < L - 1 ? j : n - 1;
    ids.push(c.input_ids[s]);
    types.push(c.token_type_ids ? c.token_type_ids[s] : 0);
  }
  return { ids, types };
}

// Small seeded generator (mulberry32) so every run draws the same mixed lengths.
function rng(seed) {
  let t = seed >>> 0;
  return () => {
    t = (t + 0x6d2b79f5) >>> 0;
    let x = Math.imul(t ^ (t >>> 15), 1 | t);
    x ^= x + Math.imul(x ^ (x >>> 7), 61 | x);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

function workloads(runs) {
  const list = [];
  for (const L of [16, 59, 128, 512]) {
    list.push({ name: `1x${L}`, batches: Array.from({ length: runs }, () => [row(L, 0)]) });
  }
  const rand = rng(Number(args.seed));
  for (const B of [8, 32]) {
    const batches = [];
    for (let r = 0; r < runs; r++) {
      batches.push(Array.from({ length: B }, (_, i) => row(10 + Math.floor(rand() * 111), i)));
    }
    list.push({ name: `mixed${B}`, batches });
  }
  list.push({ name: '8x512', batches: Array.from({ length: runs }, () =>
    Array.from({ length: 8 }, (_, i) => row(512, i))) });
  for (const G of [0, 20, 50, 200, 1000]) {
    list.push({ name: `idle${G}`, idleMs: G, batches: Array.from({ length: runs }, () => [row(31, 0)]) });
  }
  const only = String(args.only).split(',').filter(Boolean);
  return only.length ? list.filter((w) => only.includes(w.name)) : list;
}

const q = (s, p) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))];
function summary(latMs, rows) {
  const s = [...latMs].sort((a, b) => a - b);
  const mean = latMs.reduce((a, b) => a + b, 0) / latMs.length;
  return { batches: latMs.length, p50_ms: q(s, 0.5), p90_ms: q(s, 0.9), p99_ms: q(s, 0.99),
    samples_per_s: (rows / latMs.length) / (mean / 1000) };
}

async function runOrt(session, w) {
  const lat = [];
  const start = process.hrtime.bigint();
  const feedsOf = (batch) => {
    const B = batch.length;
    const L = Math.max(...batch.map((r) => r.ids.length));
    const f = {};
    for (const name of session.inputNames) {
      const data = new BigInt64Array(B * L);
      batch.forEach((r, i) => {
        for (let j = 0; j < L; j++) {
          const real = j < r.ids.length;
          let v = 0;
          if (name === 'input_ids') v = real ? r.ids[j] : padId;
          else if (name === 'attention_mask') v = real ? 1 : 0;
          else if (name === 'token_type_ids') v = real ? r.types[j] : 0;
          data[i * L + j] = BigInt(v);
        }
      });
      f[name] = new ort.Tensor('int64', data, [B, L]);
    }
    return f;
  };
  await session.run(feedsOf(w.batches[0]));  // warm-up
  let rows = 0;
  for (const batch of w.batches) {
    const f = feedsOf(batch);
    if (w.idleMs) await new Promise((resolve) => setTimeout(resolve, w.idleMs));
    const t = process.hrtime.bigint();
    await session.run(f);
    lat.push(Number(process.hrtime.bigint() - t) / 1e6);
    rows += batch.length;
    if (lat.length >= 3 && Number(process.hrtime.bigint() - start) / 1e9 > Number(args.budget)) break;
  }
  return summary(lat, rows);
}

// --also: [{ name, bin }]
const also = String(args.also).split(',').filter(Boolean).map((spec) => {
  const eq = spec.indexOf('=');
  if (eq <= 0) {
    console.error(`--also takes NAME=BIN, got '${spec}'`);
    process.exit(2);
  }
  return { name: spec.slice(0, eq), bin: spec.slice(eq + 1) };
});

// fp32 as is; bf16 and int8 forced (speed only); auto as served, from --state-dir's verdict.
function precisionFlags(precision) {
  if (precision === 'fp32') return [];
  if (precision === 'auto') return ['--state-dir', path.resolve(args['state-dir'])];
  return ['--force-precision'];
}

function runOnepass(w, threads, precision = 'fp32', bin = args.onepass) {
  const tmp = path.join(os.tmpdir(), `onepass-compare-${process.pid}-${w.name}.jsonl`);
  const lines = [];
  for (const batch of w.batches) {
    for (const r of batch) lines.push(JSON.stringify({ input_ids: r.ids, token_type_ids: r.types }));
  }
  fs.writeFileSync(tmp, lines.join('\n') + '\n');
  const res = spawnSync(bin, ['run', '--model', dir, '--input', tmp, '--bench',
    '--batch-size', String(w.batches[0].length), '--threads', String(threads),
    '--precision', precision, ...precisionFlags(precision),
    ...(w.idleMs ? ['--idle-ms', String(w.idleMs)] : [])],
  { encoding: 'utf8', maxBuffer: 64 << 20 });
  fs.unlinkSync(tmp);
  if (res.status !== 0) throw new Error(`onepass failed (${res.status}): ${res.stderr}`);
  return JSON.parse(res.stdout.trim().split('\n').pop());
}

const results = [];
const ws = workloads(Number(args.runs));
for (const threads of String(args.threads).split(',').map(Number)) {
  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'), {
    executionProviders: ['cpu'], intraOpNumThreads: threads, interOpNumThreads: 1,
    graphOptimizationLevel: 'all', executionMode: 'sequential', logSeverityLevel: 3 });
  const createMs = Number(process.hrtime.bigint() - t0) / 1e6;
  for (const w of ws) {
    const o = runOnepass(w, threads);
    const r = await runOrt(session, w);
    const entry = { model: golden.model, threads, workload: w.name, ort_session_create_ms: createMs,
      onepass: { p50_ms: o.p50_ms, p90_ms: o.p90_ms, p99_ms: o.p99_ms, samples_per_s: o.samples_per_s },
      ort: r, latency_ratio_p50: o.p50_ms / r.p50_ms, throughput_ratio: o.samples_per_s / r.samples_per_s };
    results.push(entry);
    console.log(`${golden.model.padEnd(36)} t=${threads} ${w.name.padEnd(8)} ` +
      `onepass p50 ${o.p50_ms.toFixed(1).padStart(8)} ms ${o.samples_per_s.toFixed(1).padStart(8)}/s | ` +
      `ort p50 ${r.p50_ms.toFixed(1).padStart(8)} ms ${r.samples_per_s.toFixed(1).padStart(8)}/s | ` +
      `latency x${entry.latency_ratio_p50.toFixed(2)} throughput x${entry.throughput_ratio.toFixed(2)}`);
    for (const b of also) {
      const ob = runOnepass(w, threads, 'fp32', b.bin);
      entry[`onepass_${b.name}`] = { p50_ms: ob.p50_ms, p90_ms: ob.p90_ms, p99_ms: ob.p99_ms,
        samples_per_s: ob.samples_per_s, latency_ratio_p50_vs_onepass: ob.p50_ms / o.p50_ms,
        latency_ratio_p50_vs_ort: ob.p50_ms / r.p50_ms };
      console.log(`${golden.model.padEnd(36)} t=${threads} ${w.name.padEnd(8)} ` +
        `onepass(${b.name}) p50 ${ob.p50_ms.toFixed(1).padStart(8)} ms ${ob.samples_per_s.toFixed(1).padStart(8)}/s | ` +
        `latency vs onepass x${(ob.p50_ms / o.p50_ms).toFixed(2)}, vs ort x${(ob.p50_ms / r.p50_ms).toFixed(2)}`);
    }
    for (const p of String(args.precisions).split(',').filter(Boolean)) {
      const rp = runOnepass(w, threads, p);
      const vsFp32 = rp.samples_per_s / o.samples_per_s;
      entry[`onepass_${p}`] = { precision: rp.precision, p50_ms: rp.p50_ms, p90_ms: rp.p90_ms,
        p99_ms: rp.p99_ms, samples_per_s: rp.samples_per_s, throughput_vs_fp32: vsFp32,
        throughput_vs_ort: rp.samples_per_s / r.samples_per_s };
      const shown = p === rp.precision ? p : `${p}=${rp.precision}`;
      console.log(`${golden.model.padEnd(36)} t=${threads} ${w.name.padEnd(8)} ` +
        `onepass ${shown} p50 ${rp.p50_ms.toFixed(1).padStart(8)} ms ${rp.samples_per_s.toFixed(1).padStart(8)}/s | ` +
        `vs onepass fp32 x${vsFp32.toFixed(2)}, vs ort fp32 x${entry[`onepass_${p}`].throughput_vs_ort.toFixed(2)}`);
    }
  }
  await session.release();
}
const doc = { cpu: os.cpus()[0].model, ncpu: os.cpus().length, node: process.version,
  loadavg_1m: os.loadavg()[0], results };
if (args.out) fs.writeFileSync(args.out, JSON.stringify(doc, null, 1) + '\n');
