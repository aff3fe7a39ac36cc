// The committed SageMaker signing goldens (tests/data/sigv4/sagemaker-requests.json), which
// sigv4_test.cpp checks onepass's signer against, re-signed here by the AWS SDK's signer: both
// must give the same Authorization. `--write` fills in the expected values (after a change to
// the cases), printing them for review.
// usage: node goldens_test.mjs GOLDENS.json [--write]
import { readFileSync, writeFileSync } from "node:fs";
import { check } from "./serve.mjs";
import { smithySign } from "./signer.mjs";

const [path, mode] = process.argv.slice(2);
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
