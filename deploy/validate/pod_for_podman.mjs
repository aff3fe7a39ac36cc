// Prints the base Deployment (deploy/kubernetes/base, rendered by render.mjs) as YAML for
// `podman kube play`, changed only where a test run needs it:
// - the image, named by the first argument (the image stage's own build);
// - replicas 1: kube play starts as many pods as the count says;
// - each container port's hostIP 127.0.0.1 and a hostPort: the second argument for `http`, the
//   third for `grpc`: Podman 4.3 publishes a container port without a hostPort on 0.0.0.0 at
//   the same number (8080), which fails when anything else on the host holds it, and exposes
//   the test server.
// Everything else goes to Podman as written: user 10001, read-only root, dropped capabilities,
// seccomp, the probes (Podman makes them health checks), the CPU and memory limits (enforced),
// ONEPASS_THREADS from limits.cpu (Podman 4.3 resolves that resourceFieldRef), the emptyDir
// volumes, the PVC (a Podman volume of the claim's name) and the grace period.
//
//   node pod_for_podman.mjs IMAGE HTTP_HOST_PORT GRPC_HOST_PORT > pod.yaml
import path from "node:path";
import { fileURLToPath } from "node:url";
import yaml from "js-yaml";
import { renderOwn } from "./render.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const [image, httpPort, grpcPort] = process.argv.slice(2);
if (!image || !Number(httpPort) || !Number(grpcPort))
  throw new Error("usage: node pod_for_podman.mjs IMAGE HTTP_HOST_PORT GRPC_HOST_PORT");
const hostPorts = { http: Number(httpPort), grpc: Number(grpcPort) };

const objects = renderOwn(path.resolve(here, "../kubernetes/base"));
const deployment = objects.find((o) => o.kind === "Deployment");
deployment.spec.replicas = 1;
for (const container of deployment.spec.template.spec.containers) {
  container.image = image;
  for (const port of container.ports || []) {
    if (!hostPorts[port.name]) throw new Error(`no host port for container port ${port.name}`);
    Object.assign(port, { hostIP: "127.0.0.1", hostPort: hostPorts[port.name] });
  }
}
process.stdout.write(yaml.dump(deployment, { lineWidth: 100 }));
