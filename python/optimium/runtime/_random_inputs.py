"""Random model inputs: the one rule the Python package shares with optimium-benchmark.

The rule (randomInput in src/tools/Benchmark.cpp follows it too; tests/random_input_rule.txt is
what both are tested against):

* floats (float32, float64, float16, bfloat16) are uniform in [-1, 1);
* integers and booleans are 0 (valid as indices, sizes and masks);
* a symbolic (dynamic) dimension takes the size 1.
"""
from __future__ import annotations

from typing import Any, Iterable, List, Optional

import numpy as np

__all__ = ["SYMBOLIC_DIM", "concrete_dims", "random_array"]

#: The size a symbolic dimension takes.
SYMBOLIC_DIM = 1


def concrete_dims(shape: Iterable[Any]) -> List[int]:
    """Dims of a shape whose entries are ints, symbol names (str) or runtime Exprs."""
    dims = []
    for d in [shape[i] for i in range(len(shape))]:  # the runtime's TensorShape indexes, not iterates
        if isinstance(d, (int, np.integer)) and not isinstance(d, bool):
            dims.append(int(d))
        elif hasattr(d, "is_const") and d.is_const():
            dims.append(int(d.value()))
        else:
            dims.append(SYMBOLIC_DIM)
    return dims


def random_array(dtype: Any, shape: Iterable[Any], rng: np.random.Generator,
                 element_type: Optional[str] = None) -> np.ndarray:
    """A random array of ``dtype`` by the rule above. ``element_type`` is the runtime's type name
    when known: "BF16" with a uint16 dtype (bfloat16 stored as its raw bits) is a float."""
    if dtype is None:
        raise ValueError(f"element type {element_type or 'unknown'} has no random inputs; give concrete inputs")
    dtype = np.dtype(dtype)
    dims = concrete_dims(shape)
    if element_type == "BF16" and dtype == np.uint16:
        bits = rng.uniform(-1.0, 1.0, size=dims).astype(np.float32).view(np.uint32)
        return (bits >> 16).astype(np.uint16)  # truncation toward zero stays inside [-1, 1)
    if np.issubdtype(dtype, np.floating) or dtype.name == "bfloat16":
        return rng.uniform(-1.0, 1.0, size=dims).astype(dtype)
    if dtype == np.bool_ or np.issubdtype(dtype, np.integer):
        return np.zeros(dims, dtype=dtype)
    raise ValueError(f"dtype {dtype} has no random inputs; give concrete inputs")
