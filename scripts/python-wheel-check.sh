#!/usr/bin/env bash
# The wheel as it is shipped: `python3 -m build --no-isolation --wheel` from SOURCE_DIR
# (setup.py's own CMake build, build/wheel-<tag>/, without -march=native or LibTorch),
# then installed into a fresh virtual environment and imported from there, its `rltrade`
# command run. Checks that no compile command of that build targets the build machine's
# CPU, that the loop kernels are chosen at load time (the CPU's level, not the baseline, on
# a CPU with AVX2 and FMA) and that neither the modules nor the binary need LibTorch. A full build of the
# libraries (minutes): CTest label `slow` (python_wheel).
#   python-wheel-check.sh PYTHON SOURCE_DIR WORK_DIR
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: python-wheel-check.sh PYTHON SOURCE_DIR WORK_DIR" >&2
  exit 2
fi
py=$1 src=$(cd "$2" && pwd) work=$3
rm -rf "$work" && mkdir -p "$work"
work=$(cd "$work" && pwd)
# -P: the source tree's build/ directory would shadow the `build` module
(cd "$src" && "$py" -P -m build --no-isolation --wheel --outdir "$work/dist")
wheel=$(ls "$work"/dist/rltrade-*.whl)
tag=$("$py" -c 'import sys; print(f"cp{sys.version_info.major}{sys.version_info.minor}")')
commands="$src/build/wheel-$tag/compile_commands.json"
if grep -q -- "-march=native" "$commands"; then
  echo "python-wheel-check: $commands compiles for the build machine's CPU (-march=native)" >&2
  exit 1
fi
"$py" -m venv --system-site-packages "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --no-index --no-deps --disable-pip-version-check \
  --root-user-action=ignore "$wheel"
cd "$work"
"$work/venv/bin/python" - "$work/venv" <<'PY'
import pathlib, subprocess, sys
import rltrade
venv = pathlib.Path(sys.argv[1]).resolve()
where = pathlib.Path(rltrade.__file__).resolve()
assert venv in where.parents, f"imported from {where}"
for so in list(where.parent.glob("*.so")) + [where.parent / "bin" / "rltrade"]:
    deps = subprocess.run(["ldd", str(so)], capture_output=True, text=True).stdout
    assert "libtorch" not in deps and "libc10" not in deps, f"{so} needs LibTorch:\n{deps}"
env = rltrade.make_vec("intraday", 4, seed=0)
env.reset()
print("wheel ok:", rltrade.__version__, where)
PY
version=$("$work/venv/bin/rltrade" --version)
echo "$version"
# The loop kernels are chosen at load time (src/native/dispatch.h): a CPU with AVX2 and FMA
# must not run the baseline ones.
kernels=$(printf '%s\n' "$version" | sed -n 's/^Loop kernels: //p')
case "$kernels" in
  x86-64*"chosen at load time"*) ;;
  *) echo "python-wheel-check: the wheel's loop kernels are not dispatched: '$kernels'" >&2
     exit 1 ;;
esac
if grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && [ "${kernels%% *}" = x86-64 ]; then
  echo "python-wheel-check: this CPU has AVX2 and FMA but runs the baseline kernels" >&2
  exit 1
fi
