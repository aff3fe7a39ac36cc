// Writes FOLDER/tokenizer_cases.json for a tokenizer.json derived from another folder's (as
// deberta-tiny-nli's is from roberta-bpe-tiny's): the source file's texts, pairs and truncations,
// encoded with FOLDER/tokenizer.json by npm `tokenizers` (the Rust library: ids, type ids,
// offsets, word ids), keeping only the cases where the slow tokenizer's ids
// (tools/fixtures/slow_ids.py) agree with the library's, and leaving out KNOWN_DIFFERENT. Prints
// how many were left out.
//
//   node cases_from.mjs FOLDER SOURCE_CASES SLOW_IDS
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer } from 'tokenizers';
import { encodeCase } from './encode_case.mjs';

const [folder, sourceFile, slowFile] = process.argv.slice(2);
if (!slowFile) {
  console.error('usage: node cases_from.mjs FOLDER SOURCE_CASES SLOW_IDS');
  process.exit(2);
}
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
// Pairs cut by longest_first to an odd budget (13 or 61 ids besides [CLS] / [SEP]) with both
// texts over half of it, where the library (0.23.2) gives the larger half to the first text
// although it is the shorter one; its truncation.rs, which onepass follows, gives it to the
// longer text, and so does the library on other texts of the same lengths (ASCII ones). Not
// understood yet, so not claimed: tests/data/fixtures/README.md.
const KNOWN_DIFFERENT = new Set(['t0003', 't0010', 't0061', 't0064', 't0068', 't0069']);
// One case a line, spaced as the other tokenizer_cases.json files (", " and ": "), which
// word_ids.mjs reads line by line.
const spaced = (v) => {
  if (Array.isArray(v)) return '[' + v.map(spaced).join(', ') + ']';
  if (v !== null && typeof v === 'object')
    return '{' + Object.entries(v).map(([k, x]) => JSON.stringify(k) + ': ' + spaced(x)).join(', ') + '}';
  return JSON.stringify(v);
};

const tokenizer = Tokenizer.fromFile(join(folder, 'tokenizer.json'));
const source = JSON.parse(readFileSync(sourceFile, 'utf8')).cases;
const slow = new Map(JSON.parse(readFileSync(slowFile, 'utf8')).cases.map((c) => [c.id, c]));
const lines = [];
const left = [];
for (const c of source) {
  if (KNOWN_DIFFERENT.has(c.id)) {
    left.push(`${c.id} (known difference)`);
    continue;
  }
  let e;
  try {
    e = await encodeCase(tokenizer, c);
  } catch (err) {
    left.push(`${c.id} (library: ${err.message})`);
    continue;
  }
  const want = slow.get(c.id);
  if (!want || !same(e.getIds(), want.input_ids) || !same(e.getTypeIds(), want.token_type_ids)) {
    left.push(c.id);
    continue;
  }
  const out = { id: c.id };
  if (c.pair) out.pair = c.pair;
  else out.text = c.text;
  if (c.max_length !== undefined) out.max_length = c.max_length;
  if (c.truncation !== undefined) out.truncation = c.truncation;
  out.input_ids = e.getIds();
  out.token_type_ids = e.getTypeIds();
  out.offsets = e.getOffsets();
  out.word_ids = e.getWordIds().map((w) => (w === undefined || w === null ? null : w));
  lines.push(spaced(out));
}
writeFileSync(join(folder, 'tokenizer_cases.json'), '{"cases": [\n' + lines.join(',\n') + '\n]}\n');
console.log(`${folder}: ${lines.length} cases written, ${left.length} left out${left.length ? ': ' + left.join(', ') : ''}`);
