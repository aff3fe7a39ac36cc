// Prints the base Deployment (deploy/kubernetes/base, rendered by render.mjs) as YAML for
// `podman kube play`, changed only where a test run needs it:
// - the image, named by the first argument (the image stage's own build);
// - replicas 1: kube play starts as many pods as the count says, and each publishes the
//   container port on the host.
// Everything else goes to Podman as written: user 10001, read-only root, dropped capabilities,
// seccomp, the probes (Podman makes them health checks), the CPU and memory limits (enforced),
// ONEPASS_THREADS from limits.cpu (Podman 4.3 resolves that resourceFieldRef), the emptyDir
// volumes, the PVC (a Podman volume of the claim's name) and the grace period.
//
//   node pod_for_podman.mjs IMAGE > pod.yaml
import path from "node:path";
import { fileURLToPath } from "node:url";
import yaml from "js-yaml";
import { renderOwn } from "./render.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const image = process.argv[2];
if (!image) throw new Error("usage: node pod_for_podman.mjs IMAGE");

const objects = renderOwn(path.resolve(here, "../kubernetes/base"));
const deployment = objects.find((o) => o.kind === "Deployment");
deployment.spec.replicas = 1;
for (const container of deployment.spec.template.spec.containers) container.image = image;
process.stdout.write(yaml.dump(deployment, { lineWidth: 100 }));
