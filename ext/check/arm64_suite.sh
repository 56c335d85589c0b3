#!/usr/bin/env bash
# Builds hrxarray and runs its test suite on arm64, in a Debian bookworm arm64
# chroot under qemu-user (binfmt_misc), on an x86_64 Debian host, as root.
# Not part of CI (about 30 minutes the first time: debootstrap, a 14-minute
# build under emulation, a 5-minute suite); tests/test_arm64_kernels.py is the
# quick check CI runs.
#
#   ext/check/arm64_suite.sh [setup|deps|build|test|umount|all]    (default: all)
#
# HRX_ARM64_DIR (default /var/tmp/hrxarray-arm64) holds the chroot and the logs;
# the source is a fresh clone of this checkout's HEAD (committed work only).
# TESTS selects what pytest runs (default: tests). OPENBLAS_CORETYPE defaults
# to NEOVERSEN1: under qemu's default "max" CPU, which advertises SME, NumPy's
# OpenBLAS picks its armv9sme kernel and raises a spurious "divide by zero"
# warning on every float32 matmul, which the suite's filterwarnings=error makes
# a failure (no hrxarray code involved).
set -euo pipefail
W=${HRX_ARM64_DIR:-/var/tmp/hrxarray-arm64}
R=$W/root
SRC=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
PHASE=${1:-all}
mkdir -p "$W"

in_chroot() {
  chroot "$R" /usr/bin/env -i HOME=/root PATH=/root/venv/bin:/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 \
    OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-NEOVERSEN1}" PIP_CERT=/etc/ssl/host-ca-bundle.crt \
    PIP_DISABLE_PIP_VERSION_CHECK=1 CMAKE_BUILD_PARALLEL_LEVEL=2 TESTS="${TESTS:-tests}" /bin/bash -c "$1"
}

mounts() {
  cp /etc/resolv.conf "$R/etc/resolv.conf"
  # The host's CA bundle, in case PyPI is reached through an intercepting proxy.
  cp /etc/ssl/certs/ca-certificates.crt "$R/etc/ssl/host-ca-bundle.crt"
  mountpoint -q "$R/proc" || mount -t proc proc "$R/proc"
  mountpoint -q "$R/sys" || mount --rbind /sys "$R/sys"
  mountpoint -q "$R/dev" || mount --rbind /dev "$R/dev"
}

umounts() {  # before deleting $R: /dev and /sys are recursive bind mounts of the host's
  for m in dev sys proc; do if mountpoint -q "$R/$m"; then umount -R "$R/$m"; fi; done
}

setup() {
  apt-get install -y -q debootstrap qemu-user-static binfmt-support
  [ -e /proc/sys/fs/binfmt_misc/register ] || mount binfmt_misc -t binfmt_misc /proc/sys/fs/binfmt_misc
  update-binfmts --enable qemu-aarch64 || true
  if [ ! -x "$R/usr/bin/python3" ]; then
    debootstrap --arch=arm64 --include=python3,python3-venv,python3-dev,g++,cmake,ninja-build,git,ca-certificates \
      bookworm "$R" http://deb.debian.org/debian
  fi
}

deps() {
  mounts
  rm -rf "$R/root/hrxarray"
  git clone -q "$SRC" "$R/root/hrxarray"
  git -C "$R/root/hrxarray" log -1 --oneline
  in_chroot 'set -e; [ -x /root/venv/bin/python ] || python3 -m venv /root/venv
    pip install -q numpy ml_dtypes nanobind scikit-build-core pytest hypothesis'
}

build() {
  mounts
  in_chroot 'set -e; cd /root/hrxarray; rm -rf build; time pip install -q --no-build-isolation .'
}

run_tests() {
  mounts
  # `pytest` from the source root puts only tests/ on sys.path, so hrxarray is
  # the installed package (with its compiled module), not the source folder.
  in_chroot 'cd /root/hrxarray && (cd / && python -c "import hrxarray._core, platform; print(platform.machine())") &&
    pytest -p no:cacheprovider -q $TESTS'
}

case $PHASE in
  setup) setup ;;
  deps) deps ;;
  build) build ;;
  test) run_tests ;;
  umount) umounts ;;
  all) setup; deps; build; rc=0; run_tests || rc=$?; umounts; exit $rc ;;
  *) echo "usage: $0 [setup|deps|build|test|umount|all]" >&2; exit 2 ;;
esac
