#!/usr/bin/env bash
# The README's two commands on a fresh Debian 12 machine, by hand or from CI (.ci/run calls it).
# Bootstraps a minimal Debian 12 root (debootstrap --variant=minbase bookworm), clones the
# commit under test into it (the host checkout is never touched), and runs inside it with chroot
# exactly what a newcomer types: scripts/quickstart.sh, then the test command. Anything the
# install step forgets then fails here. Needs root (debootstrap, mount, chroot).
#
#   scripts/fresh-machine.sh [COMMIT]      # default: HEAD of this checkout
#
# ONEPASS_FRESH_ROOT=DIR  where to build the root (default: a new /var/tmp/onepass-fresh.XXXXXX)
# ONEPASS_KEEP_ROOT=1     keep the root afterwards (default: removed on success, kept on failure)
# ONEPASS_MIRROR=URL      the Debian mirror (default: http://deb.debian.org/debian)
# ONEPASS_CCACHE_DIR=DIR  a ccache directory on the host, mounted into the root so that the builds
#                         there reuse an earlier run's compiler outputs (packages are still
#                         installed from scratch); unset or empty: no cache, every file compiled
# ONEPASS_STAGE_LOG=FILE  append "NAME SECONDS" per stage (the table .ci/run prints)
# ONEPASS_NINJA_LOGS=DIR  copy each build's .ninja_log there (DIR/<preset>.ninja_log: every
#                         compile's start and end, where a build's time went)
# Each stage prints "stage NAME: N s" (the wall time) and the last line sums them up.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
commit=$(git -C "$repo" rev-parse --verify "${1:-HEAD}^{commit}")
mirror=${ONEPASS_MIRROR:-http://deb.debian.org/debian}
if [ "$(id -u)" -ne 0 ]; then
  echo "fresh-machine.sh needs root (debootstrap, mount, chroot)" >&2
  exit 2
fi
export DEBIAN_FRONTEND=noninteractive

summary=()
stage_start=0
stage() { # stage NAME: start timing NAME
  stage_name=$1
  stage_start=$(date +%s)
  echo "=== stage $stage_name ($(date -u +%H:%M:%S) UTC)"
}
stage_end() { # stage_end [--parts-logged]: the stage's time, into the log unless its parts are
  local s=$(($(date +%s) - stage_start))
  echo "=== stage $stage_name: $s s"
  summary+=("$stage_name=${s}s")
  if [ -n "${ONEPASS_STAGE_LOG:-}" ] && [ "${1:-}" != --parts-logged ]; then
    echo "$stage_name $s" >>"$ONEPASS_STAGE_LOG"
  fi
}

# Roots an earlier run left to delete in the background and did not finish.
for old_root in /var/tmp/onepass-fresh.*.trash; do
  [ -d "$old_root" ] || continue
  setsid rm -rf --one-file-system "$old_root" </dev/null >/dev/null 2>&1 &
done
root=${ONEPASS_FRESH_ROOT:-$(mktemp -d /var/tmp/onepass-fresh.XXXXXX)}
root_stage_log=/var/tmp/onepass-test-stages
mounts=()
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  # scripts/test.sh's own stages (release, asan, fuzz, format), timed inside the root.
  if [ -n "${ONEPASS_STAGE_LOG:-}" ] && [ -f "$root$root_stage_log" ]; then
    cat "$root$root_stage_log" >>"$ONEPASS_STAGE_LOG"
  fi
  if [ -n "${ONEPASS_NINJA_LOGS:-}" ]; then
    mkdir -p "$ONEPASS_NINJA_LOGS"
    local log
    for log in "$root"/onepass/build/*/.ninja_log; do
      [ -f "$log" ] && cp "$log" "$ONEPASS_NINJA_LOGS/$(basename "$(dirname "$log")").ninja_log"
    done
  fi
  # Unmount in reverse order; a lazy unmount if a process still holds one (never leave it).
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    umount "${mounts[i]}" 2>/dev/null || umount -l "${mounts[i]}" || true
  done
  if grep -q " $root/" /proc/mounts; then
    echo "fresh-machine.sh: mounts left under $root:" >&2
    grep " $root/" /proc/mounts >&2
    rc=1
  fi
  if [ "$rc" -eq 0 ] && [ "${ONEPASS_KEEP_ROOT:-0}" != 1 ]; then
    # Deleting a root with its three build trees took six minutes of CI's time; renamed, it is
    # deleted in the background (and by the next run if this one is cut short).
    mv "$root" "$root.trash"
    setsid rm -rf --one-file-system "$root.trash" </dev/null >/dev/null 2>&1 &
  else
    echo "fresh-machine.sh: root kept at $root"
  fi
  echo "fresh-machine.sh: ${summary[*]:-no stage finished} (exit $rc)"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

stage debootstrap
if ! command -v debootstrap >/dev/null 2>&1; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.debootstrap.log" 2>&1 ||
  { tail -50 "$root.debootstrap.log" >&2; exit 1; }
rm -f "$root.debootstrap.log"
# The security and updates suites, as a Debian 12 installation has them.
cat >"$root/etc/apt/sources.list" <<SOURCES
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
SOURCES
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
# dpkg without an fsync per file, as Debian's own container images set it: the root is thrown
# away after the run, and the install step unpacks some 700 packages.
echo force-unsafe-io >"$root/etc/dpkg/dpkg.cfg.d/onepass-unsafe-io"
# The name table every installed Debian 12 has (the installer and cloud images write it; a
# debootstrap root has none, and without it glibc cannot resolve "localhost").
cat >"$root/etc/hosts" <<HOSTS
127.0.0.1 localhost
::1 localhost ip6-localhost ip6-loopback
HOSTS
# The site's network trust, nothing else of the host: where this network reaches HTTPS registries
# (npm) through a TLS-inspecting gateway, the host trusts the gateway's CA through a certificate
# in /usr/local/share/ca-certificates, as every machine of the site would. The root gets the same
# files before Debian's ca-certificates package is installed, whose update-ca-certificates then
# adds them to /etc/ssl/certs/ca-certificates.crt; Node.js is pointed at that bundle below.
site_cas=0
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  mkdir -p "$root/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
  site_cas=1
fi
stage_end

# A clean clone of the commit under test: only what git tracks, nothing from the host's build.
git clone -q --no-hardlinks "$repo" "$root/onepass"
git -C "$root/onepass" checkout -q --detach "$commit"
echo "testing $(git -C "$root/onepass" log -1 --format='%h %s')"

mnt() { # mnt TARGET mount-args...: mount and remember it for cleanup
  local target=$root/$1
  shift
  mkdir -p "$target"
  mount "$@" "$target"
  mounts+=("$target")
}
mnt proc -t proc proc
mnt sys -t sysfs sysfs
mnt dev --bind /dev
mnt dev/pts -t devpts devpts -o newinstance,ptmxmode=0666
mnt dev/shm -t tmpfs shm -o mode=1777
mnt tmp -t tmpfs tmp -o mode=1777
# The compile cache lives outside the root (it holds compiler outputs only, keyed by the compiler,
# its flags and every input's contents, so a stale entry cannot be used).
ccache_env=()
if [ -n "${ONEPASS_CCACHE_DIR:-}" ]; then
  mkdir -p "$ONEPASS_CCACHE_DIR"
  mnt var/cache/onepass-ccache --bind "$ONEPASS_CCACHE_DIR"
  ccache_env=(CCACHE_DIR=/var/cache/onepass-ccache CCACHE_MAXSIZE=${ONEPASS_CCACHE_MAXSIZE:-8G})
fi

# Node.js keeps its own CA list; NODE_EXTRA_CA_CERTS adds the system bundle (with the site's CAs).
node_ca=()
[ "$site_cas" = 0 ] || node_ca=(NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt)
in_root() { # in_root COMMAND: runs bash -c COMMAND in the root, in the clone, as a CI user would
  chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 CI=true "${node_ca[@]}" \
    "${ccache_env[@]}" ONEPASS_STAGE_LOG=$root_stage_log \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    /bin/bash -c "cd /onepass && $1" </dev/null
}

# The README's first command. Its dependency step is timed alone (quickstart.sh runs it too;
# apt-get then finds everything installed), so the build is timed apart from the download.
stage deps
in_root 'scripts/install-deps.sh'
stage_end
stage quickstart
in_root 'scripts/quickstart.sh'
stage_end

# The README's second command; scripts/test.sh prints its own per-stage times.
stage tests
in_root 'scripts/install-deps.sh && scripts/test.sh'
stage_end --parts-logged # scripts/test.sh logged each of its stages
