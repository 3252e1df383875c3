"""The `rltrade` command installed with the package: runs the command-line binary.

The binary is the same program as the C++ build's `rltrade` (every command and flag of
docs/cli.md); the package carries it as rltrade/bin/rltrade. RLTRADE_BINARY=PATH runs
another one (e.g. a build tree's).
"""

import os
import pathlib
import sys


def binary_path() -> pathlib.Path:
    """The rltrade binary the entry point runs (RLTRADE_BINARY, else the package's own)."""
    given = os.environ.get("RLTRADE_BINARY")
    if given:
        return pathlib.Path(given)
    return pathlib.Path(__file__).resolve().parent / "bin" / "rltrade"


def main() -> None:
    """Replaces this process with the rltrade binary, passing the arguments on."""
    path = binary_path()
    if not os.access(path, os.X_OK):
        sys.stderr.write(
            f"rltrade: the command-line binary is not at {path} (this copy of the package was "
            "not installed with `pip install`, or RLTRADE_BINARY names a missing file); "
            "install the package with `pip install --no-build-isolation .` or set "
            "RLTRADE_BINARY to a build's rltrade\n")
        sys.exit(2)
    os.execv(str(path), [str(path), *sys.argv[1:]])


if __name__ == "__main__":
    main()
