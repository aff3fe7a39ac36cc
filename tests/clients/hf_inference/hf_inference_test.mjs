// @huggingface/inference (exact version in package.json) with endpointUrl at
// http://127.0.0.1:PORT/models/NAME while three models are served: each task's client call
// parses onepass's answer and gets the same numbers as the server's other routes (for question
// answering and fill-mask: the toolkit's /invocations answer; for sentence similarity: TEI's
// /similarity).
// usage: node hf_inference_test.mjs ONEPASS_BINARY FIXTURE_MODELS_DIR
import { InferenceClient } from "@huggingface/inference";
import { check, startServe } from "./serve.mjs";

const [binary, models] = process.argv.slice(2);
const server = await startServe(binary, [
  "--model", `nli=${models}/bert-tiny-nli`,
  "--model", `embed=${models}/bert-tiny-embed`,
  "--model", `rerank=${models}/bert-tiny-rerank`,
  "--model", `qa=${models}/bert-tiny-qa`,
  "--model", `mlm=${models}/bert-tiny-splade`,
]);
const base = `http://127.0.0.1:${server.port}`;
const post = async (path, body, model) => {
  const r = await fetch(base + path, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Amzn-SageMaker-Target-Model": model },
    body: JSON.stringify(body),
  });
  return r.json();
};
const client = (name) => new InferenceClient(undefined, { endpointUrl: `${base}/models/${name}` });
const close = (a, b) => Math.abs(a - b) <= 1e-5;
const premise = "A man is playing a guitar on a busy street corner.";

try {
  // text-classification: every label, sorted, the toolkit's scores for that model.
  const labels = await client("nli").textClassification({ inputs: premise });
  const toolkit = await post("/invocations", { inputs: premise, parameters: { top_k: null } }, "nli");
  check(labels.length === 3, `3 labels, got ${JSON.stringify(labels)}`);
  for (let i = 0; i < 3; ++i)
    check(labels[i].label === toolkit[i].label && close(labels[i].score, toolkit[i].score),
          `label ${i}: ${JSON.stringify(labels[i])} vs ${JSON.stringify(toolkit[i])}`);
  const top = await client("nli").textClassification({ inputs: premise, parameters: { top_k: 1 } });
  check(top.length === 1 && top[0].label === labels[0].label, `top_k 1: ${JSON.stringify(top)}`);

  // zero-shot-classification on the same NLI model.
  const zs = await client("nli").zeroShotClassification({
    inputs: premise,
    parameters: { candidate_labels: ["music", "cooking", "sports"] },
  });
  const zsServer = await post("/zero_shot", { inputs: premise, candidate_labels: ["music", "cooking", "sports"] }, "nli");
  check(zs.length === 3, `zero-shot: ${JSON.stringify(zs)}`);
  let sum = 0;
  for (let i = 0; i < 3; ++i) {
    sum += zs[i].score;
    check(zs[i].label === zsServer.labels[i] && close(zs[i].score, zsServer.scores[i]),
          `zero-shot ${i}: ${JSON.stringify(zs[i])} vs ${JSON.stringify(zsServer)}`);
  }
  check(close(sum, 1), `zero-shot scores sum to ${sum}`);

  // feature-extraction on the embedder: the pooled vector, as TEI's /embed gives it.
  const vector = await client("embed").featureExtraction({ inputs: premise });
  const tei = await post("/embed", { inputs: premise, normalize: false }, "embed");
  check(Array.isArray(vector) && vector.length === tei[0].length && vector.length > 0,
        `embedding length ${vector.length}`);
  for (let i = 0; i < vector.length; ++i)
    check(close(vector[i], tei[0][i]), `embedding[${i}] ${vector[i]} vs ${tei[0][i]}`);
  const two = await client("embed").featureExtraction({ inputs: [premise, "hello"] });
  check(two.length === 2 && close(two[0][0], vector[0]), "a list of two texts: two vectors");

  // sentence-similarity on the embedder: the cosines TEI's /similarity gives.
  const similarityInputs = { source_sentence: premise, sentences: ["Someone makes music.", "hello"] };
  const sims = await client("embed").sentenceSimilarity({ inputs: similarityInputs });
  const teiSims = await post("/similarity", { inputs: similarityInputs }, "embed");
  check(Array.isArray(sims) && sims.length === 2 && sims.every((s, i) => close(s, teiSims[i])),
        `sentence similarity: ${JSON.stringify(sims)} vs ${JSON.stringify(teiSims)}`);

  // The cross-encoder through the same client: a pair classified by its one label.
  const pair = await client("rerank").textClassification({
    inputs: { text: "guitar", text_pair: premise },
  });
  check(pair.length === 1 && typeof pair[0].score === "number", `rerank pair: ${JSON.stringify(pair)}`);

  // question-answering on the extractive QA model: the pipeline's {answer, score, start, end}.
  const qaInputs = {
    question: "Where does the train leave from?",
    context: "The train to Munich leaves from platform four at eight o'clock every morning.",
  };
  const answer = await client("qa").questionAnswering({ inputs: qaInputs });
  const qaToolkit = await post("/invocations", { inputs: qaInputs }, "qa");
  check(typeof answer.answer === "string" && answer.answer.length > 0 &&
        answer.answer === qaToolkit.answer && answer.start === qaToolkit.start &&
        answer.end === qaToolkit.end && close(answer.score, qaToolkit.score),
        `question answering: ${JSON.stringify(answer)} vs ${JSON.stringify(qaToolkit)}`);
  check(qaInputs.context.slice(answer.start, answer.end) === answer.answer,
        `the answer is the context's [start, end): ${JSON.stringify(answer)}`);

  // fill-mask on the masked-LM model: the client's validation of {score, token, token_str,
  // sequence} passes and the predictions are the toolkit's.
  const masked = "the [MASK] is free software.";
  const fills = await client("mlm").fillMask({ inputs: masked, parameters: { top_k: 3 } });
  const fillToolkit = await post("/invocations", { inputs: masked, parameters: { top_k: 3 } }, "mlm");
  check(Array.isArray(fills) && fills.length === 3, `fill-mask: ${JSON.stringify(fills)}`);
  for (let i = 0; i < 3; ++i)
    check(fills[i].token === fillToolkit[i].token && fills[i].token_str === fillToolkit[i].token_str &&
          fills[i].sequence === fillToolkit[i].sequence && close(fills[i].score, fillToolkit[i].score),
          `fill-mask ${i}: ${JSON.stringify(fills[i])} vs ${JSON.stringify(fillToolkit[i])}`);

  // A model that is not served: the client raises with the server's message.
  let message = "";
  try {
    await client("missing").textClassification({ inputs: premise });
  } catch (e) {
    message = String(e.message);
  }
  check(message.includes("not loaded"), `unknown model error: '${message}'`);
  console.log("ok: @huggingface/inference against /models/{nli,embed,rerank,qa,mlm}");
} finally {
  server.stop();
}
