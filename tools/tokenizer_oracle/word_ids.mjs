// Adds (or refreshes) "word_ids" in every tests/data/fixtures/*/*/tokenizer_cases.json that sits
// beside a tokenizer.json: the Encoding.getWordIds() of npm `tokenizers` (the Rust library's
// Node binding, the fast tokenizer), null for the post-processor's tokens. Each case is run with
// its own truncation; its input_ids, token_type_ids and offsets must come out as the file has
// them, or the script stops without writing. Only the "word_ids" key, appended last, changes.
//
//   cd tools/tokenizer_oracle && npm install --no-audit --no-fund && node word_ids.mjs
import { readFileSync, readdirSync, existsSync, writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Tokenizer } from 'tokenizers';
import { encodeCase } from './encode_case.mjs';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), '../../tests/data/fixtures');
const kWordIds = ', "word_ids": ';

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

async function words_of(tokenizer, c) {
  const e = await encodeCase(tokenizer, c);
  const mismatch = (what) => {
    throw new Error(`case ${c.id}: the library's ${what} differ from the file's`);
  };
  if (!same(e.getIds(), c.input_ids)) mismatch('ids');
  if (c.token_type_ids && !same(e.getTypeIds(), c.token_type_ids)) mismatch('type ids');
  if (c.offsets && !same(e.getOffsets(), c.offsets)) mismatch('offsets');
  return e.getWordIds().map((w) => (w === undefined || w === null ? null : w));
}

for (const group of ['models', 'tokenizers']) {
  for (const name of readdirSync(join(fixtures, group)).sort()) {
    const dir = join(fixtures, group, name);
    const file = join(dir, 'tokenizer_cases.json');
    if (!existsSync(join(dir, 'tokenizer.json')) || !existsSync(file)) continue;
    const tokenizer = Tokenizer.fromFile(join(dir, 'tokenizer.json'));
    const lines = readFileSync(file, 'utf8').split('\n');
    let count = 0;
    for (let i = 0; i < lines.length; ++i) {
      // One case a line: `{"id": ...}` followed by "," except on the last.
      const line = lines[i];
      if (!line.startsWith('{"id"')) continue;
      const comma = line.endsWith(',') ? ',' : '';
      let body = line.slice(0, line.length - comma.length);
      const c = JSON.parse(body);
      const at = body.indexOf(kWordIds);
      if (at >= 0) body = body.slice(0, at) + '}';
      const words = await words_of(tokenizer, c);
      const list = words.map((w) => (w === null ? 'null' : String(w))).join(', ');
      lines[i] = body.slice(0, -1) + kWordIds + '[' + list + ']}' + comma;
      if (!same(JSON.parse(lines[i].slice(0, lines[i].length - comma.length)).word_ids, words))
        throw new Error(`case ${c.id}: the rewritten line does not read back`);
      ++count;
    }
    writeFileSync(file, lines.join('\n'));
    console.log(`${group}/${name}: word_ids for ${count} cases`);
  }
}
