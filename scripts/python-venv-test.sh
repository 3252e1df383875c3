#!/usr/bin/env bash
# The Python tests against an installed copy of the package, as a user has it: a fresh
# virtual environment on PYTHON (Debian's python3; --system-site-packages for its numpy,
# pandas and pytest), `pip install --no-build-isolation --no-index SOURCE_DIR` taking the
# modules of the already-built tree BUILD_DIR (setup.py: RLTRADE_CMAKE_BUILD_DIR), then
# pytest from outside the source tree, so that `import rltrade` can only find the copy
# installed in the environment. Run by CTest (python_tests).
#   python-venv-test.sh PYTHON BUILD_DIR SOURCE_DIR [pytest args...]
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: python-venv-test.sh PYTHON BUILD_DIR SOURCE_DIR [pytest args...]" >&2
  exit 2
fi
py=$1 build=$(cd "$2" && pwd) src=$(cd "$3" && pwd)
shift 3
venv=$build/python-venv
rm -rf "$venv"
"$py" -m venv --system-site-packages "$venv"
RLTRADE_CMAKE_BUILD_DIR=$build "$venv/bin/python" -m pip install --quiet --no-build-isolation \
  --no-index --disable-pip-version-check --root-user-action=ignore "$src"
cd "$venv"
export RLTRADE_EXPECT_INSTALLED=$venv
"$venv/bin/python" - "$venv" <<'PY'
import pathlib, sys
import rltrade
where = pathlib.Path(rltrade.__file__).resolve()
venv = pathlib.Path(sys.argv[1]).resolve()
if venv not in where.parents:
    sys.exit(f"python-venv-test: rltrade was imported from {where}, not from the environment {venv}")
PY
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider "$src/python/tests" "$@"
