// The AWS SDK's own SigV4 signer (@smithy/signature-v4, what @aws-sdk/client-sagemaker-runtime
// signs with), shared by the goldens check and the SageMaker runtime stand-in.
import { SignatureV4 } from "@smithy/signature-v4";
import { Hash } from "@smithy/hash-node";

// Signs {method, host, path, headers, body} for SageMaker as InvokeEndpoint is signed; `headers`
// are the ones to sign besides what the signer adds (x-amz-date, x-amz-content-sha256,
// x-amz-security-token).
// `checksum: false` leaves x-amz-content-sha256 out, as the published test suite does.
export async function smithySign({ method, host, path, query = {}, headers, body, credentials,
                                   region, service = "sagemaker", date, checksum = true }) {
  const signer = new SignatureV4({ service, region, credentials, sha256: Hash.bind(null, "sha256"),
                                   applyChecksum: checksum });
  const [hostname, port] = host.split(":");
  const request = { method, protocol: "https:", hostname, port: port ? Number(port) : undefined,
                    path, query, headers: { host, ...headers }, body };
  const signed = await signer.sign(request, { signingDate: date });
  return signed.headers;
}
