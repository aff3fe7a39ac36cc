// KServe's v2 gRPC protocol with npm @grpc/grpc-js, its messages from the repository's .proto
// through @grpc/proto-loader (a protobuf reader not written here), against `onepass serve
// --grpc-port`: the classifier's and the embedder's golden cases through ModelInfer within 1e-4
// in both tensor forms, 64 concurrent calls each with its own answer, and the error statuses;
// then TEI's tei.v1 services on the same port (TEI_PROTO_FILE): Embed's golden cases, and a
// PredictStream answered in order, each message its golden logits.
// usage: node grpc_js_test.mjs ONEPASS FIXTURES_DIR PROTO_FILE TEI_PROTO_FILE
import { readFileSync } from "node:fs";
import grpc from "@grpc/grpc-js";
import protoLoader from "@grpc/proto-loader";
import { check, startServe } from "./serve.mjs";

const [binary, fixtures, protoFile, teiProtoFile] = process.argv.slice(2);
const KEY = "grpc-js-key";
const golden = (folder) => JSON.parse(readFileSync(`${fixtures}/${folder}/golden.json`, "utf8"));

const definition = protoLoader.loadSync(protoFile, { keepCase: true, longs: Number, defaults: true });
const { GRPCInferenceService } = grpc.loadPackageDefinition(definition).inference;
const tei = grpc.loadPackageDefinition(
  protoLoader.loadSync(teiProtoFile, { keepCase: true, longs: Number, defaults: true })).tei.v1;

const server = await startServe(binary, [
  "--grpc-port", "0", "--api-key", KEY,
  "--model", `nli=${fixtures}/bert-tiny-nli`, "--model", `embed=${fixtures}/bert-tiny-embed`,
]);
const client = new GRPCInferenceService(`127.0.0.1:${server.grpcPort}`,
                                        grpc.credentials.createInsecure());
const teiEmbed = new tei.Embed(`127.0.0.1:${server.grpcPort}`, grpc.credentials.createInsecure());
const teiPredict = new tei.Predict(`127.0.0.1:${server.grpcPort}`,
                                   grpc.credentials.createInsecure());

// TEI's messages name no model: the x-amzn-sagemaker-target-model metadata does.
function teiMetadata(model, key = KEY) {
  const metadata = new grpc.Metadata();
  if (key !== null) metadata.add("authorization", `Bearer ${key}`);
  metadata.add("x-amzn-sagemaker-target-model", model);
  return metadata;
}

// A bidi stream: every request written, the answers collected in the order they came.
function teiStream(client, method, model, requests, key = KEY) {
  return new Promise((resolve, reject) => {
    const answers = [];
    const stream = client[method](teiMetadata(model, key));
    stream.on("data", (answer) => answers.push(answer));
    stream.on("error", reject);
    stream.on("end", () => resolve(answers));
    for (const request of requests) stream.write(request);
    stream.end();
  });
}

function call(method, request, key = KEY) {
  const metadata = new grpc.Metadata();
  if (key !== null) metadata.add("authorization", `Bearer ${key}`);
  return new Promise((resolve, reject) =>
    client[method](request, metadata, (error, answer) => (error ? reject(error) : resolve(answer))));
}

async function status(method, request, key = KEY) {
  try {
    await call(method, request, key);
    return { code: grpc.status.OK, details: "" };
  } catch (error) {
    return error;
  }
}

// Each case's ids padded to the longest, as INT64 contents or INT32 raw.
function idsRequest(model, cases, raw) {
  const width = Math.max(...cases.map((c) => c.input_ids.length));
  const tensors = { input_ids: [], attention_mask: [], token_type_ids: [] };
  for (const c of cases) {
    const n = c.input_ids.length;
    const pad = Array(width - n).fill(0);
    tensors.input_ids.push(...c.input_ids, ...pad);
    tensors.attention_mask.push(...Array(n).fill(1), ...pad);
    tensors.token_type_ids.push(...(c.token_type_ids ?? Array(n).fill(0)), ...pad);
  }
  const request = { model_name: model, inputs: [], raw_input_contents: [] };
  for (const [name, values] of Object.entries(tensors)) {
    const input = { name, datatype: raw ? "INT32" : "INT64", shape: [cases.length, width] };
    if (raw) {
      const bytes = Buffer.alloc(values.length * 4);
      values.forEach((v, i) => bytes.writeInt32LE(v, i * 4));
      request.raw_input_contents.push(bytes);
    } else {
      input.contents = { int64_contents: values };
    }
    request.inputs.push(input);
  }
  return request;
}

function floats(answer) {
  if (answer.raw_output_contents.length > 0) {
    const raw = answer.raw_output_contents[0];
    return Array.from({ length: raw.length / 4 }, (_, i) => raw.readFloatLE(i * 4));
  }
  return answer.outputs[0].contents.fp32_contents;
}

const close = (got, want) =>
  got.length === want.length && got.every((g, i) => Math.abs(g - want[i]) <= 1e-4);

try {
  const meta = await call("ServerMetadata", {});
  check(meta.name === "onepass" && meta.version !== "", `server metadata ${JSON.stringify(meta)}`);

  // Every golden case of the classifier, in both forms, 32 a call (--max-client-batch-size).
  const nli = golden("bert-tiny-nli").cases;
  for (let start = 0; start < nli.length; start += 32) {
    const chunk = nli.slice(start, start + 32);
    for (const raw of [false, true]) {
      const answer = await call("ModelInfer", idsRequest("nli", chunk, raw));
      check(answer.outputs[0].name === "logits", "the output is logits");
      check(answer.outputs[0].shape.join() === `${chunk.length},3`, "logits shape");
      const values = floats(answer);
      chunk.forEach((c, i) =>
        check(close(values.slice(i * 3, i * 3 + 3), c.logits), `nli ${c.id} raw=${raw}`));
    }
  }

  // Every golden case of the embedder (mean pooling).
  const embed = golden("bert-tiny-embed").cases;
  for (let start = 0; start < embed.length; start += 32) {
    const chunk = embed.slice(start, start + 32);
    const values = floats(await call("ModelInfer", idsRequest("embed", chunk, false)));
    const width = chunk[0].embedding.mean.length;
    chunk.forEach((c, i) =>
      check(close(values.slice(i * width, (i + 1) * width), c.embedding.mean), `embed ${c.id}`));
  }

  // A text as BYTES in contents.
  const text = nli.find((c) => c.id === "short_en");
  const byText = await call("ModelInfer", {
    model_name: "nli",
    inputs: [{ name: "text", datatype: "BYTES", shape: [1],
               contents: { bytes_contents: [Buffer.from(text.text)] } }],
  });
  check(close(floats(byText), text.logits), "nli text");

  // 64 calls at once, each its own case.
  const answers = await Promise.all(Array.from({ length: 64 }, (_, k) =>
    call("ModelInfer", idsRequest("nli", [nli[k % nli.length]], k % 2 === 1))));
  answers.forEach((a, k) => check(close(floats(a), nli[k % nli.length].logits), `concurrent ${k}`));

  // Errors.
  const one = idsRequest("nli", nli.slice(0, 1), false);
  check((await status("ModelInfer", one, null)).code === grpc.status.UNAUTHENTICATED, "no key");
  check((await status("ModelInfer", one, "nope")).code === grpc.status.UNAUTHENTICATED, "bad key");
  const missing = await status("ModelInfer", { ...one, model_name: "missing" });
  check(missing.code === grpc.status.NOT_FOUND, `unknown model: ${missing.code}`);
  const badShape = await status("ModelInfer", {
    model_name: "nli",
    inputs: [{ name: "text", datatype: "BYTES", shape: [2],
               contents: { bytes_contents: [Buffer.from("one")] } }],
  });
  check(badShape.code === grpc.status.INVALID_ARGUMENT && /shape/.test(badShape.details),
        `a count that disagrees with the shape: ${badShape.code} ${badShape.details}`);
  // TEI: Embed (unary) on every embedder golden case TEI reads whole.
  const readable = (c) => !c.truncation && !c.fast_input_ids && c.text;
  for (const c of embed.filter(readable)) {
    const answer = await new Promise((resolve, reject) =>
      teiEmbed.Embed({ inputs: c.text, normalize: false }, teiMetadata("embed"),
                     (error, a) => (error ? reject(error) : resolve(a))));
    check(close(answer.embeddings, c.embedding.mean), `tei Embed ${c.id}`);
  }
  // PredictStream: one message per text, answered in order.
  const singles = nli.filter(readable);
  const labels = golden("bert-tiny-nli").id2label;
  const streamed = await teiStream(teiPredict, "PredictStream", "nli",
                                   singles.map((c) => ({ inputs: c.text, raw_scores: true })));
  check(streamed.length === singles.length, `PredictStream: ${streamed.length} answers`);
  streamed.forEach((a, i) => {
    const byLabel = Object.fromEntries(a.predictions.map((p) => [p.label, p.score]));
    const got = [0, 1, 2].map((k) => byLabel[labels[k]]);
    check(close(got, singles[i].logits), `PredictStream ${singles[i].id} in order`);
  });
  const unauthorized = await teiStream(teiPredict, "PredictStream", "nli", [{ inputs: "x" }],
                                       null).catch((e) => e);
  check(unauthorized.code === grpc.status.UNAUTHENTICATED,
        `a TEI stream without a key: ${unauthorized.code}`);

  const ready = await call("ModelReady", { name: "embed" });
  check(ready.ready === true, "embed is ready after all of that");
} finally {
  client.close();
  teiEmbed.close();
  teiPredict.close();
  server.stop();
}
check((await server.exited) === 0, "serve exits 0 on SIGTERM");
console.log("grpc-js client test passed");
