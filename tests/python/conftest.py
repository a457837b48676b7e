"""Shared fixtures: the repository's models. Run with the installed package (pip install .)."""
import pathlib

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DIGITS = ROOT / "models" / "digits"
TEST_MODELS = ROOT / "tests" / "models"


@pytest.fixture(scope="session")
def rt():
    import optimium.runtime as rt

    return rt


@pytest.fixture
def digits(rt):
    return rt.load_model(str(DIGITS / "model.onnx"))


@pytest.fixture
def digits_input():
    return np.load(DIGITS / "sample_input.npy")


@pytest.fixture
def digits_output():
    return np.load(DIGITS / "sample_output.npy")
