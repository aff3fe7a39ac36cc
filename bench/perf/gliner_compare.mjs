#!/usr/bin/env node
// GLiNER side by side: onepass (`onepass serve`, POST /extract) and ONNX Runtime (onnxruntime-node,
// CPU, graph optimizations 'all') on the graph GLiNER's own export_to_onnx made of the same
// random-weight gliner_multi-v2.1-shaped model (bench/perf/make_gliner_shaped.py), the same texts
// and labels, one after the other in one run, batch 1.
//
//   node bench/perf/gliner_compare.mjs --dir OUT --onepass BIN --ort-from FOLDER [--threads 2]
//        [--runs 40] [--budget 60] [--port 18931] [--out result.json]
//
// What each side times (bench/perf/models/README.md, "GLiNER"):
//   onepass  one POST /extract per text (keep-alive HTTP on loopback): JSON, GLiNER's word
//            splitting and prompt, tokenization, the forward pass, span decoding, the JSON answer.
//            Also the server's own mean forward time per request (onepass_request_inference_
//            duration_seconds from /metrics, before and after), the part comparable to ORT's.
//   ORT      one session.run per text on the six inputs GLiNER's preprocessing made for it
//            (inputs.json): the forward pass only, no tokenization, no decoding.
// Latency per request / run; samples/s = 1000 / mean latency (one text at a time). The first
// text's ORT logits are checked against GLiNER's (PyTorch) before timing.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

const args = { dir: '', onepass: '', 'ort-from': '', threads: 2, runs: 40, budget: 60, warmup: 3,
  port: 18931, out: '' };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (!a.startsWith('--') || i + 1 >= process.argv.length) {
    console.error(`unexpected argument ${a}`);
    process.exit(2);
  }
  args[a.slice(2)] = process.argv[++i];
}
if (!args.dir || !args.onepass) {
  console.error('usage: gliner_compare.mjs --dir OUT --onepass BIN --ort-from FOLDER');
  process.exit(2);
}
const dir = path.resolve(args.dir);
const ort = createRequire(path.join(path.resolve(args['ort-from'] || '.'), 'noop.js'))('onnxruntime-node');
const inputs = JSON.parse(fs.readFileSync(path.join(dir, 'inputs.json'), 'utf8'));
const threads = Number(args.threads);
const q = (s, p) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))];
const summary = (lat) => {
  const s = [...lat].sort((a, b) => a - b);
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  return { runs: s.length, p50_ms: q(s, 0.5), p90_ms: q(s, 0.9), min_ms: s[0], mean_ms: mean,
    samples_per_s: 1000 / mean };
};

async function timed(fn, afterWarmup = async () => {}) {
  const count = inputs.cases.length;
  for (let w = 0; w < Number(args.warmup); w++) await fn(w % count);
  await afterWarmup();
  const lat = [];
  const start = process.hrtime.bigint();
  for (let i = 0; ; i++) {
    const t = process.hrtime.bigint();
    await fn(i % count);
    lat.push(Number(process.hrtime.bigint() - t) / 1e6);
    const spent = Number(process.hrtime.bigint() - start) / 1e9;
    if ((lat.length >= Number(args.runs) || spent > Number(args.budget)) && lat.length >= 3) break;
  }
  return lat;
}

// ---- ONNX Runtime
const session = await ort.InferenceSession.create(path.join(dir, 'onnx', 'model.onnx'), {
  executionProviders: ['cpu'], intraOpNumThreads: threads, interOpNumThreads: 1,
  graphOptimizationLevel: 'all', executionMode: 'sequential',
  logSeverityLevel: 3,  // the exported graph's declared shapes draw a warning per run
});
const feeds = inputs.cases.map((c) => {
  const f = {};
  for (const name of session.inputNames) {
    const x = c.inputs[name];
    if (x.dtype === 'bool') f[name] = new ort.Tensor('bool', Uint8Array.from(x.data.map(Number)), x.shape);
    else f[name] = new ort.Tensor('int64', BigInt64Array.from(x.data.map((v) => BigInt(v))), x.shape);
  }
  return f;
});
{
  const got = (await session.run(feeds[0])).logits.data;
  const want = inputs.cases[0].logits.data;
  let diff = 0;
  for (let i = 0; i < want.length; i++) diff = Math.max(diff, Math.abs(got[i] - want[i]));
  console.error(`ORT logits vs GLiNER (PyTorch), first text: ${want.length} values, max |diff| ${diff.toExponential(2)}`);
  if (got.length !== want.length || !(diff < 1e-3)) throw new Error('ORT does not reproduce GLiNER');
}

// ---- onepass
const server = spawn(path.resolve(args.onepass), ['serve', '--model', `g=${path.join(dir, 'model')}`,
  '--port', String(args.port), '--host', '127.0.0.1', '--threads', String(threads)],
{ stdio: ['ignore', 'ignore', 'pipe'] });
let serverLog = '';
server.stderr.on('data', (d) => { serverLog += d; });
const base = `http://127.0.0.1:${args.port}`;
for (let i = 0; ; i++) {
  try {
    if ((await fetch(`${base}/health`)).status === 200) break;
  } catch { /* not up yet */ }
  if (i > 1200) { server.kill(); throw new Error(`onepass did not start:\n${serverLog}`); }
  await new Promise((r) => setTimeout(r, 100));
}
const bodies = inputs.cases.map((c) => JSON.stringify({ text: c.text, labels: c.labels, threshold: 0.5 }));
async function extract(i) {
  const r = await fetch(`${base}/extract`, { method: 'POST', body: bodies[i],
    headers: { 'content-type': 'application/json' } });
  if (r.status !== 200) throw new Error(`onepass ${r.status}: ${await r.text()}`);
  await r.json();
}
async function inferenceSeconds() {
  const text = await (await fetch(`${base}/metrics`)).text();
  const read = (name) => {
    const line = text.split('\n').find((l) => l.startsWith(name) && l.includes('model="g"'));
    return line ? Number(line.split(' ').pop()) : NaN;
  };
  return { sum: read('onepass_request_inference_duration_seconds_sum'),
    count: read('onepass_request_inference_duration_seconds_count') };
}

// onepass's scores for the first text against GLiNER's logits: every span it answers (threshold
// 0, nested, multi-label) is sigmoid(logit) at [start word, width, label].
{
  const c = inputs.cases[0];
  const r = await fetch(`${base}/extract`, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text: c.text, labels: c.labels, threshold: 0, flat_ner: false, multi_label: true }) });
  const entities = (await r.json()).entities;
  const cps = [...c.text];
  const words = [];
  for (const m of cps.join('').matchAll(/[\p{L}\p{N}_]+(?:[-_][\p{L}\p{N}_]+)*|\S/gu)) {
    const start = [...cps.join('').slice(0, m.index)].length;
    words.push([start, start + [...m[0]].length]);
  }
  const [, W, K, L] = c.logits.shape;
  let diff = 0;
  for (const e of entities) {
    const i = words.findIndex((w) => w[0] === e.start);
    const j = words.findIndex((w) => w[1] === e.end);
    const logit = c.logits.data[((i * K) + (j - i)) * L + c.labels.indexOf(e.label)];
    diff = Math.max(diff, Math.abs(e.score - 1 / (1 + Math.exp(-logit))));
  }
  console.error(`onepass scores vs GLiNER (PyTorch), first text: ${entities.length} spans of ${W} words, max |diff| ${diff.toExponential(2)}`);
  if (!entities.length || !(diff < 1e-3)) {
    server.kill('SIGTERM');
    throw new Error('onepass does not reproduce GLiNER');
  }
}

const loadBefore = os.loadavg()[0];
let onepassLat, forward, ortLat;
try {
  // The model's series appear with its first request: read them after the warm-up.
  let before;
  onepassLat = await timed(extract, async () => { before = await inferenceSeconds(); });
  const after = await inferenceSeconds();
  forward = (after.sum - before.sum) / (after.count - before.count) * 1000;
  ortLat = await timed((i) => session.run(feeds[i]));
} finally {
  server.kill('SIGTERM');
}
const onepass = summary(onepassLat);
const ortSummary = summary(ortLat);
const tokens = inputs.cases.map((c) => c.inputs.input_ids.shape[1]);
const result = {
  model: 'random-weight gliner_multi-v2.1 shape (bench/perf/make_gliner_shaped.py)',
  texts: inputs.cases.length, labels: inputs.labels,
  tokens_per_sequence: { min: Math.min(...tokens), max: Math.max(...tokens) },
  threads, cpus: os.cpus().length, cpu: os.cpus()[0]?.model,
  load_1min: { before: loadBefore, after: os.loadavg()[0] },
  onepass_http_end_to_end: onepass,
  onepass_forward_mean_ms: forward,
  ort_forward: ortSummary,
  ratios: {
    p50_ort_over_onepass_http: ortSummary.p50_ms / onepass.p50_ms,
    samples_onepass_http_over_ort: onepass.samples_per_s / ortSummary.samples_per_s,
    mean_forward_ort_over_onepass: ortSummary.mean_ms / forward,
  },
};
console.log(JSON.stringify(result, null, 1));
if (args.out) fs.writeFileSync(args.out, JSON.stringify(result, null, 1) + '\n');
