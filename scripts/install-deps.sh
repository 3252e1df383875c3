#!/usr/bin/env bash
# Installs every Debian 12 package rltrade needs. Idempotent: packages already present
# are skipped, and `apt-get update` runs only when something is missing.
# Run as root (or with sudo available). Used by `make demo`, `make test` and CI.
set -euo pipefail

PACKAGES=(
  # toolchain
  build-essential cmake ccache pkg-config git clang-format
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  # core libraries
  libfmt-dev libspdlog-dev nlohmann-json3-dev libtomlplusplus-dev libcli11-dev tzdata
  # learning and retrieval: LibTorch (CPU) needs OpenBLAS behind libblas.so.3, or matrix
  # work falls back to the reference BLAS (~10x slower)
  libtorch-dev libopenblas0-pthread libfaiss-dev
  # .npz archives (deflated members, CRC-32)
  zlib1g-dev
  # the native learner (src/native/) calls cblas_sgemm: cblas.h and libblas.so
  libblas-dev
  # Python bindings and distributed runs
  pybind11-dev python3-dev python3-numpy python3-pytest python3-pandas libopenmpi-dev openmpi-bin
  # the report test renders report.html headless (eval/report_test.cc)
  chromium
)

# `--fuzz`: also clang with libFuzzer and the sanitizer runtimes, and llvm-symbolizer for
# readable crash stacks (make fuzz, make fuzz-ci); the normal build does not need them.
if [ "${1:-}" = "--fuzz" ]; then
  PACKAGES+=(clang libclang-rt-14-dev llvm)
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-deps: missing packages (${missing[*]}); run this script as root" >&2
    exit 1
  fi
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-deps: done"
