"""The package as pip installs it: the copy under test, its version, its command.

`make test` runs these tests against a copy pip-installed into a fresh virtual
environment (scripts/python-venv-test.sh sets RLTRADE_EXPECT_INSTALLED to it)."""

import importlib.metadata
import os
import pathlib
import re
import subprocess
import sys

import pytest

import rltrade

SOURCE = pathlib.Path(os.environ.get("RLT_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
INSTALLED = os.environ.get("RLTRADE_EXPECT_INSTALLED")
needs_install = pytest.mark.skipif(not INSTALLED, reason="runs on the pip-installed copy")


@needs_install
def test_the_tests_import_the_installed_copy_not_the_source_tree():
    where = pathlib.Path(rltrade.__file__).resolve()
    assert pathlib.Path(INSTALLED).resolve() in where.parents, where
    assert (SOURCE / "python").resolve() not in where.parents


def test_the_version_is_the_projects():
    text = (SOURCE / "CMakeLists.txt").read_text()
    assert rltrade.__version__ == re.search(r"project\(rltrade VERSION ([0-9.]+)", text).group(1)


@needs_install
def test_the_distribution_metadata_and_the_command_agree():
    assert importlib.metadata.version("rltrade") == rltrade.__version__
    command = pathlib.Path(sys.executable).parent / "rltrade"
    out = subprocess.run([str(command), "--version"], capture_output=True, text=True,
                         env={k: v for k, v in os.environ.items() if k != "RLTRADE_BINARY"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"rltrade {rltrade.__version__} ")
    # The same commands as the C++ binary: its help lists the subcommands.
    helped = subprocess.run([str(command), "--help"], capture_output=True, text=True)
    for name in ("train", "eval", "paper", "tune", "mine"):
        assert name in helped.stdout


def test_the_entry_point_says_where_the_binary_is_when_it_is_missing(tmp_path):
    env = dict(os.environ, RLTRADE_BINARY=str(tmp_path / "nothing"))
    out = subprocess.run([sys.executable, "-m", "rltrade._cli", "--version"], env=env,
                         capture_output=True, text=True)
    assert out.returncode == 2
    assert "RLTRADE_BINARY" in out.stderr and str(tmp_path / "nothing") in out.stderr
