#!/usr/bin/env python3
"""A small Hugging Face Hub on loopback for onepass's hub tests (Python 3 stdlib only).

Speaks the part of the Hub protocol huggingface_hub uses: GET /api/models/{repo}/revision/{rev},
HEAD/GET /{repo}/resolve/{rev}/{path} with X-Repo-Commit, ETag, X-Linked-Etag, X-Linked-Size,
LFS files answered with a 302 to a second server (the "CDN"), Range requests; and what npm
@huggingface/hub adds: GET /api/models/{repo}/tree/{rev} and POST /api/models/{repo}/paths-info/{rev}
(oid = git blob sha1, lfs.oid = sha256, as the Hub answers). Repos (built from
the fixture models folder given as argv[1]):
  acme/tiny-nli   v1 = bert-tiny-nli; main = the same + a changed config.json and PyTorch/TF
                  duplicates that must never be downloaded
  acme/renamed    307 (relative) to acme/tiny-nli
  acme/gated      401 GatedRepo unless "Authorization: Bearer secret-token"
  acme/corrupt    the CDN serves model.safetensors with one byte flipped
  acme/flaky      the CDN drops the connection half way through the first full GET
  acme/slow       the CDN sends model.safetensors slowly (for concurrent downloaders)
  acme/no-weights config.json only
  acme/bin-only   bert-tiny-nli with pytorch_model.bin instead of model.safetensors
  acme/bin-sharded xlmr-tiny-nli as two pytorch_model-*.bin shards and their index
  acme/st-legacy  bert-tiny-st-embed, its sentence_bert_config.json under an older name
  acme/gliner-tiny         gliner-tiny-markerv0 (gliner_config.json with encoder_config, no
                           config.json)
  acme/gliner-published    gliner-published/gliner-tiny-markerv0-noenc: no encoder_config, the
                           backbone named by model_name onepass-fixtures/deberta-v2-tiny, the
                           repo serving that folder's backbone/config.json
  acme/st-dense   bert-tiny-st-dense (Dense modules 2_Dense, 3_Dense) and, as stella's repos
                  ship them, another Dense folder (2_Dense_96) that modules.json does not name
                  (checkpoints from tests/data/torch_bin, beside the models folder)
Prints "HUB_PORT CDN_PORT" on stdout once both listen on 127.0.0.1. GET /_log on the hub
returns every request both servers saw as JSON. With "--tls CERT KEY" after the models folder,
both servers speak HTTPS with that certificate (and the CDN redirects use https://).
"""
import hashlib
import json
import os
import socket
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote

TOKEN = "secret-token"
LOG = []
LOG_LOCK = threading.Lock()
REPOS = {}   # repo -> {rev: (commit, {path: bytes})}
BLOBS = {}   # (repo, sha256) -> bytes
DROPPED = set()
LFS_SUFFIXES = (".safetensors", ".bin", ".h5", ".onnx", ".msgpack")


def commit_of(repo, rev):
    return hashlib.sha1(f"{repo}@{rev}".encode()).hexdigest()


def git_blob_sha(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def read_folder(folder):
    """Every file under `folder`, by its path relative to it ("1_Pooling/config.json")."""
    files = {}
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        for name in sorted(names):
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                files[os.path.relpath(path, folder)] = f.read()
    return files


def build(models):
    tiny = read_folder(os.path.join(models, "bert-tiny-nli"))
    main = dict(tiny)
    config = json.loads(tiny["config.json"])
    config["onepass_revision"] = "main"
    main["config.json"] = json.dumps(config, indent=2).encode()
    main["pytorch_model.bin"] = b"not needed: safetensors exist" * 100
    main["tf_model.h5"] = b"not needed either" * 100
    main["README.md"] = b"# tiny-nli\n"
    REPOS["acme/tiny-nli"] = {"v1": tiny, "main": main}
    REPOS["acme/gated"] = {"main": tiny}
    REPOS["acme/corrupt"] = {"main": tiny}
    REPOS["acme/flaky"] = {"main": tiny}
    REPOS["acme/slow"] = {"main": tiny}
    REPOS["acme/no-weights"] = {"main": {"config.json": tiny["config.json"]}}
    # A sentence-transformers repo as older releases saved it: the max_seq_length file named
    # after the model type.
    st = read_folder(os.path.join(models, "bert-tiny-st-embed"))
    st["sentence_distilbert_config.json"] = st.pop("sentence_bert_config.json")
    REPOS["acme/st-legacy"] = {"main": st}
    dense = read_folder(os.path.join(models, "bert-tiny-st-dense"))
    dense["2_Dense_96/config.json"] = dense["2_Dense/config.json"]
    dense["2_Dense_96/model.safetensors"] = dense["2_Dense/model.safetensors"] + b" "
    REPOS["acme/st-dense"] = {"main": dense}
    REPOS["acme/gliner-tiny"] = {"main": read_folder(os.path.join(models, "gliner-tiny-markerv0"))}
    published = read_folder(os.path.join(models, os.pardir, "gliner-published",
                                          "gliner-tiny-markerv0-noenc"))
    backbone = {"config.json": published.pop("backbone/config.json")}
    REPOS["acme/gliner-published"] = {"main": published}
    REPOS["onepass-fixtures/deberta-v2-tiny"] = {"main": backbone}
    torch_bin = os.path.join(models, os.pardir, os.pardir, "torch_bin")
    for repo, fixture in (("acme/bin-only", "bert-tiny-nli"), ("acme/bin-sharded", "xlmr-tiny-nli")):
        files = read_folder(os.path.join(models, fixture))
        del files["model.safetensors"]
        files.update(read_folder(os.path.join(torch_bin, fixture)))
        REPOS[repo] = {"main": files}
    for repo, revs in REPOS.items():
        for rev, files in list(revs.items()):
            revs[rev] = (commit_of(repo, rev), files)
            for path, data in files.items():
                if path.endswith(LFS_SUFFIXES):
                    BLOBS[(repo, hashlib.sha256(data).hexdigest())] = data


def entry(name, data, commit):
    """A file as the tree and paths-info APIs describe it."""
    out = {"type": "file", "path": name, "size": len(data), "oid": git_blob_sha(data),
           "lastCommit": {"id": commit, "title": "onepass test", "date": "2024-01-01T00:00:00.000Z"}}
    if name.endswith(LFS_SUFFIXES):
        out["lfs"] = {"oid": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": 134}
    return out


def find_revision(repo, rev):
    for name, (commit, files) in REPOS[repo].items():
        if rev in (name, commit):
            return commit, files
    return None, None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    cdn = False

    def log_message(self, *args):
        pass

    def record(self):
        if self.path == "/_log":
            return
        with LOG_LOCK:
            LOG.append({"server": "cdn" if self.cdn else "hub", "method": self.command,
                        "path": unquote(self.path), "range": self.headers.get("Range"),
                        "auth": self.headers.get("Authorization")})

    def answer(self, status, body=b"", headers=None, send_body=True):
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if send_body and self.command != "HEAD":
            self.wfile.write(body)

    def error(self, status, code):
        self.answer(status, json.dumps({"error": code}).encode(), {"X-Error-Code": code})

    def do_HEAD(self):
        self.do_GET()

    def do_POST(self):
        self.record()
        path = unquote(self.path.split("?")[0])
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        parts = path[len("/api/models/"):].split("/") if path.startswith("/api/models/") else []
        if len(parts) < 4 or parts[2] != "paths-info":
            return self.error(404, "EntryNotFound")
        repo = parts[0] + "/" + parts[1]
        if repo not in REPOS:
            return self.error(401, "RepoNotFound")
        commit, files = find_revision(repo, "/".join(parts[3:]))
        if commit is None:
            return self.error(404, "RevisionNotFound")
        wanted = json.loads(body or b"{}").get("paths", [])
        entries = [entry(name, files[name], commit) for name in wanted if name in files]
        self.answer(200, json.dumps(entries).encode(), {"Content-Type": "application/json"})

    def do_GET(self):
        self.record()
        if self.cdn:
            return self.serve_blob()
        path = unquote(self.path.split("?")[0])
        if path == "/_log":
            with LOG_LOCK:
                return self.answer(200, json.dumps(LOG).encode())
        api = path.startswith("/api/models/")
        rest = path[len("/api/models/"):] if api else path[1:]
        parts = rest.split("/")
        if len(parts) < 4:
            return self.error(404, "EntryNotFound")
        repo = parts[0] + "/" + parts[1]
        if repo == "acme/renamed":
            return self.answer(307, b"", {"Location": path.replace("acme/renamed", "acme/tiny-nli")})
        if repo not in REPOS:
            return self.error(401, "RepoNotFound")
        if repo == "acme/gated" and self.headers.get("Authorization") != "Bearer " + TOKEN:
            return self.error(401, "GatedRepo")
        if api and parts[2] == "tree":
            commit, files = find_revision(repo, "/".join(parts[3:]))
            if commit is None:
                return self.error(404, "RevisionNotFound")
            listing = [entry(name, data, commit) for name, data in sorted(files.items())]
            return self.answer(200, json.dumps(listing).encode(), {"Content-Type": "application/json"})
        if api:
            if parts[2] != "revision":
                return self.error(404, "EntryNotFound")
            commit, files = find_revision(repo, "/".join(parts[3:]))
            if commit is None:
                return self.error(404, "RevisionNotFound")
            body = {"id": repo, "sha": commit,
                    "siblings": [{"rfilename": name} for name in sorted(files)]}
            return self.answer(200, json.dumps(body).encode(), {"Content-Type": "application/json"})
        if parts[2] != "resolve":
            return self.error(404, "EntryNotFound")
        commit, files = find_revision(repo, parts[3])
        if commit is None:
            return self.error(404, "RevisionNotFound")
        name = "/".join(parts[4:])
        if name not in files:
            return self.error(404, "EntryNotFound")
        data = files[name]
        headers = {"X-Repo-Commit": commit}
        if name.endswith(LFS_SUFFIXES):
            sha = hashlib.sha256(data).hexdigest()
            headers.update({"X-Linked-Etag": '"%s"' % sha, "X-Linked-Size": str(len(data)),
                            "ETag": '"%s"' % git_blob_sha(data),
                            "Location": "%s://127.0.0.1:%d/%s/blobs/%s" % (SCHEME, CDN_PORT, repo, sha)})
            return self.answer(302, b"", headers)
        headers["ETag"] = '"%s"' % git_blob_sha(data)
        return self.answer_range(data, headers)

    def answer_range(self, data, headers):
        """200 with the whole file, or 206 for "Range: bytes=S-[E]" with Content-Range."""
        rng = self.headers.get("Range")
        if not (rng and rng.startswith("bytes=")):
            return self.answer(200, data, headers)
        first, _, last = rng[6:].partition("-")
        start = int(first)
        end = min(int(last), len(data) - 1) if last else len(data) - 1
        headers = dict(headers)
        headers["Content-Range"] = "bytes %d-%d/%d" % (start, end, len(data))
        return self.answer(206, data[start:end + 1], headers)

    def serve_blob(self):
        repo, _, sha = unquote(self.path)[1:].rpartition("/blobs/")
        if (repo, sha) not in BLOBS:
            return self.answer(404, b"no such blob")
        data = BLOBS[(repo, sha)]
        if repo == "acme/corrupt":
            data = data[:100] + bytes([data[100] ^ 1]) + data[101:]
        start, end = 0, len(data) - 1
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes="):
            first, _, last = rng[6:].partition("-")
            start = int(first)
            if last:
                end = min(int(last), end)
        body = data[start:end + 1]
        self.send_response(206 if rng else 200)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("ETag", '"%s"' % sha)  # as the storage host of LFS files answers
        if rng:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end, len(data)))
        self.end_headers()
        if self.command == "HEAD":
            return
        if repo == "acme/flaky" and start == 0 and sha not in DROPPED:
            DROPPED.add(sha)
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return
        if repo == "acme/slow":
            for i in range(0, len(body), 65536):
                self.wfile.write(body[i:i + 65536])
                self.wfile.flush()
                time.sleep(0.05)
            return
        self.wfile.write(body)


class CdnHandler(Handler):
    cdn = True


class TlsServer(ThreadingHTTPServer):
    """Handshakes in the handler's thread, so that a client refusing the certificate cannot
    block the accept loop."""
    context = None

    def get_request(self):
        sock, address = self.socket.accept()
        return self.context.wrap_socket(sock, server_side=True,
                                        do_handshake_on_connect=False), address

    def finish_request(self, request, client_address):
        try:
            request.do_handshake()
        except (ssl.SSLError, OSError):
            return
        super().finish_request(request, client_address)


def main():
    global CDN_PORT, SCHEME
    build(sys.argv[1])
    server_class = ThreadingHTTPServer
    if len(sys.argv) >= 5 and sys.argv[2] == "--tls":
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[3], sys.argv[4])
        TlsServer.context = context
        server_class = TlsServer
        SCHEME = "https"
    hub = server_class(("127.0.0.1", 0), Handler)
    cdn = server_class(("127.0.0.1", 0), CdnHandler)
    hub.daemon_threads = cdn.daemon_threads = True
    CDN_PORT = cdn.server_address[1]
    threading.Thread(target=cdn.serve_forever, daemon=True).start()
    print(hub.server_address[1], CDN_PORT, flush=True)
    hub.serve_forever()


CDN_PORT = 0
SCHEME = "http"
if __name__ == "__main__":
    main()
