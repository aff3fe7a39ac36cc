#!/usr/bin/env node
// Agreement of onepass and ONNX Runtime with a perf model's golden.json (transformers, float32).
//
//   node bench/perf/check.mjs DIR --onepass BIN --ort-from FOLDER [--threads 2] [--tol 1e-4]
//
// DIR is a complete perf model folder (model.safetensors regenerated next to model.onnx, see
// bench/perf/run.sh). onepass (`onepass run`, fp32) runs every golden case alone, then the golden
// batch's cases as one batch (packed: onepass pads nothing); ONNX Runtime runs the perf kit's own
// checker (shared/perf-models/ort_check.mjs: each case alone, then the right-padded batch).
// One-label models print only a score (the sigmoid of the logit), so their logit is recovered as
// log(score / (1 - score)) and the score is also compared with the golden probs.
// Prints one JSON line; exit status 1 when any difference is above --tol.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = { onepass: '', 'ort-from': '', threads: 2, tol: 1e-4,
  kit: path.join(here, '..', '..', '..', 'shared', 'perf-models') };
const pos = [];
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a.startsWith('--') && i + 1 < process.argv.length) args[a.slice(2)] = process.argv[++i];
  else pos.push(a);
}
if (pos.length !== 1 || !args.onepass) {
  console.error('usage: node bench/perf/check.mjs DIR --onepass BIN --ort-from FOLDER [--threads 2] [--tol 1e-4]');
  process.exit(2);
}
const dir = path.resolve(pos[0]);
const golden = JSON.parse(fs.readFileSync(path.join(dir, 'golden.json'), 'utf8'));
const tol = Number(args.tol);

// onepass run over these cases with --batch-size batchSize; its answers in order.
function onepass(cases, batchSize) {
  const tmp = path.join(os.tmpdir(), `onepass-check-${process.pid}.jsonl`);
  fs.writeFileSync(tmp, cases.map((c) => JSON.stringify(c.token_type_ids
    ? { input_ids: c.input_ids, token_type_ids: c.token_type_ids }
    : { input_ids: c.input_ids })).join('\n') + '\n');
  const res = spawnSync(args.onepass, ['run', '--model', dir, '--input', tmp, '--batch-size',
    String(batchSize), '--threads', String(args.threads)], { encoding: 'utf8', maxBuffer: 64 << 20 });
  fs.unlinkSync(tmp);
  if (res.status !== 0) throw new Error(`onepass failed (${res.status}): ${res.stderr}`);
  return res.stdout.trim().split('\n').map((l) => JSON.parse(l));
}

// Largest |logit - golden| of one answer (and |score - golden prob| for one-label models).
function diff(answer, logits, probs) {
  if ('score' in answer) {
    const s = answer.score;
    const d = Math.abs(Math.log(s / (1 - s)) - logits[0]);
    return probs ? Math.max(d, Math.abs(s - probs[0])) : d;
  }
  return Math.max(...logits.map((v, k) => Math.abs(answer.logits[k] - v)));
}

const perCase = {};
let single = 0;
onepass(golden.cases, 1).forEach((a, i) => {
  const c = golden.cases[i];
  perCase[c.id] = diff(a, c.logits, c.probs);
  single = Math.max(single, perCase[c.id]);
});
const byId = Object.fromEntries(golden.cases.map((c) => [c.id, c]));
let batch = 0;
const rows = golden.batch.rows;
onepass(rows.map((r) => byId[r.id]), rows.length).forEach((a, i) => {
  batch = Math.max(batch, diff(a, rows[i].logits, null));
});

const ort = spawnSync('node', [path.join(args.kit, 'ort_check.mjs'), dir, '--threads',
  String(args.threads), '--tol', String(tol), '--ort-from', args['ort-from'] || '.'], { encoding: 'utf8' });
const ortResult = ort.stdout.trim() ? JSON.parse(ort.stdout.trim().split('\n').pop()) : { error: ort.stderr };
const ok = single <= tol && batch <= tol && ort.status === 0;
console.log(JSON.stringify({
  model: golden.model, threads: Number(args.threads), tol,
  onepass: { max_abs_diff_single: single, max_abs_diff_batch: batch, per_case: perCase },
  ort: { max_abs_diff_single: ortResult.max_abs_diff_single, max_abs_diff_batch: ortResult.max_abs_diff_batch,
    version: ortResult.ort, ok: ort.status === 0, error: ortResult.error },
  ok,
}));
process.exit(ok ? 0 : 1);
