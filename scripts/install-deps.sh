#!/usr/bin/env bash
# Installs the Debian 12 packages rltrade needs. Idempotent: packages already present
# are skipped, and `apt-get update` runs only when something is missing.
#   install-deps.sh          everything `make test` needs (CI)
#   install-deps.sh --demo   the core packages only (no LibTorch, tests or Python): what a
#                            -DRLT_WITH_TORCH=OFF -DRLT_BUILD_TESTS=OFF build needs
#   install-deps.sh --fuzz   everything, plus clang and the sanitizer runtimes
# Run as root (or with sudo available).
set -euo pipefail

# The toolchain and the core libraries: what a build without LibTorch, tests, benchmarks
# and the Python module needs.
DEMO_PACKAGES=(
  build-essential cmake ccache pkg-config
  libfmt-dev libspdlog-dev nlohmann-json3-dev libtomlplusplus-dev libcli11-dev tzdata
  # the native learner calls cblas_sgemm: cblas.h and libblas.so, OpenBLAS behind them
  libblas-dev libopenblas0-pthread
  # .npz archives (deflated members, CRC-32) and the retrieval miner
  zlib1g-dev libfaiss-dev
)

# Everything else `make test` needs.
TEST_PACKAGES=(
  git clang-format
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  # the optional LibTorch backend and the tests' oracle (CPU)
  libtorch-dev
  # Python bindings and distributed runs
  pybind11-dev python3-dev python3-numpy python3-pytest python3-pandas libopenmpi-dev openmpi-bin
  # the package installed as users install it: pip into a virtual environment
  # (scripts/python-venv-test.sh), and `python3 -m build --no-isolation --wheel`
  python3-venv python3-pip python3-setuptools python3-wheel python3-build
  # the report test renders report.html headless (eval/report_test.cc)
  chromium
)

PACKAGES=("${DEMO_PACKAGES[@]}")
case "${1:-}" in
  --demo) ;;
  --fuzz|"") PACKAGES+=("${TEST_PACKAGES[@]}") ;;
  *) echo "install-deps: unknown option '$1' (expected --demo, --fuzz or nothing)" >&2; exit 2 ;;
esac

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
