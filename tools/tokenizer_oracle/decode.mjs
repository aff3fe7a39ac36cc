// Writes tests/data/fixtures/tokenizer_decode_golden.json: what npm `tokenizers` (the Rust
// library's Node binding, the fast tokenizer) decodes, for every tests/data/fixtures/*/*/
// tokenizer.json. The ids are the first 40 cases of the tokenizer_cases.json beside it (single
// texts and pairs as they come), or of its golden.json where the folder has no
// tokenizer_cases.json (roberta-tiny-qa), plus the hand_* id lists that
// tools/fixtures/decode.py made for the same folder in decode_golden.json (so the Rust and the
// slow Python decodes of the same ids sit side by side). Each list is decoded with
// skipSpecialTokens false ("raw") and true ("skip_special"); the tokenizer.json's own decoder
// (recorded as it is in the file) does the rest, its cleanup flag included.
//
//   cd tools/tokenizer_oracle && npm install --no-audit --no-fund --no-package-lock && node decode.mjs
//   node decode.mjs --check   # recompute and compare with the existing file; exit 1 on a difference
import { readFileSync, readdirSync, existsSync, writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Tokenizer } from 'tokenizers';

const here = dirname(fileURLToPath(import.meta.url));
const fixtures = join(here, '../../tests/data/fixtures');
const out = join(fixtures, 'tokenizer_decode_golden.json');
const kMaxCases = 40;
const version = JSON.parse(readFileSync(join(here, 'node_modules/tokenizers/package.json'), 'utf8')).version;

const readJson = (path) => JSON.parse(readFileSync(path, 'utf8'));
// The slow tokenizers' decode golden, for its hand-made id lists (absent: none are added).
const slow = existsSync(join(fixtures, 'decode_golden.json'))
  ? readJson(join(fixtures, 'decode_golden.json')).fixtures
  : {};

function casesOf(dir) {
  if (existsSync(join(dir, 'tokenizer_cases.json')))
    return ['tokenizer_cases.json', readJson(join(dir, 'tokenizer_cases.json')).cases];
  if (existsSync(join(dir, 'golden.json'))) return ['golden.json', readJson(join(dir, 'golden.json')).cases];
  return [null, []];
}

async function fixture(group, name) {
  const dir = join(fixtures, group, name);
  const tokenizer = Tokenizer.fromFile(join(dir, 'tokenizer.json'));
  const [from, all] = casesOf(dir);
  const lists = all.slice(0, kMaxCases).map((c) => [c.id, c.input_ids]);
  const hand = group === 'models' && slow[name] ? slow[name].cases.filter((c) => c.id.startsWith('hand_')) : [];
  for (const c of hand) lists.push([c.id, c.ids]);
  const cases = [];
  for (const [id, ids] of lists) {
    // decode() answers a Promise; the boolean is skipSpecialTokens (index.d.ts).
    cases.push({ id, ids, raw: await tokenizer.decode(ids, false), skip_special: await tokenizer.decode(ids, true) });
  }
  return {
    decoder: readJson(join(dir, 'tokenizer.json')).decoder,
    cases_from: from,
    hand_cases_from: hand.length ? 'decode_golden.json' : null,
    cases,
  };
}

const doc = {
  library: `tokenizers (npm) ${version}`,
  definition:
    'Per case: raw = Tokenizer.fromFile(tokenizer.json).decode(ids, false) (skipSpecialTokens false), ' +
    'skip_special = decode(ids, true), with npm tokenizers (the Rust library). ids are the input_ids of ' +
    `the first ${kMaxCases} cases of cases_from (beside the tokenizer.json), then the hand_* lists of ` +
    'decode_golden.json for the same folder. decoder is the tokenizer.json "decoder" as written.',
  fixtures: {},
};
for (const group of ['models', 'tokenizers']) {
  for (const name of readdirSync(join(fixtures, group)).sort()) {
    if (!existsSync(join(fixtures, group, name, 'tokenizer.json'))) continue;
    const entry = await fixture(group, name);
    doc.fixtures[`${group}/${name}`] = entry;
    console.log(`${group}/${name}: decoder ${entry.decoder?.type}, ${entry.cases.length} cases from ` +
                `${entry.cases_from}${entry.hand_cases_from ? ' + hand_* of decode_golden.json' : ''}`);
  }
}
const text = JSON.stringify(doc, null, 1) + '\n';
if (process.argv.includes('--check')) {
  const old = readFileSync(out, 'utf8');
  if (old === text) {
    console.log(`${out}: identical`);
  } else {
    // Name the cases that differ, then fail.
    const before = JSON.parse(old).fixtures;
    for (const [key, entry] of Object.entries(doc.fixtures)) {
      const was = new Map((before[key]?.cases ?? []).map((c) => [c.id, c]));
      for (const c of entry.cases) {
        if (JSON.stringify(c) !== JSON.stringify(was.get(c.id))) console.log(`  ${key} ${c.id} differs`);
      }
    }
    console.log(`${out}: differs`);
    process.exit(1);
  }
} else {
  writeFileSync(out, text);
  console.log(`wrote ${out}: ${Object.keys(doc.fixtures).length} fixtures`);
}
