"""The LLM decode example (examples/llm_decode/decode.py) at small size: the GPT-style decoder with
its KV cache in the request produces the same tokens as ONNX Runtime fed past/present from the host,
and the runtime copies no cache bytes per step. Needs the model exported by the C++ tests
(build/exported-models, scripts/export-models.sh)."""
import importlib.util
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODEL = ROOT / "build" / "exported-models" / "gpt2_tiny_decoder"


@pytest.mark.skipif(not (MODEL / "model.onnx").exists(), reason=f"{MODEL}/model.onnx not exported")
def test_decode_example_matches_onnx_runtime_and_copies_nothing():
    args = [sys.executable, str(ROOT / "examples" / "llm_decode" / "decode.py"), str(MODEL),
            "--tokens", "6", "--past", "8", "40", "--threads", "2"]
    have_ort = importlib.util.find_spec("onnxruntime") is not None
    if not have_ort:
        args.append("--no-ort")
    out = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    rows = [line for line in out.stdout.splitlines() if "cache in the request" in line]
    assert len(rows) == 2
    for row in rows:
        assert "| 0 (0 copy events) |" in row, row
    if have_ort:
        assert "tokens identical" in out.stdout
