"""Shared fixtures: where the repository's test data and the outside oracles live."""

import os
import pathlib

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
