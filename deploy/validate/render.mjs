// The few kustomize features deploy/kubernetes uses, without kubectl: resources (files and
// folders), labels with includeSelectors, patches that delete an object. validate.mjs checks
// this rendering against `kubectl kustomize` where kubectl exists; pod_for_podman.mjs uses it
// to run the base Deployment under Podman.
import fs from "node:fs";
import path from "node:path";
import yaml from "js-yaml";

function addLabels(obj, pairs, includeSelectors) {
  obj.metadata.labels = { ...(obj.metadata.labels || {}), ...pairs };
  if (!includeSelectors) return;
  const spec = obj.spec || {};
  if (obj.kind === "Service") spec.selector = { ...(spec.selector || {}), ...pairs };
  if (spec.selector && spec.selector.matchLabels)
    spec.selector.matchLabels = { ...spec.selector.matchLabels, ...pairs };
  if (spec.template && spec.template.metadata)
    spec.template.metadata.labels = { ...(spec.template.metadata.labels || {}), ...pairs };
}

export function renderOwn(dir) {
  const k = yaml.load(fs.readFileSync(path.join(dir, "kustomization.yaml"), "utf8"));
  const known = new Set(["apiVersion", "kind", "resources", "labels", "patches"]);
  for (const key of Object.keys(k))
    if (!known.has(key)) throw new Error(`${dir}: kustomization field '${key}' not supported here`);
  let objects = [];
  for (const resource of k.resources || []) {
    const target = path.join(dir, resource);
    if (fs.statSync(target).isDirectory()) objects.push(...renderOwn(target));
    else objects.push(...yaml.loadAll(fs.readFileSync(target, "utf8")).filter(Boolean));
  }
  // patches: only `$patch: delete` of one object, named by apiVersion, kind and name.
  for (const patch of k.patches || []) {
    const p = yaml.load(fs.readFileSync(path.join(dir, patch.path), "utf8"));
    if (Object.keys(patch).length !== 1 || p.$patch !== "delete")
      throw new Error(`${dir}: only patches deleting an object are supported here`);
    const before = objects.length;
    objects = objects.filter((o) => !(o.apiVersion === p.apiVersion && o.kind === p.kind &&
                                      o.metadata.name === p.metadata.name));
    if (objects.length !== before - 1) throw new Error(`${dir}: ${patch.path} deletes nothing`);
  }
  for (const entry of k.labels || [])
    for (const obj of objects) addLabels(obj, entry.pairs, entry.includeSelectors);
  return objects;
}
