#!/usr/bin/env node
// The markdown table of bench/perf/auto.sh, from the JSON it wrote into OUT:
//   node bench/perf/auto_table.mjs OUT MODEL [MODEL ...]
// One row per model, threads and workload; the model's first row also holds what auto chose and
// why (the gate's figures), the gate's time and the serve starts.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const [outDir, ...models] = process.argv.slice(2);
if (!outDir || models.length === 0) {
  console.error('usage: auto_table.mjs OUT MODEL [MODEL ...]');
  process.exit(2);
}
const read = (name) => JSON.parse(fs.readFileSync(path.join(outDir, name), 'utf8'));
const f1 = (x) => x.toFixed(1);
const f2 = (x) => x.toFixed(2);
const speed = (e) => `${f1(e.p50_ms)} ms · ${f1(e.samples_per_s)}/s`;

// "int8 refused: label agreement 40.0% < 99%" for each gate, from check's report.
function why(check) {
  return check.gates.map((g) => {
    if (g.skipped) return `${g.precision} skipped: ${g.skipped}`;
    const figures = `agreement ${(100 * g.label_agreement).toFixed(1)}%, ` +
      `share shift ${(100 * g.max_share_shift).toFixed(1)}%, min cosine ${g.min_cosine.toFixed(4)}`;
    return g.pass ? `${g.precision} passed (${figures})` : `${g.precision} refused: ${g.refused}`;
  }).join('; ');
}

const rows = [];
let cpu = os.cpus()[0].model;
let load = '';
for (const m of models) {
  const check = read(`${m}.check.json`);
  const wall = read(`${m}.check-wall.json`).wall_s;
  const start = (kind) => read(`${m}.start-${kind}.json`).start_to_first_answer_s.median;
  const perf = read(`perf-${m}.json`);
  cpu = perf.cpu;
  load = `${perf.loadavg_1m.toFixed(2)}`;
  perf.results.forEach((e, i) => {
    const auto = e.onepass_auto;
    rows.push([
      i === 0 ? m : '',
      i === 0 ? `**${check.chosen}**: ${why(check)}` : '',
      i === 0 ? `${f1(wall)} (check ${f1(check.seconds)})` : '',
      i === 0 ? `${f2(start('fp32'))} / ${f2(start('cached'))} / ${f2(start('gate'))}` : '',
      e.workload, String(e.threads),
      speed(e.ort), speed(e.onepass), `${auto.precision}: ${speed(auto)}`,
      `x${f2(auto.throughput_vs_fp32)}`, `x${f2(auto.throughput_vs_ort)}`,
    ]);
  });
}
const head = ['shape', 'auto chose, and why (the gate)', 'gate s (wall)',
  'serve start s: fp32 / auto cached / auto no verdict', 'workload', 'threads',
  'ORT fp32 p50 · samples/s', 'onepass fp32', 'onepass auto', 'auto/fp32', 'auto/ORT'];
console.log(`${cpu}, ${os.cpus().length} CPUs, load ${load}; samples/s = rows / mean batch time\n`);
console.log(`| ${head.join(' | ')} |`);
console.log(`|${head.map(() => '---').join('|')}|`);
for (const r of rows) console.log(`| ${r.join(' | ')} |`);
