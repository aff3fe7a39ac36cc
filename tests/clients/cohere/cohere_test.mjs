// The cohere-ai SDK (exact version in package.json; it runs on Node 18 and 20) with its baseUrl
// at onepass serve on loopback, while three models are served and an API key is required: the v1
// client (CohereClient.rerank) and the v2 client (CohereClientV2.rerank) get the bert-tiny-rerank
// fixture's golden scores, in the goldens' order, through the SDK's own parsing; their embed
// calls get TEI /embed's vectors.
// usage: node cohere_test.mjs ONEPASS_BINARY FIXTURE_MODELS_DIR
import { readFileSync } from "node:fs";
import { CohereClient, CohereClientV2, CohereError } from "cohere-ai";
import { check, startServe } from "./serve.mjs";

const [binary, models] = process.argv.slice(2);
const key = "cohere-test-key";
const server = await startServe(binary, [
  "--api-key", key,
  "--model", `nli=${models}/bert-tiny-nli`,
  "--model", `embed=${models}/bert-tiny-embed`,
  "--model", `rerank=${models}/bert-tiny-rerank`,
]);
const baseUrl = `http://127.0.0.1:${server.port}`;
const options = { token: key, baseUrl, maxRetries: 0 };

// The golden cases sharing one query, whose passages tokenizer.json reproduces untruncated.
const golden = JSON.parse(readFileSync(`${models}/bert-tiny-rerank/golden.json`, "utf8"));
const query = "what is this text about";
const cases = golden.cases.filter(
  (c) => c.pair[0] === query && c.pair[1] !== "" && !c.truncation && !c.fast_input_ids);
const documents = cases.map((c) => c.pair[1]);
const probs = cases.map((c) => c.probs[0]);
const order = probs.map((_, i) => i).sort((a, b) => probs[b] - probs[a] || a - b);
const close = (a, b) => Math.abs(a - b) <= 1e-4;

function checkRanking(results, topN, label) {
  check(results.length === topN, `${label}: ${topN} results, got ${results.length}`);
  for (let rank = 0; rank < topN; ++rank) {
    const want = order[rank];
    check(results[rank].index === want,
          `${label}: rank ${rank} is document ${results[rank].index}, golden says ${want}`);
    check(close(results[rank].relevanceScore, probs[want]),
          `${label}: document ${want} scored ${results[rank].relevanceScore}, golden ${probs[want]}`);
  }
}

try {
  check(documents.length >= 10, `enough golden documents (${documents.length})`);

  // v1: strings and {text,...} objects, top_n, documents returned with their other fields.
  const v1 = new CohereClient(options);
  const mixed = documents.map((text, i) => (i % 2 ? { text, id: `doc${i}` } : text));
  const r1 = await v1.rerank({ model: "rerank", query, documents: mixed, topN: 5, returnDocuments: true });
  checkRanking(r1.results, 5, "v1");
  for (const result of r1.results) {
    check(result.document.text === documents[result.index], `v1 echoes document ${result.index}`);
    if (result.index % 2)
      check(result.document.id === `doc${result.index}`, `v1 keeps the id of ${result.index}`);
  }
  check(r1.meta.apiVersion.version === "1", `v1 meta: ${JSON.stringify(r1.meta)}`);
  check(typeof r1.id === "string" && r1.id.length > 0, "v1 id");
  const all1 = await v1.rerank({ model: "rerank", query, documents });
  checkRanking(all1.results, documents.length, "v1 without top_n");
  check(all1.results.every((r) => r.document === undefined), "v1 without return_documents");

  // v2: the CohereClientV2 client and the client.v2 namespace.
  const v2 = new CohereClientV2(options);
  const r2 = await v2.rerank({ model: "rerank", query, documents, topN: 3 });
  checkRanking(r2.results, 3, "v2");
  check(r2.meta.apiVersion.version === "2", `v2 meta: ${JSON.stringify(r2.meta)}`);
  const r2ns = await v1.v2.rerank({ model: "rerank", query, documents });
  checkRanking(r2ns.results, documents.length, "client.v2");

  // embed, v1 and v2: the SDK parses both answer shapes; the vectors are TEI /embed's.
  const texts = ["A man is playing a guitar.", "hello world"];
  const tei = await (await fetch(`${baseUrl}/embed`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}`,
               "X-Amzn-SageMaker-Target-Model": "embed" },
    body: JSON.stringify({ inputs: texts }),
  })).json();
  const sameVectors = (got, label) => {
    check(got.length === 2 && got.every((v, i) => v.length === tei[i].length &&
                                         v.every((x, j) => close(x, tei[i][j]))),
          `${label}: ${JSON.stringify(got).slice(0, 200)}`);
  };
  const e2 = await v2.embed({ model: "embed", texts, inputType: "search_document",
                              embeddingTypes: ["float"] });
  sameVectors(e2.embeddings.float, "v2 embed");
  check(e2.meta.apiVersion.version === "2" && e2.texts[1] === texts[1], `v2 embed: ${e2.meta}`);
  const e1 = await v1.embed({ model: "embed", texts, inputType: "search_query" });
  check(e1.responseType === "embeddings_floats", `v1 embed type ${e1.responseType}`);
  sameVectors(e1.embeddings, "v1 embed");

  // Errors reach the caller as the SDK's typed errors with onepass's message.
  const failure = async (call) => {
    try {
      await call();
    } catch (e) {
      return e;
    }
    return null;
  };
  const missing = await failure(() => v2.rerank({ model: "missing", query, documents }));
  check(missing instanceof CohereError && missing.statusCode === 404 &&
          String(missing.body?.message).includes("not loaded"),
        `unknown model: ${missing}`);
  const classifier = await failure(() => v2.rerank({ model: "nli", query, documents }));
  check(classifier instanceof CohereError && classifier.statusCode === 400 &&
          String(classifier.body?.message).includes("not a re-ranker"),
        `classifier: ${classifier}`);
  const wrongKey = await failure(() =>
    new CohereClientV2({ ...options, token: "wrong" }).rerank({ model: "rerank", query, documents }));
  check(wrongKey instanceof CohereError && wrongKey.statusCode === 401, `wrong key: ${wrongKey}`);
  console.log("ok: cohere-ai v1 and v2 rerank and embed against /v1|v2/rerank and /v1|v2/embed");
} finally {
  server.stop();
}
