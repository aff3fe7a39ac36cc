// `onepass bench --sagemaker-endpoint` against the loopback SageMaker Runtime stand-in
// (sagemaker_runtime.mjs), which checks every request's signature with the AWS SDK's signer and
// forwards it to `onepass serve`: credentials from the environment (with a session token), a
// shared-files profile and the container credentials endpoint (fetched again when they near
// their expiry); `bench compare` across a SageMaker endpoint and a URL; throttling retried and
// counted; a rejected signature, an unknown endpoint, an expired token and clock skew stopping
// the run with exit code 2; and no secret or token in stdout, stderr or the results JSON.
// First, the signing goldens and published suite cases sigv4_test.cpp holds onepass to are
// re-signed by the SDK's signer (goldens.mjs), so that they cannot drift from it.
// usage: node sagemaker_test.mjs ONEPASS_BINARY FIXTURE_MODELS_DIR SIGV4_GOLDENS_JSON
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { checkGoldens, checkSuite } from "./goldens.mjs";
import { check, startServe } from "./serve.mjs";
import { startSageMakerRuntime } from "./sagemaker_runtime.mjs";

const [binary, models, goldens] = process.argv.slice(2);
await checkGoldens(goldens);
await checkSuite(join(dirname(goldens), "aws-sig-v4-test-suite.json"));
const dir = mkdtempSync(join(tmpdir(), "onepass-sigv4-"));
const secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
const token = "IQoJb3JpZ2luX2VjEXAMPLE+session/token==";
const containerSecret = "containerSecret/Example+0123456789abcdefghij";
const containerToken = "ContainerSessionToken+EXAMPLE/abc==";

function run(args, env) {
  return new Promise((resolve) => {
    const child = spawn(binary, args, {
      env: { PATH: process.env.PATH, HOME: dir, AWS_EC2_METADATA_DISABLED: "true", ...env },
      stdio: ["ignore", "pipe", "pipe"] });
    let out = "", err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("exit", (code) => resolve({ code, out, err }));
  });
}

const serve = await startServe(binary, ["--model", `nli=${models}/bert-tiny-nli`]);
const container = `http://127.0.0.1:${serve.port}`;
const runtime = await startSageMakerRuntime({
  region: "us-east-1",
  keys: { AKIDEXAMPLE: { secret, token, expiredToken: "expired-token" },
          ASIACONTAINERKEY: { secret: containerSecret, token: containerToken },
          AKIDPROFILE: { secret: "profileSecret/Example" } },
  endpoints: {
    nli: { container, variant: "variant-a" },
    throttled: { container, throttleEvery: 3 },
    skewed: { fail: { status: 403, type: "InvalidSignatureException",
                      message: "Signature expired: 20261207T100000Z is now earlier than 20261207T110000Z (20261207T111500Z - 5 min.)" } },
  },
});
const env = { AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME: runtime.url, AWS_ACCESS_KEY_ID: "AKIDEXAMPLE",
              AWS_SECRET_ACCESS_KEY: secret, AWS_SESSION_TOKEN: token, AWS_REGION: "us-east-1" };
const quick = ["-n", "12", "--warmup", "1", "--no-progress", "--dataset", `${dir}/data.jsonl`];
writeFileSync(`${dir}/data.jsonl`, ["A man eats.", "Ein Mann isst.", "Un homme mange.", "男は食べる。"]
  .map((text, i) => JSON.stringify({ text, text_pair: i % 2 ? "Someone eats." : "Nobody eats." })).join("\n"));
const noSecrets = (label, ...texts) => {
  for (const text of texts)
    for (const s of [secret, token, containerSecret, containerToken, "profileSecret"])
      check(!text.includes(s), `${label}: a secret or token was printed or written`);
};

try {
  // 1. Environment keys with a session token: every request verified by the SDK's signer.
  let r = await run(["bench", "--sagemaker-endpoint", "nli", "--concurrency", "2",
                     "--sweep-batch", "2", ...quick, "-o", `${dir}/r.json`], env);
  check(r.code === 0, `env credentials: exit ${r.code}: ${r.err}`);
  check(runtime.stats.rejected === 0 && runtime.stats.verified >= 4 + 2 * 13,
        `every request verified: ${JSON.stringify({ ...runtime.stats, headers: undefined })}`);
  const sent = runtime.stats.headers.at(-1);
  check(sent["content-type"] === "application/json", "Content-Type application/json");
  check(sent["x-amz-security-token"] === token, "the session token is sent");
  check(/SignedHeaders=[^,]*x-amz-security-token/.test(sent.authorization), "and signed");
  const doc = JSON.parse(readFileSync(`${dir}/r.json`, "utf8"));
  check(doc.schema === "onepass-bench/1", "results schema");
  const e = doc.endpoints[0];
  check(e.sagemaker.endpoint_name === "nli" && e.sagemaker.region === "us-east-1", "endpoint, region");
  check(e.sagemaker.variants["variant-a"] > 0, `variant: ${JSON.stringify(e.sagemaker)}`);
  check(e.url === `${runtime.url}/endpoints/nli`, `url ${e.url}`);
  check(e.runs.every((run) => run.mismatches === 0 && run.errors.total === 0 && run.verified > 0),
        "every answer verified");
  check(r.out.includes("answered by variant variant-a"), r.out);
  noSecrets("env run", r.out, r.err, readFileSync(`${dir}/r.json`, "utf8"));

  // 2. A shared-files profile named on the command line wins over the environment's keys.
  mkdirSync(`${dir}/.aws`, { recursive: true });
  writeFileSync(`${dir}/.aws/credentials`, "[bench]\naws_access_key_id = AKIDPROFILE\naws_secret_access_key = profileSecret/Example\n");
  writeFileSync(`${dir}/.aws/config`, "[profile bench]\nregion = us-east-1\n");
  const { AWS_REGION, ...envWithoutRegion } = env;
  r = await run(["bench", "--sagemaker-endpoint", "nli", "--profile", "bench", ...quick], envWithoutRegion);
  check(r.code === 0, `profile: exit ${r.code}: ${r.err}`);
  check(r.err.includes("from profile bench"), `the profile was used: ${r.err}`);
  noSecrets("profile run", r.out, r.err);

  // 3. The container credentials endpoint (ECS, EKS Pod Identity) with its authorization token.
  let containerCalls = 0, lifetimeMs = 3600e3;
  const credentialsServer = createServer((req, res) => {
    ++containerCalls;
    if (req.headers.authorization !== "pod-identity-token") { res.writeHead(401); return res.end(); }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ AccessKeyId: "ASIACONTAINERKEY", SecretAccessKey: containerSecret,
                             Token: containerToken, Expiration: new Date(Date.now() + lifetimeMs).toISOString() }));
  });
  await new Promise((ok) => credentialsServer.listen(0, "127.0.0.1", ok));
  writeFileSync(`${dir}/pod-token`, "pod-identity-token\n");
  const containerEnv = {
    AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME: runtime.url, AWS_REGION: "us-east-1",
    AWS_CONTAINER_CREDENTIALS_FULL_URI: `http://127.0.0.1:${credentialsServer.address().port}/v1/credentials`,
    AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE: `${dir}/pod-token` };
  r = await run(["bench", "--sagemaker-endpoint", "nli", ...quick], containerEnv);
  check(r.code === 0 && containerCalls === 1, `container credentials: exit ${r.code}, ${containerCalls} calls: ${r.err}`);
  noSecrets("container run", r.out, r.err);
  // Credentials inside the 5-minute refresh window are fetched again before a request is signed.
  containerCalls = 0;
  lifetimeMs = 4 * 60e3;
  r = await run(["bench", "--sagemaker-endpoint", "nli", ...quick], containerEnv);
  check(r.code === 0 && containerCalls > 12, `refreshed: exit ${r.code}, ${containerCalls} calls: ${r.err}`);
  credentialsServer.close();

  // 4. compare: a SageMaker endpoint beside a plain URL, the same workload, side by side.
  r = await run(["bench", "compare", "--sagemaker-endpoint", "sm=nli", "--endpoint", `direct=${container}`,
                 "--target-model", "sm=model-a.tar.gz", ...quick, "-o", `${dir}/cmp.json`], env);
  check(r.code === 0, `compare: exit ${r.code}: ${r.err}`);
  check(r.out.includes("side by side") && /agreement direct vs sm: 4 of 4 samples \(100\.0%\)/.test(r.out), r.out);
  check(runtime.stats.headers.at(-1)["x-amzn-sagemaker-target-model"] === "model-a.tar.gz", "target model header");
  check(/SignedHeaders=[^,]*x-amzn-sagemaker-target-model/.test(runtime.stats.headers.at(-1).authorization),
        "the target model header is signed");
  const cmp = JSON.parse(readFileSync(`${dir}/cmp.json`, "utf8"));
  const byName = Object.fromEntries(cmp.endpoints.map((e) => [e.name, e]));
  check(byName.sm.sagemaker.endpoint_name === "nli" && byName.direct.sagemaker === null,
        "one SageMaker endpoint, one URL");

  // 5. Throttling: retried in the standard mode, counted apart from failures.
  r = await run(["bench", "--sagemaker-endpoint", "throttled", ...quick, "-o", `${dir}/t.json`], env);
  check(r.code === 0, `throttled: exit ${r.code}: ${r.err}`);
  const t = JSON.parse(readFileSync(`${dir}/t.json`, "utf8")).endpoints[0].runs[0];
  check(t.throttled > 0 && t.sdk_retries >= t.throttled && t.errors.total === 0,
        `throttles retried: ${JSON.stringify(t)}`);

  // 6. What stops the run: exit code 2 and a message naming the cause and SageMaker's error type.
  const stops = [
    [{ ...env, AWS_SECRET_ACCESS_KEY: "wrong/secret" }, "nli", ["signature", "InvalidSignatureException"]],
    [env, "no-such-endpoint", ["unknown endpoint", "ValidationError", "no-such-endpoint"]],
    [{ ...env, AWS_SESSION_TOKEN: "expired-token" }, "nli", ["expired", "ExpiredTokenException"]],
    [{ ...env, AWS_ACCESS_KEY_ID: "AKIDUNKNOWN" }, "nli", ["UnrecognizedClientException"]],
    [env, "skewed", ["clock skew", "InvalidSignatureException"]],
  ];
  for (const [stopEnv, endpoint, words] of stops) {
    r = await run(["bench", "--sagemaker-endpoint", endpoint, ...quick], stopEnv);
    check(r.code === 2, `${endpoint} ${words[0]}: exit ${r.code}: ${r.err}`);
    for (const w of words) check(r.err.includes(w), `${words[0]}: "${w}" in: ${r.err}`);
    noSecrets(words[0], r.out, r.err);
  }
  console.log(`SageMaker stand-in: ${runtime.stats.verified} requests verified by @smithy/signature-v4`);
} finally {
  serve.stop();
  await runtime.stop();
}
