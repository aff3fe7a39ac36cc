// One tokenizer_cases.json case through npm `tokenizers`: the case's own truncation (max_length
// and truncation, or none), special tokens added. Shared by word_ids.mjs and cases_from.mjs.
const strategies = { longest_first: 'LongestFirst', only_first: 'OnlyFirst', only_second: 'OnlySecond' };

export async function encodeCase(tokenizer, c) {
  if (c.max_length !== undefined) {
    tokenizer.setTruncation(c.max_length, {
      strategy: strategies[c.truncation ?? 'longest_first'],
      stride: 0,
    });
  } else {
    tokenizer.disableTruncation();
  }
  const [text, pair] = c.pair ?? [c.text, null];
  return tokenizer.encode(text, pair, { addSpecialTokens: true });
}
