"""Shared fixtures: where the repository's test data and the outside oracles live, and a
small run of several symbols."""

import os
import pathlib
import subprocess

import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("RLT_SOURCE_DIR",
                                         pathlib.Path(__file__).resolve().parents[2]))
SHARED_DIR = pathlib.Path(os.environ.get("RLT_SHARED_DIR", SOURCE_DIR.parent / "shared"))


@pytest.fixture
def fixtures_dir():
    return SOURCE_DIR / "tests" / "fixtures"


@pytest.fixture
def oracles_dir():
    d = SHARED_DIR / "oracles"
    if not d.is_dir():
        pytest.skip("no ../shared/oracles")
    return d


def three_symbol_config(tmp_path, binary):
    """Three synthetic symbols (40 sessions) written by `rltrade data synth`, and a config
    that trains one policy on all of them (1,024 steps) and tests on the last two weeks."""
    bars = tmp_path / "three.csv"
    subprocess.run([binary, "data", "synth", "--symbols", "3", "--days", "40", "--seed", "5",
                    "--out", str(bars)], check=True, capture_output=True)
    config = tmp_path / "three.toml"
    config.write_text(f"""[run]
total_steps = 1024
seed = 2
threads = 1
[data]
source = "file"
file = "{bars.name}"
symbols = "all"
timezone = "Asia/Kolkata"
[split]
train = "2023-01-02:2023-02-10"
test = "2023-02-13:2023-02-24"
[env]
id = "intraday"
num_envs = 4
[algo]
n_steps = 64
batch_size = 128
""")
    return config
