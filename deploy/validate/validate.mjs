// Renders every kustomization under deploy/kubernetes and validates each rendered object
// offline: Kubernetes kinds with kubernetes-models (the OpenAPI schemas of Kubernetes), the
// ServiceMonitor with @kubernetes-models/prometheus-operator, the Knative Service with
// @kubernetes-models/knative, KEDA's ScaledObject with @kubernetes-models/keda, and KServe's
// kinds and KEDA's HTTPScaledObject (no npm package models it) against the openAPIV3Schema of
// their CRDs (kserve-schema.json from kserve_schema.py, keda-http-schema.json from
// crd_schema.py) with the small structural checker below: types, required fields, enums, and
// no field the schema does not declare (what the API server prunes or, with strict field
// validation, refuses).
//
// Rendering: `kubectl kustomize` when kubectl is installed, and always render.mjs (the few
// kustomize features these kustomizations use). Both renderings are validated when both
// exist, and must agree.
//
//   node deploy/validate/validate.mjs      (after npm ci in deploy/validate)
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import yaml from "js-yaml";
import { renderOwn } from "./render.mjs";
import { Deployment } from "kubernetes-models/apps/v1";
import { HorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { Service } from "kubernetes-models/v1";
import { ServiceMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1";
import { Service as KnativeService } from "@kubernetes-models/knative/serving.knative.dev/v1";
import { ScaledObject } from "@kubernetes-models/keda/keda.sh/v1alpha1";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../kubernetes");
const readJson = (name) => JSON.parse(fs.readFileSync(path.join(here, name), "utf8"));
const crdSchemas = { ...readJson("kserve-schema.json"), ...readJson("keda-http-schema.json") };

const models = {
  "apps/v1/Deployment": Deployment,
  "v1/Service": Service,
  "autoscaling/v2/HorizontalPodAutoscaler": HorizontalPodAutoscaler,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
  "monitoring.coreos.com/v1/ServiceMonitor": ServiceMonitor,
  "serving.knative.dev/v1/Service": KnativeService,
  "keda.sh/v1alpha1/ScaledObject": ScaledObject,
};

// Knative reads its autoscaling settings from annotations, which no schema checks: a misspelt
// key is silently ignored (and a pod kept forever, or never scaled). Every autoscaling.knative.dev
// key must be one Knative knows, and the scale-to-zero ones must say what we mean.
const knativeAutoscaling = new Set(["class", "metric", "target", "target-utilization-percentage",
  "target-burst-capacity", "min-scale", "max-scale", "initial-scale", "activation-scale",
  "scale-down-delay", "scale-to-zero-pod-retention-period", "window", "panic-window-percentage",
  "panic-threshold-percentage", "metric-aggregation-algorithm"]);
function checkKnativeAnnotations(name, annotations) {
  for (const key of Object.keys(annotations || {})) {
    const [prefix, setting] = key.split("/");
    if (prefix === "autoscaling.knative.dev" && !knativeAutoscaling.has(setting))
      throw new Error(`${name}: unknown Knative annotation ${key}`);
  }
}

// --- rendering with kubectl, when installed -----------------------------------------------
function renderKubectl(dir) {
  try {
    const out = execFileSync("kubectl", ["kustomize", dir], { encoding: "utf8", stdio: "pipe" });
    return yaml.loadAll(out).filter(Boolean);
  } catch (err) {
    if (err.code === "ENOENT") return null;
    throw new Error(`kubectl kustomize ${dir}: ${err.stderr || err.message}`);
  }
}

// --- the structural checker for KServe's CRD schemas ---------------------------------------
function typeOf(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (Number.isInteger(value)) return "integer";
  return typeof value;
}

function check(schema, value, where, errors) {
  if (schema["x-kubernetes-preserve-unknown-fields"] && !schema.properties) return;
  if (schema["x-kubernetes-int-or-string"]) {
    if (!["integer", "string"].includes(typeOf(value))) errors.push(`${where}: int or string`);
    return;
  }
  const want = schema.type;
  const got = typeOf(value);
  if (want && !(want === got || (want === "number" && got === "integer"))) {
    errors.push(`${where}: ${got}, schema says ${want}`);
    return;
  }
  if (schema.enum && !schema.enum.includes(value))
    errors.push(`${where}: '${value}' not one of ${schema.enum.join(", ")}`);
  if (got === "object") {
    for (const field of schema.required || [])
      if (!(field in value)) errors.push(`${where}: required field '${field}' missing`);
    for (const [key, child] of Object.entries(value)) {
      if (schema.properties && key in schema.properties)
        check(schema.properties[key], child, `${where}.${key}`, errors);
      else if (schema.additionalProperties && typeof schema.additionalProperties === "object")
        check(schema.additionalProperties, child, `${where}.${key}`, errors);
      else if (!schema["x-kubernetes-preserve-unknown-fields"])
        errors.push(`${where}.${key}: not in the schema`);
    }
  }
  if (got === "array" && schema.items)
    value.forEach((item, i) => check(schema.items, item, `${where}[${i}]`, errors));
}

function validate(obj) {
  const id = `${obj.apiVersion}/${obj.kind}`;
  const name = `${obj.kind}/${obj.metadata && obj.metadata.name}`;
  checkKnativeAnnotations(name, obj.metadata && obj.metadata.annotations);
  if (obj.kind === "Service" && obj.spec && obj.spec.template)
    checkKnativeAnnotations(name, obj.spec.template.metadata && obj.spec.template.metadata.annotations);
  if (models[id]) {
    new models[id](obj).validate();  // throws with the schema error
    return name;
  }
  const schema = crdSchemas[id];
  if (!schema) throw new Error(`${name}: no schema for ${id}`);
  const errors = [];
  // metadata is ObjectMeta, checked by the API server itself; the CRD schema leaves it open.
  const { metadata, ...rest } = obj;
  if (!metadata || !metadata.name) errors.push("metadata.name missing");
  check({ ...schema, properties: { ...schema.properties,
                             metadata: { type: "object", "x-kubernetes-preserve-unknown-fields": true } } },
        { ...rest, metadata }, "", errors);
  if (errors.length) throw new Error(`${name} against its CRD:\n  ${errors.join("\n  ")}`);
  return name;
}

// --- every kustomization --------------------------------------------------------------------
function kustomizations(dir) {
  const out = [];
  if (fs.existsSync(path.join(dir, "kustomization.yaml"))) out.push(dir);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }))
    if (entry.isDirectory()) out.push(...kustomizations(path.join(dir, entry.name)));
  return out;
}

const sortKey = (o) => `${o.kind}/${o.metadata.name}`;
const canonical = (list) =>
  JSON.stringify(
    [...list].sort((a, b) => sortKey(a).localeCompare(sortKey(b))),
    (key, value) =>
      value && typeof value === "object" && !Array.isArray(value)
        ? Object.fromEntries(Object.keys(value).sort().map((k) => [k, value[k]]))
        : value,
  );

let failed = false;
let total = 0;
for (const dir of kustomizations(root)) {
  const label = path.relative(root, dir);
  try {
    const own = renderOwn(dir);
    const kubectl = renderKubectl(dir);
    if (kubectl && canonical(kubectl) !== canonical(own))
      throw new Error("kubectl kustomize and this script's rendering differ");
    const names = own.map(validate);
    total += names.length;
    console.log(`${label}: ${names.length} objects valid (${kubectl ? "kubectl and own rendering" : "own rendering"}): ${names.join(", ")}`);
  } catch (err) {
    failed = true;
    console.error(`FAIL ${label}: ${err.message}`);
  }
}
// The checkers must refuse a broken object, or passing means nothing.
const broken = [
  { apiVersion: "serving.kserve.io/v1beta1", kind: "InferenceService", metadata: { name: "x" },
    spec: { predictor: { model: { modelFormat: { name: "huggingface" }, storgeUri: "typo" } } } },
  { apiVersion: "serving.kserve.io/v1alpha1", kind: "ServingRuntime", metadata: { name: "x" },
    spec: { containers: [{ name: "c", image: "i", ports: [{ containerPort: "8080" }] }] } },
  { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "x" },
    spec: { selector: {}, template: { spec: { containers: [{ name: "c", ports: [{ containerPort: "8080" }] }] } } } },
  { apiVersion: "serving.knative.dev/v1", kind: "Service", metadata: { name: "x" },
    spec: { template: { spec: { containerConcurrency: "512", containers: [{ image: "i" }] } } } },
  { apiVersion: "serving.knative.dev/v1", kind: "Service", metadata: { name: "x" },
    spec: { template: { metadata: { annotations: { "autoscaling.knative.dev/minScale0": "0" } },
                        spec: { containers: [{ image: "i" }] } } } },
  { apiVersion: "keda.sh/v1alpha1", kind: "ScaledObject", metadata: { name: "x" },
    spec: { scaleTargetRef: { name: "d" }, minReplicaCount: "0", triggers: [] } },
  { apiVersion: "http.keda.sh/v1alpha1", kind: "HTTPScaledObject", metadata: { name: "x" },
    spec: { scaleTargetRef: { name: "d", port: 8080 }, replicas: { min: 0 } } },
];
for (const obj of broken) {
  let refused = false;
  try {
    validate(obj);
  } catch {
    refused = true;
  }
  if (!refused) {
    failed = true;
    console.error(`FAIL: the checker accepted a broken ${obj.kind}`);
  }
}
if (failed) process.exit(1);
console.log(`${total} rendered objects valid`);
