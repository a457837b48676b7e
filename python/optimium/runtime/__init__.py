"""Optimium Runtime for Python.

    import optimium.runtime as rt
    model = rt.load_model("models/digits")
    request = model.create_request()
    request.infer([np.zeros((1, 1, 8, 8), np.float32)])
    request.wait()
    print(request.get_output(0).to_numpy())

The runtime is initialized at import unless the environment variable OPTIMIUM_RT_DEFER_INIT is set
(to anything but "", "0", "false", "no" or "off"); then call rt.initialize() before using it.
"""

from __future__ import annotations

import atexit as _atexit
import os as _os

import numpy as _np

from . import _core
from ._core import (  # noqa: F401  (re-exported API)
    ARMCapability,
    Capability,
    CapabilityKind,
    ContainerError,
    CUDACapability,
    DeviceError,
    DeviceID,
    DeviceKind,
    ElementType,
    Expr,
    ExtensionError,
    GroupMember,
    HexagonCapability,
    HostInfo,
    InferError,
    InferRequest,
    InferStatus,
    InvalidOperationError,
    InvalidStateError,
    Model,
    ModelError,
    ModelGroup,
    OpInfo,
    OSKind,
    OutOfResourceError,
    PlatformKind,
    ProfileDurations,
    ProfileEvent,
    ProfileEventKind,
    LayerDuration,
    QuantParam,
    QuantScheme,
    RemoteError,
    RemoteGroupMember,
    RemoteModel,
    RemoteModelGroup,
    RemoteSession,
    RequestError,
    RISCVCapability,
    RuntimeException,
    SchedulerType,
    ShapeError,
    SPIRVCapability,
    Tensor,
    TensorInfo,
    TensorShape,
    Version,
    VoidCapability,
    X86Capability,
    connect,
    create_model_group,
    encrypt_model,
    finalize,
    get_device_property,
    get_local_info,
    get_version,
    initialize,
    is_initialized,
    load_extension,
    load_model,
)

from . import config, logging  # noqa: E402,F401  (rt.config, rt.logging)

# ---------------------------------------------------------------------------------------------
# dtype aliases (DECISIONS.md): numpy-style names for the ElementType values.
bool_ = ElementType.BOOL
int8 = ElementType.I8
uint8 = ElementType.U8
int16 = ElementType.I16
uint16 = ElementType.U16
int32 = ElementType.I32
uint32 = ElementType.U32
int64 = ElementType.I64
uint64 = ElementType.U64
float16 = ElementType.F16
bfloat16 = ElementType.BF16
float32 = ElementType.F32
float64 = ElementType.F64

_TO_NUMPY = {
    ElementType.BOOL: _np.dtype(_np.bool_),
    ElementType.I8: _np.dtype(_np.int8),
    ElementType.U8: _np.dtype(_np.uint8),
    ElementType.I16: _np.dtype(_np.int16),
    ElementType.U16: _np.dtype(_np.uint16),
    ElementType.I32: _np.dtype(_np.int32),
    ElementType.U32: _np.dtype(_np.uint32),
    ElementType.I64: _np.dtype(_np.int64),
    ElementType.U64: _np.dtype(_np.uint64),
    ElementType.F16: _np.dtype(_np.float16),
    ElementType.F32: _np.dtype(_np.float32),
    ElementType.F64: _np.dtype(_np.float64),
    ElementType.STRING: _np.dtype(object),
}


def _bfloat16_dtype():
    """numpy's dtype for BF16: ml_dtypes.bfloat16 when installed, else uint16 storage."""
    try:
        import ml_dtypes  # type: ignore

        return _np.dtype(ml_dtypes.bfloat16)
    except Exception:  # pragma: no cover - depends on the environment
        return _np.dtype(_np.uint16)


# float8 / float4 / int4 / int2: numpy has no such dtypes. A tensor of these types holds one byte
# per element (float8: the bit pattern; F4E2M1/U4/U2: the code in the low bits; I4/I2: the value
# as int8), and numpy sees exactly those bytes as uint8: to_numpy() returns a uint8 array and
# rt.tensor(uint8_array, dtype=rt.ElementType.F8E4M3FN) wraps one. to_dtype() raises TypeError
# for them, so no silent value conversion happens. Convert values inside the model (Cast).
LOW_PRECISION_TYPES = frozenset(
    {
        ElementType.F8E4M3FN,
        ElementType.F8E4M3FNUZ,
        ElementType.F8E5M2,
        ElementType.F8E5M2FNUZ,
        ElementType.F8E8M0,
        ElementType.F4E2M1,
        ElementType.I4,
        ElementType.U4,
        ElementType.I2,
        ElementType.U2,
    }
)


def _to_dtype(self: ElementType) -> _np.dtype:
    """The numpy dtype of this element type (BF16: ml_dtypes.bfloat16 if available, else uint16)."""
    if self == ElementType.BF16:
        return _bfloat16_dtype()
    if self in LOW_PRECISION_TYPES:
        raise TypeError(
            f"ElementType.{self.name} has no numpy dtype; its tensors exchange their stored bytes as uint8 "
            "(one byte per element)"
        )
    try:
        return _TO_NUMPY[self]
    except KeyError:
        raise TypeError(f"ElementType.{self.name} has no numpy dtype") from None


def _from_dtype(dtype) -> ElementType:
    """The ElementType of a numpy *dtype* (np.dtype(np.float32), arr.dtype), not a scalar type."""
    if isinstance(dtype, type):
        raise TypeError(
            f"ElementType.from_dtype() takes a numpy dtype, not the scalar type {dtype.__module__}.{dtype.__name__}; "
            f"pass np.dtype({dtype.__module__}.{dtype.__name__}) (or arr.dtype) instead"
        )
    if not isinstance(dtype, _np.dtype):
        raise TypeError(
            f"ElementType.from_dtype() takes a numpy dtype (e.g. np.dtype(np.float32)), not {type(dtype).__name__} {dtype!r}"
        )
    if dtype.name == "bfloat16":
        return ElementType.BF16
    if dtype.byteorder == ">":
        raise TypeError(f"ElementType.from_dtype(): big-endian dtype {dtype!r} is not supported; use a native one")
    for et, dt in _TO_NUMPY.items():
        if dt == dtype:
            return et
    raise TypeError(f"ElementType.from_dtype(): numpy dtype {dtype} has no Optimium ElementType")


ElementType.to_dtype = _to_dtype
ElementType.from_dtype = staticmethod(_from_dtype)


def _resolve_dtype(dtype) -> ElementType:
    """dtype arguments of rt.tensor(): an ElementType/alias, or (convenience) a numpy dtype or scalar type."""
    if isinstance(dtype, ElementType):
        return dtype
    if isinstance(dtype, (type, str)):
        return _from_dtype(_np.dtype(dtype))
    return _from_dtype(dtype)


# ---------------------------------------------------------------------------------------------
# Tensor helpers written in Python.


def _tensor_array(self: Tensor, dtype=None, copy=None):
    arr = self.to_numpy()
    return arr if dtype is None else arr.astype(dtype, copy=False)


_orig_to_numpy = Tensor.to_numpy


def _tensor_to_numpy(self: Tensor) -> _np.ndarray:
    """A copy of the tensor's data as a numpy array (writing into it does not change the tensor)."""
    arr = _orig_to_numpy(self)
    if self.type == ElementType.BF16:
        dt = _bfloat16_dtype()
        if dt != arr.dtype:
            arr = arr.view(dt)
    return arr


Tensor.to_numpy = _tensor_to_numpy
Tensor.__array__ = _tensor_array


def tensor(value=None, shape=None, dtype=None, *, copy: bool = True) -> Tensor:
    """Creates a tensor. The five creation modes:

    * ``rt.tensor(shape=(3, 4), dtype=rt.float32)`` -- uninitialized
    * ``rt.tensor(0.0, shape=(3, 4), dtype=rt.float32)`` -- filled with a scalar
    * ``rt.tensor([[1, 2], [3, 4]])`` -- from a nested list (default dtype float32)
    * ``rt.tensor(numpy_array)`` -- from numpy (copy)
    * ``rt.tensor(numpy_array, copy=False)`` -- zero-copy; the tensor keeps the array alive and
      shares its memory (the array must be C-contiguous)
    """
    et = None if dtype is None else _resolve_dtype(dtype)
    if value is None:
        if shape is None:
            raise ValueError("rt.tensor(): give a value, a shape, or both")
        return _core._tensor_empty(et if et is not None else ElementType.F32, shape)
    if isinstance(value, Tensor):
        if not copy and (et is None or et == value.type):
            return value
        value = value.to_numpy()
    if isinstance(value, _np.ndarray):
        arr = value
        if shape is not None and tuple(arr.shape) != tuple(int(d) for d in shape):
            if not copy:
                raise ValueError(f"rt.tensor(): array shape {tuple(arr.shape)} differs from shape={tuple(shape)} "
                                 "and copy=False cannot reshape")
            arr = arr.reshape(tuple(int(d) for d in shape))
        if et in LOW_PRECISION_TYPES:
            if arr.dtype != _np.uint8:
                raise TypeError(
                    f"rt.tensor(): a {et.name} tensor wraps uint8 storage (one stored byte per element), "
                    f"got dtype {arr.dtype}"
                )
            return _core._tensor_from_buffer(arr, et, copy)
        if et is not None and et != ElementType.BF16 and _from_dtype(arr.dtype) != et:
            if not copy:
                raise TypeError(f"rt.tensor(): array dtype {arr.dtype} is not {et.name} and copy=False cannot convert")
            arr = arr.astype(_to_dtype(et))
        if et == ElementType.BF16 and arr.dtype != _np.uint16 and arr.dtype.name != "bfloat16":
            if not copy:
                raise TypeError("rt.tensor(): a BF16 tensor wraps uint16 (or ml_dtypes.bfloat16) storage")
            arr = _float_to_bf16_bits(arr)
        if arr.dtype.name == "bfloat16":
            arr = arr.view(_np.uint16)
            et = ElementType.BF16
        return _core._tensor_from_buffer(arr, et, copy)
    if _np.isscalar(value) or isinstance(value, _np.generic):
        if shape is None:
            shape = ()
        if et is None:
            et = ElementType.F32
        t = _core._tensor_empty(et, shape)
        t.fill(value)
        return t
    # nested sequence
    target = _to_dtype(et) if et is not None and et != ElementType.BF16 else _np.float32
    arr = _np.asarray(value, dtype=target)
    if et == ElementType.BF16:
        arr = _float_to_bf16_bits(arr)
    if shape is not None:
        arr = arr.reshape(tuple(int(d) for d in shape))
    return _core._tensor_from_buffer(_np.ascontiguousarray(arr), et, True)


def _float_to_bf16_bits(arr) -> _np.ndarray:
    """Round-to-nearest-even float32 -> bfloat16 bit patterns (uint16)."""
    f = _np.ascontiguousarray(arr, dtype=_np.float32).view(_np.uint32)
    rounded = f + (_np.uint32(0x7FFF) + ((f >> 16) & 1))
    return (rounded >> 16).astype(_np.uint16)


# ---------------------------------------------------------------------------------------------
# Version and initialization.

_v = get_version()
__version__ = f"{_v.major}.{_v.minor}.{_v.patch}{_v.tag}"
del _v


def _defer_init() -> bool:
    value = _os.environ.get("OPTIMIUM_RT_DEFER_INIT")
    return value is not None and value.strip().lower() not in ("", "0", "false", "no", "off")


if not _defer_init():
    initialize()

# Callbacks must not try to take the GIL while the interpreter shuts down.
_atexit.register(_core._set_finalizing)

__all__ = [name for name in dir() if not name.startswith("_")]
