#!/usr/bin/env bash
# Builds the container image from a debootstrap base and runs it the way SageMaker and
# Kubernetes do:
#   1. `run -p 8080 IMAGE serve` with a fixture model mounted read-only at /opt/ml/model:
#      /ping (each within 2 s), /invocations against the fixture's golden.json, the process
#      user is not root, every log line is JSON, a request line carries the echoed
#      X-Request-Id, SIGTERM exits 0 within 30 s after logging the drain;
#   2. the Kubernetes base Deployment as rendered, under `podman kube play`: user 10001, no
#      capabilities, read-only root, emptyDir volumes, ONEPASS_THREADS from the CPU limit, the
#      probes' routes, the goldens, a drain within the grace period (this and the Hub runs
#      cover the read-only root, which had a run of its own before);
#   3. the same as 1 with SAGEMAKER_MULTI_MODEL=true (models loaded through POST /models from
#      /opt/ml/models);
#   4. the single-model run again on an emulated CPU without AVX-512 (qemu-x86_64 -cpu
#      Haswell): the x86-64-v3 image must run there;
#   5. HF_MODEL_ID (+ HF_MODEL_REVISION, HF_TASK) from a Hub on the host (tests/hub/hub_server.py
#      on 127.0.0.1, reached through host networking), read-only root filesystem, the Hub
#      cache on a writable volume; then again with HF_HUB_OFFLINE=1 and the Hub stopped,
#      served from that volume.
# Needs root (debootstrap, rootful Podman). Environment: BASE_ROOT=DIR reuses a Debian 12
# minbase root instead of debootstrapping one; IMAGE=NAME (default localhost/onepass:test);
# SKIP_BUILD=1 tests an image already built; SKIP_DEPS=1 skips the apt step;
# --prepare does only what waits on the network more than on the CPU (the host's packages, the
# deploy manifests' validation, the base image, the build stage's toolchain layer) and exits:
# .ci/run runs it beside the fresh root's stages, then this script with PREPARED=1;
# ONEPASS_CCACHE_DIR=DIR lends the build stage a host ccache directory (compiler outputs only);
# ONEPASS_STAGE_LOG=FILE appends "image.build SECONDS" and "image.test SECONDS" (.ci/run's table).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT_DIR=$(pwd)
IMAGE=${IMAGE:-localhost/onepass:test}
BASE_IMAGE=localhost/onepass-base:bookworm
export CONTAINERS_CONF="$ROOT_DIR/deploy/container/containers.conf"
FIXTURES="$ROOT_DIR/tests/data/fixtures/models"
CHECK="python3 $ROOT_DIR/scripts/image_check.py"

log_time() { [ -z "${ONEPASS_STAGE_LOG:-}" ] || echo "$1 $2" >>"$ONEPASS_STAGE_LOG"; }
build_start=$(date +%s)
# PREPARED=1: an earlier --prepare did these.
if [ "${1:-}" = --prepare ] || [ "${PREPARED:-}" != 1 ]; then
  [ "${SKIP_DEPS:-}" = 1 ] || bash scripts/install-deps.sh --image-test
  bash scripts/deploy-validate.sh
fi

WORK=$(mktemp -d)
CONTAINERS=()
cleanup() {
  for c in "${CONTAINERS[@]}"; do podman rm -f "$c" >/dev/null 2>&1 || true; done
  if [ -n "${HUB_PID:-}" ]; then kill "$HUB_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# CI lends the build stage its compile cache (the same options for every build, so that Podman's
# layer cache matches the prepared layer).
cache_args=()
if [ -n "${ONEPASS_CCACHE_DIR:-}" ]; then
  mkdir -p "$ONEPASS_CCACHE_DIR"
  cache_args=(--volume "$ONEPASS_CCACHE_DIR:/var/cache/onepass-ccache"
              --build-arg ONEPASS_CCACHE_DIR=/var/cache/onepass-ccache)
fi
base_and_toolchain() { # the base image once, then the build stage's dependency layer
  if ! podman image exists "$BASE_IMAGE"; then
    root=${BASE_ROOT:-}
    if [ -z "$root" ]; then
      root="$WORK/root"
      echo "== debootstrap bookworm minbase"
      debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >/dev/null
    fi
    tar -C "$root" -c . | podman import - "$BASE_IMAGE" >/dev/null
  fi
  # Podman keeps the layer, keyed by install-deps.sh's contents: the build below reuses it.
  podman build --network host --build-arg BASE_IMAGE="$BASE_IMAGE" "${cache_args[@]}" --target build-deps \
    -t localhost/onepass-build-deps:test -f Containerfile . >/dev/null
}
if [ "${1:-}" = --prepare ]; then
  base_and_toolchain
  log_time image.prepare "$(($(date +%s) - build_start)) beside"
  exit 0
fi

if [ "${SKIP_BUILD:-}" != 1 ]; then
  base_and_toolchain
  echo "== podman build (base $BASE_IMAGE)"
  start=$(date +%s)
  podman build --network host --build-arg BASE_IMAGE="$BASE_IMAGE" "${cache_args[@]}" \
    -t "$IMAGE" -f Containerfile .
  echo "image build: $(( $(date +%s) - start )) s"
fi
test_start=$(date +%s)
log_time image.build $((test_start - build_start))
trap 'log_time image.test $(($(date +%s) - test_start)); cleanup' EXIT

# start NAME ARGS...: runs the image detached on a loopback port; prints nothing.
start() {
  local name=$1
  shift
  podman rm -f "$name" >/dev/null 2>&1 || true
  podman run -d --name "$name" -p 127.0.0.1::8080 -e ONEPASS_LOG_FORMAT=json "$@" >/dev/null
  CONTAINERS+=("$name")
}
url_of() { echo "http://$(podman port "$1" 8080/tcp | head -1)"; }

# stop_and_check NAME: SIGTERM, exit 0 within 30 s, JSON logs with a drain.
stop_and_check() {
  local name=$1 t0 rc
  t0=$(date +%s)
  podman kill --signal TERM "$name" >/dev/null
  rc=$(timeout 35 podman wait "$name")
  local took=$(( $(date +%s) - t0 ))
  echo "$name: SIGTERM -> exit $rc in ${took} s"
  [ "$rc" = 0 ] || { echo "FAIL: exit status $rc"; podman logs "$name"; exit 1; }
  [ "$took" -le 30 ] || { echo "FAIL: drain took ${took} s"; exit 1; }
  podman logs "$name" > "$WORK/$name.log" 2>&1
  $CHECK logs "$WORK/$name.log" "$WORK/$name.ids"
}

check_user() {
  local pid uid
  pid=$(podman inspect --format '{{.State.Pid}}' "$1")
  uid=$(awk '/^Uid:/{print $2}' "/proc/$pid/status")
  echo "$1: process uid $uid"
  [ "$uid" != 0 ] || { echo "FAIL: runs as root"; exit 1; }
}

# check_kernel NAME [WANT]: the fp32 kernel the image chose at run time (its start-up line) is
# WANT, by default the AVX-512 one exactly where this CPU has the x86-64-v4 set, so the goldens
# below ran on it.
check_kernel() {
  local want=${2:-stream_gemm} got flag
  if [ -z "${2:-}" ]; then
    for flag in avx512f avx512bw avx512dq avx512vl avx512cd; do
      grep -qw "$flag" /proc/cpuinfo || want=packed_gemm
    done
  fi
  got=$(podman logs "$1" 2>&1 | grep -o '"fp32_kernel":"[a-z_]*"' | head -1 | cut -d'"' -f4)
  echo "$1: fp32 kernel $got (this CPU: $want)"
  [ "$got" = "$want" ] || { echo "FAIL: fp32 kernel $got, expected $want"; exit 1; }
}

MODEL=bert-tiny-nli
echo "== single model at /opt/ml/model"
start single -v "$FIXTURES/$MODEL:/opt/ml/model:ro" "$IMAGE" serve
URL=$(url_of single)
$CHECK ping "$URL"
check_user single
check_kernel single
$CHECK golden "$URL" "$FIXTURES/$MODEL" /invocations "$WORK/single.ids"
stop_and_check single

echo "== the Kubernetes base Deployment under podman kube play"
# deploy/kubernetes/base's Deployment as rendered (deploy/validate/pod_for_podman.mjs changes
# only the image, the replica count and the ports' host bindings), the fixture in a Podman
# volume named as its PVC. Checks what the spec asks for: the gRPC port answering, user 10001,
# no capabilities, a read-only root with the emptyDir volumes writable, ONEPASS_THREADS from
# the CPU limit, the probes' routes, the golden answers, and a drain within
# terminationGracePeriodSeconds. Podman runs no preStop hook, and its health
# checks from the probes need systemd (absent here: they log errors and never run), so the
# probe routes are called from outside.
kube_start=$(date +%s)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
kube_port=$(free_port)
kube_grpc_port=$(free_port)
node deploy/validate/pod_for_podman.mjs "$IMAGE" "$kube_port" "$kube_grpc_port" > "$WORK/pod.yaml"
claim=$(awk '/claimName:/{print $2; exit}' "$WORK/pod.yaml")
grace=$(awk '/terminationGracePeriodSeconds:/{print $2; exit}' "$WORK/pod.yaml")
threads=$(awk '/limits:/{l=1} l && /cpu:/{gsub(/[^0-9]/, "", $2); print $2; exit}' "$WORK/pod.yaml")
podman volume rm -f "$claim" >/dev/null 2>&1 || true
podman volume create "$claim" >/dev/null
cp -r "$FIXTURES/$MODEL" "$(podman volume inspect --format '{{.Mountpoint}}' "$claim")/model"
POD=
kube_cleanup() {
  [ -z "$POD" ] || podman pod rm -f "$POD" >/dev/null 2>&1 || true
  podman volume rm -f "$claim" >/dev/null 2>&1 || true
}
trap 'log_time image.test $(($(date +%s) - test_start)); kube_cleanup; cleanup' EXIT
# kube play prints "Pod:", the pod's id, "Container:", the container's id.
podman kube play "$WORK/pod.yaml" > "$WORK/play.out" 2> "$WORK/play.err" \
  || { cat "$WORK/play.err"; exit 1; }
POD=$(awk 'prev == "Pod:" {print; exit} {prev = $0}' "$WORK/play.out")
KUBE=$(awk 'prev == "Container:" {print; exit} {prev = $0}' "$WORK/play.out")
URL="http://127.0.0.1:$kube_port"
$CHECK ping "$URL"
$CHECK probes "$URL" "$WORK/pod.yaml"
# Debian's python3 by path: its python3-grpcio (install-deps.sh --image-test) is where PATH's
# python3 may not look.
/usr/bin/python3 "$ROOT_DIR/scripts/image_check.py" grpc "127.0.0.1:$kube_grpc_port" model
check_user "$KUBE"
pid=$(podman inspect --format '{{.State.Pid}}' "$KUBE")
[ "$(awk '/^CapEff:/{print $2}' "/proc/$pid/status")" = 0000000000000000 ] \
  || { echo "FAIL: capabilities left"; exit 1; }
podman exec "$KUBE" sh -c 'touch /tmp/w /var/cache/onepass/w && ! touch /w 2>/dev/null' \
  || { echo "FAIL: emptyDir volumes not writable, or the root is"; exit 1; }
# conmon writes the container's log after the fact: the start line may reach `podman logs` a
# moment after the probes answer (one run in several read it too early).
for _ in $(seq 50); do
  podman logs "$KUBE" 2>&1 | grep -q "\"threads\":$threads[,}]" && break
  sleep 0.1
done
podman logs "$KUBE" 2>&1 | grep -q "\"threads\":$threads[,}]" \
  || { echo "FAIL: not $threads threads"; podman logs "$KUBE" 2>&1 | head -3; exit 1; }
echo "pod: no capabilities, read-only root, emptyDirs writable, $threads threads (limits.cpu)"
$CHECK golden "$URL" "$FIXTURES/$MODEL" /invocations "$WORK/kube.ids"
t0=$(date +%s)
podman pod stop -t "$grace" "$POD" >/dev/null 2>> "$WORK/play.err"
took=$(( $(date +%s) - t0 ))
rc=$(podman inspect --format '{{.State.ExitCode}}' "$KUBE")
echo "pod: pod stop -> exit $rc in ${took} s (terminationGracePeriodSeconds $grace)"
[ "$rc" = 0 ] && [ "$took" -lt "$grace" ] || { echo "FAIL: no clean drain"; podman logs "$KUBE"; exit 1; }
podman logs "$KUBE" > "$WORK/kube.log" 2>&1
$CHECK logs "$WORK/kube.log" "$WORK/kube.ids"
kube_cleanup
echo "pod spec: $(( $(date +%s) - kube_start )) s"

echo "== SAGEMAKER_MULTI_MODEL=true"
start mme -e SAGEMAKER_MULTI_MODEL=true -v "$FIXTURES:/opt/ml/models:ro" "$IMAGE" serve
URL=$(url_of mme)
$CHECK ping "$URL"
check_user mme
$CHECK load "$URL" nli /opt/ml/models/$MODEL
$CHECK golden "$URL" "$FIXTURES/$MODEL" /models/nli/invoke "$WORK/mme.ids"
stop_and_check mme

echo "== on a CPU without AVX-512: qemu-x86_64 -cpu Haswell (x86-64-v3)"
# The image targets x86-64-v3 and compiles one kernel apart for AVX-512. Emulated as a Haswell
# (QEMU's TCG has no AVX-512 at all: any such instruction kills the process), the same image
# must choose packed_gemm and answer the goldens. GOMP_SPINCOUNT set: serve would otherwise
# execute itself again (apps/onepass/openmp_spin.h), natively. The features switched off are
# the system ones TCG cannot emulate (each would print a warning into the JSON log).
start haswell -e GOMP_SPINCOUNT=30000 -v "$(command -v qemu-x86_64-static):/usr/local/bin/qemu:ro" \
  -v "$FIXTURES/$MODEL:/opt/ml/model:ro" --entrypoint /usr/local/bin/qemu \
  "$IMAGE" -cpu Haswell,-pcid,-x2apic,-tsc-deadline,-hle,-invpcid,-rtm /usr/local/bin/onepass serve
URL=$(url_of haswell)
$CHECK ping "$URL"
check_kernel haswell packed_gemm
$CHECK golden "$URL" "$FIXTURES/$MODEL" /invocations "$WORK/haswell.ids"
stop_and_check haswell

echo "== HF_MODEL_ID from a Hub on the host, read-only root, cache on a volume"
python3 "$ROOT_DIR/tests/hub/hub_server.py" "$FIXTURES" > "$WORK/hub.ports" &
HUB_PID=$!
for _ in $(seq 100); do [ -s "$WORK/hub.ports" ] && break; sleep 0.1; done
read -r HUB_PORT _ < "$WORK/hub.ports"
# The container user (10001) writes the cache; the volume is a host folder it may write to.
mkdir -p "$WORK/hf-cache" && chmod 0777 "$WORK/hf-cache"
# Host networking: the Hub's LFS redirects name 127.0.0.1, which only the host's loopback
# answers. The server then binds a free host port of its own instead of a published 8080.
hub_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
hub_run() {
  local name=$1
  shift
  podman rm -f "$name" >/dev/null 2>&1 || true
  podman run -d --name "$name" --network host --read-only \
    -v "$WORK/hf-cache:/var/cache/onepass/huggingface" \
    -e ONEPASS_LOG_FORMAT=json -e ONEPASS_HOST=127.0.0.1 -e ONEPASS_PORT="$hub_port" \
    -e HF_MODEL_ID=acme/tiny-nli -e HF_MODEL_REVISION=v1 -e HF_TASK=text-classification \
    "$@" "$IMAGE" serve >/dev/null
  CONTAINERS+=("$name")
}
hub_run hub -e HF_ENDPOINT="http://127.0.0.1:$HUB_PORT"
URL="http://127.0.0.1:$hub_port"
$CHECK ping "$URL"
check_user hub
$CHECK golden "$URL" "$FIXTURES/$MODEL" /invocations "$WORK/hub.ids"
stop_and_check hub
ls "$WORK"/hf-cache/hub/models--acme--tiny-nli/snapshots/*/model.safetensors >/dev/null \
  || { echo "FAIL: no snapshot in the cache volume"; exit 1; }
kill "$HUB_PID"
wait "$HUB_PID" 2>/dev/null || true

echo "== HF_MODEL_ID with HF_HUB_OFFLINE=1, the Hub stopped: served from the cache volume"
hub_run hub-offline -e HF_ENDPOINT="http://127.0.0.1:1" -e HF_HUB_OFFLINE=1
$CHECK ping "$URL"
$CHECK golden "$URL" "$FIXTURES/$MODEL" /invocations "$WORK/hub-offline.ids"
stop_and_check hub-offline

echo "image tests passed ($IMAGE)"
