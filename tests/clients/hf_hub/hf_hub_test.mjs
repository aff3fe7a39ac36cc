// The huggingface_hub cache, both ways, with npm @huggingface/hub (Hugging Face's own JS client):
//  1. its snapshotDownload and downloadFileToCacheDir, pointed at the loopback Hub
//     (tests/hub/hub_server.py) through hubUrl, fill caches that `onepass serve` then serves
//     with HF_HUB_OFFLINE=1 (the golden answers, not one request to the Hub);
//  2. its scanCacheDir reads a cache that `onepass download` filled and sees every file with
//     the right size and commit, the refs and no warnings.
// usage: node hf_hub_test.mjs ONEPASS_BINARY FIXTURE_MODELS_DIR PYTHON HUB_SERVER_PY
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, statSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { snapshotDownload, downloadFileToCacheDir, scanCacheDir } from "@huggingface/hub";
import { startServe, check } from "./serve.mjs";

const [binary, models, python, hubServer] = process.argv.slice(2);
const golden = JSON.parse(readFileSync(join(models, "bert-tiny-nli", "golden.json"), "utf8"));

function startHub() {
  return new Promise((resolve, reject) => {
    const child = spawn(python, [hubServer, models], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.on("exit", (code) => reject(new Error(`hub_server.py exited (${code})`)));
    child.stdout.on("data", (d) => {
      out += d;
      const m = out.match(/^(\d+) (\d+)\n/);
      if (m) resolve({ url: `http://127.0.0.1:${m[1]}`, stop: () => child.kill("SIGTERM") });
    });
  });
}

async function hubLog(hub) {
  return (await fetch(`${hub.url}/_log`)).json();
}

// Every plain-text golden case through /invocations: label, and raw logits within 1e-4.
async function expectGoldens(port, model) {
  let checked = 0;
  for (const c of golden.cases) {
    if (c.truncation || c.fast_input_ids || c.pair) continue;
    const r = await fetch(`http://127.0.0.1:${port}/invocations`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Amzn-SageMaker-Target-Model": model },
      body: JSON.stringify({
        inputs: c.text,
        parameters: { top_k: null, function_to_apply: "none" },
      }),
    });
    check(r.status === 200, `${c.id}: HTTP ${r.status}`);
    const answer = await r.json();
    check(answer[0].label === c.label, `${c.id}: label ${answer[0].label}, golden ${c.label}`);
    for (const entry of answer) {
      const id = Object.keys(golden.id2label).find((k) => golden.id2label[k] === entry.label);
      check(Math.abs(entry.score - c.logits[Number(id)]) <= 1e-4, `${c.id}: ${entry.label} score`);
    }
    ++checked;
  }
  check(checked >= 5, "at least 5 golden cases");
}

// `onepass serve --model nli=REF` on a cache, offline, the Hub endpoint unreachable.
async function serveOffline(cacheDir, reference) {
  const env = {
    ...process.env,
    HF_HUB_CACHE: cacheDir,
    HF_HUB_OFFLINE: "1",
    HF_ENDPOINT: "http://127.0.0.1:1",
  };
  const saved = process.env;
  process.env = env;  // startServe spawns with the process environment
  try {
    return await startServe(binary, ["--model", `nli=${reference}`]);
  } finally {
    process.env = saved;
  }
}

function filesUnder(dir) {
  const out = [];
  for (const name of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, name.name);
    if (name.isDirectory()) out.push(...filesUnder(path));
    else out.push(path);
  }
  return out;
}

const hub = await startHub();
const work = mkdtempSync(join(tmpdir(), "onepass_hf_hub_"));
try {
  const commit = (await (await fetch(`${hub.url}/api/models/acme/tiny-nli/revision/v1`)).json()).sha;

  // 1a. snapshotDownload at a tag, then onepass serves that tag offline.
  const cacheA = join(work, "a");
  const snapshot = await snapshotDownload({
    repo: "acme/tiny-nli", revision: "v1", hubUrl: hub.url, cacheDir: cacheA,
  });
  check(snapshot.endsWith(join("models--acme--tiny-nli", "snapshots", commit)), snapshot);
  let before = (await hubLog(hub)).length;
  let server = await serveOffline(cacheA, "acme/tiny-nli@v1");
  await expectGoldens(server.port, "nli");
  server.stop();
  check((await hubLog(hub)).length === before, "offline onepass sent no request to the Hub");
  console.log("ok: snapshotDownload cache served offline by onepass");

  // 1b. downloadFileToCacheDir, file by file at the commit, then onepass serves the commit.
  const cacheB = join(work, "b");
  for (const file of ["config.json", "model.safetensors", "tokenizer.json",
                      "tokenizer_config.json", "special_tokens_map.json", "vocab.txt"]) {
    await downloadFileToCacheDir({
      repo: "acme/tiny-nli", path: file, revision: commit, hubUrl: hub.url, cacheDir: cacheB,
    });
  }
  before = (await hubLog(hub)).length;
  server = await serveOffline(cacheB, `acme/tiny-nli@${commit}`);
  await expectGoldens(server.port, "nli");
  server.stop();
  check((await hubLog(hub)).length === before, "offline onepass sent no request to the Hub");
  console.log("ok: downloadFileToCacheDir cache served offline by onepass");

  // 2. onepass fills a cache; scanCacheDir sees every file, its size and the commit.
  const cacheC = join(work, "c");
  const printed = execFileSync(binary, ["download", "acme/tiny-nli@v1"], {
    env: { ...process.env, HF_HUB_CACHE: cacheC, HF_ENDPOINT: hub.url,
           HF_HUB_DISABLE_PROGRESS_BARS: "1" },
  }).toString().trim();
  const written = filesUnder(printed).map((f) => relative(printed, f)).sort();
  check(written.includes("model.safetensors") && written.includes("config.json"),
        `onepass wrote ${written}`);
  const info = await scanCacheDir(cacheC);
  check(info.warnings.length === 0, `scanCacheDir warnings: ${info.warnings.map(String)}`);
  check(info.repos.length === 1, `${info.repos.length} repos`);
  const repo = info.repos[0];
  check(repo.id.name === "acme/tiny-nli" && repo.id.type === "model", JSON.stringify(repo.id));
  check(repo.revisions.length === 1, `${repo.revisions.length} revisions`);
  const revision = repo.revisions[0];
  check(revision.commitOid === commit, `commit ${revision.commitOid}, Hub says ${commit}`);
  check(revision.refs.includes("v1"), `refs ${revision.refs}`);
  const seen = revision.files.map((f) => relative(revision.path, f.path)).sort();
  check(JSON.stringify(seen) === JSON.stringify(written), `scanned ${seen}, onepass wrote ${written}`);
  for (const f of revision.files) {
    const name = relative(revision.path, f.path);
    const expected = statSync(join(models, "bert-tiny-nli", name)).size;
    check(f.blob.size === expected, `${name}: ${f.blob.size} bytes, fixture ${expected}`);
  }
  check(repo.filesCount === written.length, `filesCount ${repo.filesCount}`);
  console.log(`ok: scanCacheDir sees onepass's ${written.length} files at ${commit}`);
} finally {
  hub.stop();
  rmSync(work, { recursive: true, force: true });
}
