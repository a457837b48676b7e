"""Random model inputs follow tests/random_input_rule.txt, the rule optimium-benchmark's randomInput
is tested against too (tests/tools/BenchmarkTest.cpp): so the Python and C++ generators agree on
the value range per element type and on the size of a symbolic dim."""
import numpy as np
import pytest

from conftest import ROOT, TEST_MODELS
import optimium.runtime as rt
from optimium.runtime._random_inputs import random_array
from optimium.runtime.profile import _random_inputs
from optimium.runtime.runner import InferenceRunner, TensorInfo, random_inputs_from_info

DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": np.uint16, "i8": np.int8,
          "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8, "u16": np.uint16,
          "u32": np.uint32, "u64": np.uint64, "bool": np.bool_}


def _rule():
    ranges, symbolic = {}, None
    for line in (ROOT / "tests" / "random_input_rule.txt").read_text().splitlines():
        parts = line.split()
        if not parts or parts[0].startswith("#"):
            continue
        if parts[0] == "symbolic_dim":
            symbolic = int(parts[1])
        else:
            ranges[parts[0]] = (float(parts[1]), float(parts[2]))
    return ranges, symbolic


def _as_float(name, a):
    if name == "bf16":  # raw bfloat16 bits
        return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return a.astype(np.float64)


@pytest.mark.parametrize("name", sorted(DTYPES))
def test_random_array_follows_the_shared_rule(name):
    ranges, symbolic = _rule()
    assert set(ranges) == set(DTYPES) and symbolic == 1
    lo, hi = ranges[name]
    a = random_array(DTYPES[name], ["batch", 4096], np.random.default_rng(7), "BF16" if name == "bf16" else None)
    assert a.shape == (symbolic, 4096) and a.dtype == np.dtype(DTYPES[name])
    v = _as_float(name, a)
    if lo == hi:
        assert (v == lo).all()
    else:  # inside [lo, hi] (16-bit floats may round up to hi), and spread over it
        assert v.min() >= lo and v.max() <= hi
        assert v.min() < lo + (hi - lo) * 0.01 and v.max() > hi - (hi - lo) * 0.01


def test_runner_and_profiler_use_the_rule():
    model = rt.load_model(str(TEST_MODELS / "dynamic_batch"))
    (from_profile,) = _random_inputs(model)
    (from_runner,) = random_inputs_from_info(InferenceRunner(str(TEST_MODELS / "dynamic_batch")).inputs_info, seed=0)
    assert from_profile.shape == from_runner.shape == (1, 16)
    assert from_profile.dtype == from_runner.dtype == np.float32
    for a in (from_profile, from_runner):
        assert a.min() >= -1 and a.max() < 1 and a.min() < 0
    with pytest.raises(ValueError):
        random_inputs_from_info([TensorInfo(None, [2], "String")])
