#!/usr/bin/env bash
# Installs everything onepass needs to build, test and benchmark, from Debian 12's packages only.
# Safe to run again: apt-get skips what is already installed.
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
# --build-only: what compiling onepass needs (the container image's build stage), nothing else.
# The full install below is this list plus the test, fuzz and benchmark tools, so the two
# cannot drift apart.
BUILD_PACKAGES="build-essential cmake ninja-build pkg-config ca-certificates ccache \
  libdnnl-dev ocl-icd-opencl-dev libsentencepiece-dev libutf8proc-dev libonig-dev \
  libboost-dev libcli11-dev libfmt-dev libspdlog-dev nlohmann-json3-dev libssl-dev \
  libgtest-dev libgmock-dev libbenchmark-dev"
# --image-test: what scripts/image-test.sh needs on the host (Podman with runc, a debootstrap
# base image, QEMU to run the image on an emulated CPU without AVX-512, catatonit for the pod
# that `podman kube play` starts, Debian's grpcio to call the pod's gRPC port).
IMAGE_TEST_PACKAGES="podman runc catatonit uidmap slirp4netns fuse-overlayfs debootstrap curl python3 python3-grpcio qemu-user-static"
if [ "${1:-}" = "--image-test" ]; then
  $SUDO apt-get update -qq
  # shellcheck disable=SC2086
  $SUDO apt-get install -y -qq --no-install-recommends $IMAGE_TEST_PACKAGES >/dev/null
  echo "image test dependencies installed"
  exit 0
fi
if [ "${1:-}" = "--build-only" ]; then
  $SUDO apt-get update -qq
  # shellcheck disable=SC2086
  $SUDO apt-get install -y -qq --no-install-recommends $BUILD_PACKAGES >/dev/null
  echo "onepass build dependencies installed"
  exit 0
fi
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $BUILD_PACKAGES \
  git curl clang libclang-rt-14-dev clang-format openssl python3 python3-numpy \
  protobuf-compiler python3-grpcio python3-protobuf wrk >/dev/null
# Node.js runs the ONNX Runtime and tokenizers oracles; some images already ship their own build.
if ! command -v npm >/dev/null 2>&1; then
  $SUDO apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
# --fixtures: what tools/fixtures/generate.py and bench/perf/make_shaped.py need to run transformers
# and export ONNX (not the tests).
if [ "${1:-}" = "--fixtures" ]; then
  $SUDO apt-get install -y -qq --no-install-recommends \
    python3-torch python3-sentencepiece python3-numpy python3-tqdm python3-regex \
    python3-packaging python3-filelock python3-yaml python3-requests python3-onnx >/dev/null
fi
echo "onepass dependencies installed"
