// The committed SageMaker signing goldens (tests/data/sigv4/sagemaker-requests.json), which
// sigv4_test.cpp checks onepass's signer against, re-signed here by the AWS SDK's signer: both
// must give the same Authorization. sagemaker_test.mjs calls checkGoldens(); run directly with
// `--write` it fills in the expected values (after a change to the cases), printing them for
// review: node goldens.mjs GOLDENS.json --write
import { readFileSync, writeFileSync } from "node:fs";
import { check } from "./serve.mjs";
import { smithySign } from "./signer.mjs";

export async function checkGoldens(path, mode) {
const doc = JSON.parse(readFileSync(path, "utf8"));
for (const c of doc.cases) {
  const headers = Object.fromEntries(c.headers);
  const credentials = { accessKeyId: c.access_key_id, secretAccessKey: c.secret_access_key,
                        sessionToken: c.session_token || undefined };
  const signed = await smithySign({ method: "POST", host: c.host, path: c.path, headers,
                                    body: c.body, credentials, region: c.region,
                                    date: new Date(c.time) });
  if (mode === "--write") {
    c.authorization = signed.authorization;
    c.x_amz_content_sha256 = signed["x-amz-content-sha256"];
    console.log(c.name, c.authorization);
  } else {
    check(signed.authorization === c.authorization,
          `${c.name}: the SDK signs ${signed.authorization}, the golden says ${c.authorization}`);
    check(signed["x-amz-content-sha256"] === c.x_amz_content_sha256, `${c.name}: payload hash`);
  }
}
if (mode === "--write") writeFileSync(path, JSON.stringify(doc, null, 1) + "\n");
console.log(`${doc.cases.length} SageMaker requests: the AWS SDK's signer agrees with the goldens`);
}

// The published SigV4 suite's cases (tests/data/sigv4/aws-sig-v4-test-suite.json), which
// sigv4_test.cpp also checks: the SDK's signer must reproduce each Authorization too, so the
// data cannot hold a typo that onepass's signer happens to share.
export async function checkSuite(path) {
  const suite = JSON.parse(readFileSync(path, "utf8"));
  for (const c of suite.cases) {
    const headers = {};
    for (const [name, value] of c.headers) if (!/^(host|x-amz-date)$/i.test(name)) headers[name] = value;
    const query = Object.fromEntries(c.query ? c.query.split("&").map((kv) => kv.split("=")) : []);
    const signed = await smithySign({
      method: c.method, host: "example.amazonaws.com", path: c.path, query, headers, body: c.body,
      credentials: { accessKeyId: suite.access_key_id, secretAccessKey: suite.secret_access_key },
      region: suite.region, service: suite.service, date: new Date(suite.time), checksum: false });
    check(signed.authorization === c.authz, `${c.name}: the SDK signs ${signed.authorization}`);
  }
  console.log(`${suite.cases.length} published SigV4 suite cases: the AWS SDK's signer agrees`);
}

if (import.meta.url === `file://${process.argv[1]}`) await checkGoldens(...process.argv.slice(2));
