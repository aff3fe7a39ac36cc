// Writes tests/data/fixtures/tokenizers/decoders_golden.json: the decoders no fixture folder
// uses (BPEDecoder, Replace, ByteFallback, Fuse, Strip, Sequence, Metaspace without a prepended
// marker, none at all), each in a small tokenizer.json made here over one shared vocabulary, and
// what npm `tokenizers` (the Rust library) decodes for a few id lists with and without special
// tokens. The C++ test parses the same documents (tests/tokenizer_json/decode_test.cpp).
//
//   cd tools/tokenizer_oracle && npm install --no-audit --no-fund --no-package-lock && node decoders.mjs
import { writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Tokenizer } from 'tokenizers';

const out = join(dirname(fileURLToPath(import.meta.url)),
  '../../tests/data/fixtures/tokenizers/decoders_golden.json');

// Byte tokens (a valid 3-byte euro sign, a lone 0xFF), marker tokens, end-of-word suffixes.
const tokens = ['[UNK]', '<s>', '\u2581Hello', '\u2581world', '<0x41>', '<0xE2>', '<0x82>',
  '<0xAC>', '<0xFF>', '\u2581', '\u2581\u2581x', 'ab</w>', 'cd</w>', 'ef', '  spaced  ',
  '##ing', 'x\u2581y', '<0x4g>', '</w>'];
const vocab = Object.fromEntries(tokens.map((t, i) => [t, i]));

const decoders = {
  llama: { type: 'Sequence', decoders: [
    { type: 'Replace', pattern: { String: '\u2581' }, content: ' ' },
    { type: 'ByteFallback' }, { type: 'Fuse' },
    { type: 'Strip', content: ' ', start: 1, stop: 0 }] },
  bpe_suffix: { type: 'BPEDecoder', suffix: '</w>' },
  metaspace_never: { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'never', split: true },
  metaspace_first: { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'first', split: true },
  metaspace_legacy: { type: 'Metaspace', replacement: '\u2581', add_prefix_space: true },
  strip_both: { type: 'Strip', content: ' ', start: 2, stop: 2 },
  byte_fallback_only: { type: 'ByteFallback' },
  fuse_then_wordpiece: { type: 'Sequence', decoders: [{ type: 'Fuse' },
    { type: 'WordPiece', prefix: '##', cleanup: false }] },
  none: null,
};

const idLists = [
  [2, 3], [1, 2, 3, 1], [4, 5, 6, 7], [5, 6], [8], [2, 8, 4, 3], [9, 2], [10, 3], [11, 12, 13],
  [13, 11], [14, 15], [14, 1, 14], [16, 9, 9], [17, 4], [18], [1], [],
];

const documents = {};
for (const [name, decoder] of Object.entries(decoders)) {
  const doc = {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [{ id: 1, content: '<s>', single_word: false, lstrip: false, rstrip: false,
      normalized: false, special: true }],
    normalizer: null, pre_tokenizer: null, post_processor: null, decoder,
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##',
      max_input_chars_per_word: 100, vocab },
  };
  const tokenizer = Tokenizer.fromString(JSON.stringify(doc));
  const cases = [];
  for (const ids of idLists) {
    cases.push({ ids, raw: await tokenizer.decode(ids, false),
      skip_special: await tokenizer.decode(ids, true) });
  }
  documents[name] = { tokenizer: doc, cases };
}
const pkg = JSON.parse((await import('node:fs')).readFileSync(
  join(dirname(fileURLToPath(import.meta.url)), 'node_modules/tokenizers/package.json'), 'utf8'));
writeFileSync(out, JSON.stringify({
  library: `tokenizers (npm) ${pkg.version}`,
  definition: 'Per decoder: tokenizer is a tokenizer.json document; raw = decode(ids, false), ' +
    'skip_special = decode(ids, true) of Tokenizer.fromString(tokenizer) in npm tokenizers.',
  decoders: documents,
}, null, 1) + '\n');
console.log(`wrote ${out}: ${Object.keys(documents).length} decoders x ${idLists.length} id lists`);
