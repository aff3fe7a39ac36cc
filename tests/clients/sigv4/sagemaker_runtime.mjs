// A loopback stand-in for the SageMaker Runtime API: POST /endpoints/{name}/invocations, every
// request's SigV4 signature re-computed by the AWS SDK's signer (signer.mjs) from the request
// as received and compared byte for byte, then forwarded to a container (`onepass serve`) as
// SageMaker forwards it: the body to /invocations, the answer back with
// x-Amzn-Invoked-Production-Variant, a container's error wrapped in a ModelError. Errors keep
// SageMaker's shape: x-amzn-ErrorType and a JSON {"message"}.
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import { smithySign } from "./signer.mjs";

// options: {region, keys: {accessKeyId: {secret, token}}, endpoints: {name: behaviour}} where a
// behaviour is {container: "http://127.0.0.1:PORT", variant, throttleEvery, fail} and `fail`
// answers every request with a given error ({status, type, message}).
export function startSageMakerRuntime(options) {
  const stats = { verified: 0, rejected: 0, throttled: 0, forwarded: 0, headers: [] };
  let count = 0;
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = Buffer.concat(chunks).toString("utf8");
    const error = (status, type, message) => {
      res.writeHead(status, { "content-type": "application/json",
                              "x-amzn-errortype": `${type}:http://internal.amazon.com/coral/com.amazon.sagemaker/`,
                              date: new Date().toUTCString() });
      res.end(JSON.stringify({ message }));
    };
    const route = req.url.match(/^\/endpoints\/([^/]+)\/invocations$/);
    if (req.method !== "POST" || !route) return error(404, "UnknownOperationException", `no route ${req.url}`);
    const why = await verify(req, body, options);
    if (why) {
      ++stats.rejected;
      return error(403, why.type, why.message);
    }
    ++stats.verified;
    stats.headers.push(req.headers);
    const endpoint = options.endpoints[route[1]];
    if (!endpoint) {
      return error(400, "ValidationError", `Endpoint ${route[1]} of account 123456789012 not found.`);
    }
    if (endpoint.fail) return error(endpoint.fail.status, endpoint.fail.type, endpoint.fail.message);
    if (endpoint.throttleEvery && ++count % endpoint.throttleEvery === 0) {
      ++stats.throttled;
      return error(400, "ThrottlingException", "Rate exceeded");
    }
    const answer = await fetch(`${endpoint.container}/invocations`, {
      method: "POST", body, headers: { "content-type": req.headers["content-type"] } });
    const text = await answer.text();
    ++stats.forwarded;
    if (answer.status !== 200) {
      res.writeHead(424, { "content-type": "application/json",
                           "x-amzn-errortype": "ModelError:http://internal.amazon.com/coral/com.amazon.sagemaker/" });
      return res.end(JSON.stringify({
        ErrorCode: "CLIENT_ERROR_FROM_MODEL", OriginalStatusCode: answer.status, OriginalMessage: text,
        Message: `Received client error (${answer.status}) from primary with message "${text}".`,
        LogStreamArn: "arn:aws:logs:us-east-1:123456789012:log-group:/aws/sagemaker/Endpoints/x" }));
    }
    res.writeHead(200, { "content-type": "application/json",
                         "x-amzn-invoked-production-variant": endpoint.variant || "AllTraffic" });
    res.end(text);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () =>
    resolve({ url: `http://127.0.0.1:${server.address().port}`, stats,
              stop: () => new Promise((r) => server.close(r)) })));
}

// Null when the request is signed as the AWS SDK signs it; else SageMaker's error for it.
async function verify(req, body, options) {
  const invalid = (message) => ({ type: "InvalidSignatureException", message });
  const auth = req.headers.authorization || "";
  const m = auth.match(/^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/);
  if (!m) return { type: "MissingAuthenticationTokenException", message: "Missing Authentication Token" };
  const [, keyId, day, region, service, signedHeaders] = m;
  const key = options.keys[keyId];
  if (!key) return { type: "UnrecognizedClientException", message: "The security token included in the request is invalid." };
  const token = req.headers["x-amz-security-token"];
  if ((key.token || undefined) !== token) {
    if (key.expiredToken && token === key.expiredToken)
      return { type: "ExpiredTokenException", message: "The security token included in the request is expired" };
    return { type: "UnrecognizedClientException", message: "The security token included in the request is invalid." };
  }
  if (region !== options.region || service !== "sagemaker")
    return invalid(`Credential should be scoped to a valid region and to service sagemaker, not ${region}/${service}.`);
  const stamp = req.headers["x-amz-date"] || "";
  const date = new Date(stamp.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, "$1-$2-$3T$4:$5:$6Z"));
  if (isNaN(date) || stamp.slice(0, 8) !== day) return invalid("Bad X-Amz-Date");
  if (Math.abs(Date.now() - date) > 5 * 60 * 1000)
    return invalid(`Signature expired: ${stamp} is now earlier than ${new Date(Date.now() - 300000).toISOString()}`);
  if (req.headers["x-amz-content-sha256"] !== createHash("sha256").update(body).digest("hex"))
    return invalid("The provided x-amz-content-sha256 header does not match what was computed.");
  const names = signedHeaders.split(";");
  for (const required of ["host", "x-amz-date", "x-amz-content-sha256"])
    if (!names.includes(required)) return invalid(`${required} must be signed`);
  const headers = {};
  for (const name of names)
    if (!["host", "x-amz-date", "x-amz-security-token"].includes(name)) headers[name] = req.headers[name];
  const expected = await smithySign({
    method: req.method, host: req.headers.host, path: req.url, headers, body,
    credentials: { accessKeyId: keyId, secretAccessKey: key.secret, sessionToken: token },
    region, date });
  if (expected.authorization !== auth) {
    return invalid("The request signature we calculated does not match the signature you provided. " +
                   "Check your AWS Secret Access Key and signing method.");
  }
  return null;
}
