"""Builds the `rltrade` Python package with the project's CMake (see pyproject.toml).

The extension modules (rltrade._core, rltrade._train) and the command-line binary
(installed as rltrade/bin/rltrade, run by the `rltrade` entry point) come from one CMake
build:

- by default a build of its own under build/wheel-<python tag>/, configured for any
  x86-64 CPU (RLT_NATIVE=OFF: no -march=native; OpenBLAS, which does the heavy
  arithmetic, picks its kernels for the CPU at run time) and without LibTorch, MPI,
  tests or benchmarks;
- with RLTRADE_CMAKE_BUILD_DIR=DIR, an existing build tree configured with
  -DRLT_WITH_PYTHON=ON and built (e.g. `make build`'s): its modules and binary are
  packaged as they are, with that tree's flags (e.g. -march=native), and nothing is
  rebuilt. `make test` installs the package this way into a fresh virtual environment
  and tests the installed copy.
"""

import os
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent
TARGETS = ["rlt_python_core", "rlt_python_train", "rltrade"]
PORTABLE_FLAGS = [
    "-DCMAKE_BUILD_TYPE=Release",
    "-DRLT_NATIVE=OFF",
    "-DRLT_WITH_TORCH=OFF",
    "-DRLT_WITH_MPI=OFF",
    "-DRLT_BUILD_TESTS=OFF",
    "-DRLT_BUILD_BENCHMARKS=OFF",
    "-DRLT_WITH_PYTHON=ON",
]


def project_version():
    text = (ROOT / "CMakeLists.txt").read_text()
    match = re.search(r"project\(rltrade VERSION ([0-9.]+)", text)
    if not match:
        sys.exit("setup.py: CMakeLists.txt has no `project(rltrade VERSION x.y.z ...)` line")
    return match.group(1)


class CMakeBuild(build_ext):
    """Runs CMake, then copies its modules and binary into the package being built."""

    def run(self):
        build_dir, own = self._build_dir()
        if own:
            self._run(["cmake", "-S", str(ROOT), "-B", str(build_dir), *PORTABLE_FLAGS,
                       f"-DPython3_EXECUTABLE={sys.executable}"])
            jobs = os.environ.get("RLTRADE_BUILD_JOBS", str(os.cpu_count() or 1))
            self._run(["cmake", "--build", str(build_dir), "-j", jobs, "--target", *TARGETS])
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        for ext in self.extensions:
            name = ext.name.split(".")[-1]
            built = build_dir / "python" / "rltrade" / f"{name}{suffix}"
            if not built.exists():
                found = sorted(p.name for p in (build_dir / "python" / "rltrade").glob(name + ".*so"))
                sys.exit(f"setup.py: {built} was not built for this interpreter ({sys.executable}, "
                         f"extension suffix {suffix}); the build tree has {found or 'none'}. "
                         "Use a build configured with this interpreter (-DPython3_EXECUTABLE) "
                         "or unset RLTRADE_CMAKE_BUILD_DIR.")
            target = pathlib.Path(self.get_ext_fullpath(ext.name))
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(built, target)
        package_dir = pathlib.Path(self.get_ext_fullpath("rltrade._core")).parent
        if not (build_dir / "rltrade").exists():
            sys.exit(f"setup.py: {build_dir / 'rltrade'} is missing: build the tree first "
                     "(make build)")
        (package_dir / "bin").mkdir(exist_ok=True)
        shutil.copy2(build_dir / "rltrade", package_dir / "bin" / "rltrade")

    def _build_dir(self):
        given = os.environ.get("RLTRADE_CMAKE_BUILD_DIR")
        if given:
            path = pathlib.Path(given).resolve()
            cache = path / "CMakeCache.txt"
            if not cache.exists():
                sys.exit(f"setup.py: RLTRADE_CMAKE_BUILD_DIR={given} is not a CMake build tree "
                         "(no CMakeCache.txt); run `make build` first or unset it")
            if "RLT_WITH_PYTHON:BOOL=ON" not in cache.read_text():
                sys.exit(f"setup.py: {given} was configured without the Python module; "
                         "reconfigure it with -DRLT_WITH_PYTHON=ON or unset "
                         "RLTRADE_CMAKE_BUILD_DIR")
            return path, False  # packaged as built: a test run may be using its binary
        tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
        return ROOT / "build" / f"wheel-{tag}", True

    @staticmethod
    def _run(cmd):
        print("setup.py:", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)


# setuptools' own scratch files go under build/setuptools/, beside the CMake trees.
SCRATCH = ROOT / "build" / "setuptools"
SCRATCH.mkdir(parents=True, exist_ok=True)

setup(
    version=project_version(),
    packages=["rltrade"],
    package_dir={"": "python"},
    ext_modules=[Extension("rltrade._core", sources=[]), Extension("rltrade._train", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={
        "build": {"build_base": str(SCRATCH.relative_to(ROOT))},
        "egg_info": {"egg_base": str(SCRATCH.relative_to(ROOT))},
    },
    zip_safe=False,
)
