"""Optimium Runtime native bindings (use the optimium.runtime package)"""

from collections.abc import Mapping
import enum
from typing import overload

import numpy

from optimium.runtime._core import (
    config as config,
    logging as logging
)


class RuntimeException(RuntimeError): ...

class InvalidStateError(RuntimeException): ...

class InvalidOperationError(RuntimeException): ...

class ShapeError(RuntimeException): ...

class ExtensionError(RuntimeException): ...

class DeviceError(RuntimeException): ...

class ModelError(RuntimeException): ...

class RequestError(RuntimeException): ...

class InferError(RuntimeException): ...

class OutOfResourceError(RuntimeException): ...

class ContainerError(RuntimeException): ...

class RemoteError(RuntimeException): ...

class ElementType(enum.Enum):
    UNDEFINED = 0

    BOOL = 1

    I8 = 2

    I16 = 3

    I32 = 4

    I64 = 5

    U8 = 6

    U16 = 7

    U32 = 8

    U64 = 9

    F16 = 10

    BF16 = 11

    F32 = 12

    F64 = 13

    STRING = 14

    F8E4M3FN = 15

    F8E4M3FNUZ = 16

    F8E5M2 = 17

    F8E5M2FNUZ = 18

    F4E2M1 = 19

    I4 = 20

    U4 = 21

    I2 = 22

    U2 = 23

    F8E8M0 = 24

    def to_dtype(self) -> numpy.dtype:
        """
        The numpy dtype of this element type (BF16: ml_dtypes.bfloat16 if available, else uint16).
        """

    @staticmethod
    def from_dtype(dtype: numpy.dtype) -> ElementType:
        """
        The ElementType of a numpy *dtype* (np.dtype(np.float32), arr.dtype), not a scalar type.
        """

class Tensor:
    @property
    def shape(self) -> TensorShape: ...

    @property
    def type(self) -> ElementType: ...

    @property
    def element_count(self) -> int: ...

    @property
    def nbytes(self) -> int: ...

    @property
    def is_user_buffer(self) -> bool: ...

    @property
    def is_device(self) -> bool:
        """
        Whether the data is in a device's own memory (a device output; to_host() copies it).
        """

    @property
    def device(self) -> DeviceID: ...

    def to_host(self) -> Tensor: ...

    def to_device(self, device: DeviceID) -> Tensor:
        """
        This tensor's data in the memory of device: a device tensor (one copy now) for a device with memory of its own (the simulated NPU), which infer() of a model there binds without a copy; for a device computing in host memory (the CPU, XNNPack) to_host(). DeviceError for a device not loaded here.
        """

    def fill(self, value: object) -> None: ...

    def to_numpy(self) -> numpy.ndarray:
        """
        A copy of the tensor's data as a numpy array (writing into it does not change the tensor).
        """

    def clone(self) -> Tensor: ...

    def copy_to(self, dest: Tensor) -> None: ...

    def save(self, path: str) -> None: ...

    def load(self, path: str) -> None: ...

    def release(self) -> None: ...

    def __bool__(self) -> bool: ...

    def __str__(self) -> str: ...

    def __repr__(self) -> str: ...

    def __array__(self, dtype: object = None, copy: object = None) -> numpy.ndarray: ...

class PlatformKind(enum.Enum):
    NATIVE = 0

    XNNPACK = 1

    CUDA = 2

    VULKAN = 3

    OPENCL = 4

    SNPE = 5

    QNN = 6

    SYNAPTICS = 7

    HEXAGON = 8

class DeviceKind(enum.Enum):
    UNSPECIFIED = 0

    NEUTRAL = 1

    X86 = 2

    X64 = 3

    ARM = 4

    ARM64 = 5

    RISCV32 = 6

    RISCV64 = 7

    ANY_CPU = 8

    NVIDIA = 9

    AMDGPU = 10

    INTEL_GPU = 11

    MALI = 12

    ADRENO = 13

    ANY_GPU = 14

    HEXAGON = 15

    MYRIAD = 16

    ARA1 = 17

    GOOGLE_TPU = 18

    CV22 = 19

    SYNAP_NPU = 20

    ANY_NPU = 21

class OSKind(enum.Enum):
    LINUX = 0

    ANDROID = 1

    WINDOWS = 2

    MACOS = 3

    IOS = 4

class CapabilityKind(enum.Enum):
    VOID = 0

    X86 = 1

    ARM = 2

    SPIRV = 3

    CUDA = 4

    RISCV = 5

    HEXAGON = 6

class Capability:
    @property
    def kind(self) -> CapabilityKind: ...

    def __str__(self) -> str: ...

    def __repr__(self) -> str: ...

class VoidCapability(Capability):
    pass

class X86Capability(Capability):
    @property
    def SSE2(self) -> bool: ...

    @property
    def SSE3(self) -> bool: ...

    @property
    def SSSE3(self) -> bool: ...

    @property
    def SSE41(self) -> bool: ...

    @property
    def SSE42(self) -> bool: ...

    @property
    def AVX(self) -> bool: ...

    @property
    def AVX2(self) -> bool: ...

    @property
    def FMA(self) -> bool: ...

    @property
    def F16C(self) -> bool: ...

    @property
    def AVX512F(self) -> bool: ...

    @property
    def AVX512BW(self) -> bool: ...

    @property
    def AVX512DQ(self) -> bool: ...

    @property
    def AVX512VL(self) -> bool: ...

    @property
    def AVX512VNNI(self) -> bool: ...

    @property
    def AVX512BF16(self) -> bool: ...

    @property
    def AVX512FP16(self) -> bool: ...

    @property
    def AVXVNNI(self) -> bool: ...

    @property
    def AMXTile(self) -> bool: ...

    @property
    def AMXInt8(self) -> bool: ...

    @property
    def AMXBF16(self) -> bool: ...

class ARMCapability(Capability):
    @property
    def NEON(self) -> bool: ...

    @property
    def FP16(self) -> bool: ...

    @property
    def DotProd(self) -> bool: ...

    @property
    def I8MM(self) -> bool: ...

    @property
    def BF16(self) -> bool: ...

    @property
    def SVE(self) -> bool: ...

    @property
    def SVE2(self) -> bool: ...

class SPIRVCapability(Capability):
    @property
    def version_major(self) -> int: ...

    @property
    def version_minor(self) -> int: ...

    @property
    def float16(self) -> bool: ...

    @property
    def int8(self) -> bool: ...

class CUDACapability(Capability):
    @property
    def compute_major(self) -> int: ...

    @property
    def compute_minor(self) -> int: ...

class RISCVCapability(Capability):
    @property
    def vector(self) -> bool: ...

    @property
    def float16(self) -> bool: ...

    @property
    def vector_length(self) -> int: ...

class HexagonCapability(Capability):
    @property
    def version(self) -> int: ...

    @property
    def hvx(self) -> bool: ...

class HostInfo:
    @property
    def id(self) -> int: ...

    @property
    def name(self) -> str: ...

    @property
    def architecture(self) -> DeviceKind: ...

    @property
    def os(self) -> OSKind: ...

    @property
    def devices(self) -> list[DeviceID]: ...

    def __str__(self) -> str: ...

    def __repr__(self) -> str: ...

class DeviceID:
    @overload
    def __init__(self) -> None: ...

    @overload
    def __init__(self, platform: PlatformKind, device_kind: DeviceKind, index: int = 0, host_id: int = 0) -> None: ...

    @property
    def platform(self) -> PlatformKind: ...

    @property
    def device_kind(self) -> DeviceKind: ...

    @property
    def index(self) -> int: ...

    @property
    def host_id(self) -> int: ...

    @property
    def host_info(self) -> HostInfo: ...

    @property
    def capability(self) -> object: ...

    def __eq__(self, arg: DeviceID, /) -> bool: ...

    def __ne__(self, arg: DeviceID, /) -> bool: ...

    def __hash__(self) -> int: ...

    def __str__(self) -> str: ...

    def __repr__(self) -> str: ...

def get_local_info() -> HostInfo: ...

def get_device_property(device: DeviceID, key: str) -> str:
    """
    A property its backend reports (hw_type, inference_time_path, memory), '' when none.
    """

def initialize() -> None: ...

def finalize() -> None: ...

def is_initialized() -> bool: ...

def load_extension(path: str) -> None: ...

class Version:
    @property
    def major(self) -> int: ...

    @property
    def minor(self) -> int: ...

    @property
    def patch(self) -> int: ...

    @property
    def tag(self) -> str: ...

    @property
    def commit_id(self) -> str: ...

    @property
    def build_info(self) -> str: ...

    def __str__(self) -> str: ...

    def __repr__(self) -> str: ...

def get_version() -> Version: ...

class Expr:
    @overload
    def __init__(self, value: int) -> None: ...

    @overload
    def __init__(self, symbol: str) -> None: ...

    def is_const(self) -> bool: ...

    def is_symbol(self) -> bool: ...

    @property
    def value(self) -> int: ...

    @property
    def symbol(self) -> str: ...

    @property
    def symbols(self) -> list[str]: ...

    def resolve(self, variables: Mapping[str, int]) -> Expr: ...

    def __add__(self, arg: object, /) -> Expr: ...

    def __radd__(self, arg: object, /) -> Expr: ...

    def __sub__(self, arg: object, /) -> Expr: ...

    def __rsub__(self, arg: object, /) -> Expr: ...

    def __mul__(self, arg: object, /) -> Expr: ...

    def __rmul__(self, arg: object, /) -> Expr: ...

    def __truediv__(self, arg: object, /) -> Expr: ...

    def __floordiv__(self, arg: object, /) -> Expr: ...

    def __rtruediv__(self, arg: object, /) -> Expr: ...

    def __rfloordiv__(self, arg: object, /) -> Expr: ...

    def __mod__(self, arg: object, /) -> Expr: ...

    def __rmod__(self, arg: object, /) -> Expr: ...

    def min(self, other: object) -> Expr: ...

    def max(self, other: object) -> Expr: ...

    def __eq__(self, arg: object, /) -> bool: ...

    def __ne__(self, arg: object, /) -> bool: ...

    def __hash__(self) -> int: ...

    def __int__(self) -> int: ...

    def __index__(self) -> int: ...

    def __str__(self) -> str: ...

    def __repr__(self) -> str: ...

class TensorShape:
    def __init__(self, *args) -> None: ...

    @property
    def rank(self) -> int: ...

    @property
    def dynamic(self) -> bool: ...

    @property
    def size(self) -> object: ...

    @property
    def strides(self) -> list: ...

    @property
    def dims(self) -> list[int]: ...

    def get_stride(self, dim: int) -> object: ...

    def is_compatible(self, other: object) -> bool: ...

    def resolve(self, variables: Mapping[str, int]) -> TensorShape: ...

    def __len__(self) -> int: ...

    def __getitem__(self, arg: int, /) -> object: ...

    def __eq__(self, arg: object, /) -> bool: ...

    def __ne__(self, arg: object, /) -> bool: ...

    def __hash__(self) -> int: ...

    def __str__(self) -> str: ...

    def __repr__(self) -> str: ...

class QuantParam:
    @property
    def scale(self) -> float: ...

    @property
    def zero_point(self) -> int: ...

    def __repr__(self) -> str: ...

class QuantScheme:
    @property
    def per_channel(self) -> bool: ...

    @property
    def axis(self) -> int: ...

    @property
    def storage_type(self) -> ElementType: ...

    def get_param(self, index: int = 0) -> QuantParam: ...

    def __len__(self) -> int: ...

    def __getitem__(self, arg: int, /) -> QuantParam: ...

    def __str__(self) -> str: ...

class TensorInfo:
    @property
    def name(self) -> str: ...

    @property
    def shape(self) -> TensorShape: ...

    @property
    def type(self) -> ElementType: ...

    @property
    def alignment(self) -> int: ...

    @property
    def padding(self) -> int: ...

    @property
    def size(self) -> int: ...

    @property
    def scheme(self) -> object: ...

    @property
    def opt_out(self) -> bool: ...

    @property
    def constant(self) -> bool: ...

    @property
    def resizable(self) -> bool: ...

    def __str__(self) -> str: ...

    def __repr__(self) -> str: ...

class OpInfo:
    @property
    def name(self) -> str: ...

    @property
    def type(self) -> str: ...

    @property
    def device(self) -> DeviceID: ...

    @property
    def inputs(self) -> list[str]: ...

    @property
    def outputs(self) -> list[str]: ...

    def has_attribute(self, key: str) -> bool: ...

    def get_attribute(self, key: str) -> object: ...

    @property
    def attribute_keys(self) -> list[str]: ...

    def __str__(self) -> str: ...

    def __repr__(self) -> str: ...

class ProfileEventKind(enum.Enum):
    MODEL_EXECUTE_BEGIN = 0

    MODEL_EXECUTE_END = 1

    LAYER_EXECUTE_BEGIN = 2

    LAYER_EXECUTE_END = 3

    LAUNCH_BEGIN = 4

    LAUNCH_END = 5

    DEVICE_EXECUTE_BEGIN = 6

    DEVICE_EXECUTE_END = 7

    COPY_BEGIN = 8

    COPY_END = 9

    QUEUE_BEGIN = 10

    QUEUE_END = 11

    WAIT_BEGIN = 12

    WAIT_END = 13

class ProfileEvent:
    @property
    def kind(self) -> ProfileEventKind: ...

    @property
    def timestamp(self) -> int:
        """
        Raw std::chrono::high_resolution_clock ticks since epoch (nanoseconds on Linux).
        """

    @property
    def operation(self) -> int: ...

    @property
    def thread_id(self) -> int: ...

    @property
    def tensor_id(self) -> int: ...

    @property
    def source_device(self) -> DeviceID: ...

    @property
    def dest_device(self) -> DeviceID: ...

    def __repr__(self) -> str: ...

class ProfileDurations:
    @property
    def model_name(self) -> str: ...

    @property
    def model_durations(self) -> list[int]: ...

    @property
    def layer_durations(self) -> dict[str, list[int]]: ...

    @property
    def copy_durations(self) -> dict[str, list[int]]: ...

    def __repr__(self) -> str: ...

class LayerDuration:
    @property
    def name(self) -> str: ...

    @property
    def type(self) -> str: ...

    @property
    def operation(self) -> int: ...

    @property
    def count(self) -> int: ...

    @property
    def total_ns(self) -> int: ...

    @property
    def min_ns(self) -> int: ...

    @property
    def max_ns(self) -> int: ...

    @property
    def mean_ns(self) -> float: ...

    def __repr__(self) -> str: ...

class SchedulerType(enum.Enum):
    AUTO = 0

    EXCLUSIVE = 1

    SEQUENTIAL = 2

    PIPELINE = 3

class InferStatus(enum.Enum):
    READY = 0

    RUNNING = 1

    FAULT = 2

class InferRequest:
    def infer(self, inputs: object) -> None: ...

    def run(self, inputs: object) -> None:
        """
        infer(inputs) then wait(), run on the calling thread: the synchronous call (like ONNX Runtime's InferenceSession.run), without the hand-off infer() makes for an asynchronous caller.
        """

    def wait(self, timeout_us: int = 0) -> bool: ...

    @property
    def status(self) -> InferStatus: ...

    @property
    def device_outputs(self) -> bool:
        """
        Outputs computed on a device with its own memory stay there as device tensors (docs/devices.md).
        """

    @device_outputs.setter
    def device_outputs(self, arg: bool, /) -> None: ...

    def set_callback(self, callback: object | None) -> None: ...

    def cancel(self) -> None: ...

    def get_output(self, index_or_name: object) -> Tensor: ...

    def get_tensor(self, name: str) -> Tensor: ...

    def set_tensor_shape(self, name: str, shape: object) -> None: ...

    def apply_shape_changes(self, shrink_to_fit: bool = False) -> None: ...

    def set_resize_migration(self, name: str, callback: object | None) -> None: ...

    @property
    def model_name(self) -> str: ...

    def profile(self, inputs: object, repeat: int = 100, warmup: int = 10, warmup_time: int = 1000000, stop_threshold: int = 0, check_period: int = 0, event_buffer_size: int = 0) -> None:
        """
        Blocking: warm-up runs, then up to `repeat` recorded runs (times in microseconds).
        """

    def get_profile_events(self) -> list[ProfileEvent]: ...

    def get_profile_durations(self) -> ProfileDurations: ...

    def get_layer_durations(self) -> list[LayerDuration]: ...

    @property
    def dropped_profile_events(self) -> int: ...

    def __repr__(self) -> str: ...

class Model:
    @property
    def name(self) -> str: ...

    @property
    def input_names(self) -> list[str]: ...

    @property
    def output_names(self) -> list[str]: ...

    def get_tensor(self, name: str) -> TensorInfo: ...

    def get_input_tensor(self, index: int) -> TensorInfo: ...

    def get_output_tensor(self, index: int) -> TensorInfo: ...

    @property
    def tensors(self) -> list[TensorInfo]: ...

    @property
    def operations(self) -> list[OpInfo]: ...

    @property
    def is_dynamic(self) -> bool: ...

    def has_attribute(self, key: str) -> bool: ...

    def get_attribute(self, key: str) -> object: ...

    @property
    def attribute_keys(self) -> list[str]: ...

    def infer_shape(self, name: str, input_shapes: object) -> TensorShape: ...

    def create_request(self) -> InferRequest: ...

    def __repr__(self) -> str: ...

def load_model(path: object, devices: object | None = None, strict: bool = False, memory_optimization: bool = True, disable_denormals: bool = True, intermediate_save_path: str | None = None, passphrase: str | None = None, threads: int = 0, cores: object | None = None, scheduler_type: SchedulerType = SchedulerType.AUTO, spin_iterations: int = 1000, spin_yield_iterations: int = 0, enable_work_stealing: bool = True, resizable_capacities: object | None = None, indexed_intermediate_save: bool = False, compute_precision: str = 'float32') -> Model: ...

def encrypt_model(path: object, out_folder: object, passphrase: str, scrypt_log2n: int = 14) -> list[str]:
    """
    Writes an encrypted copy of a model (an .onnx file or a model folder, with its external data
    files and optimium.json) into out_folder (missing or empty): AES-256-GCM per file, the key from
    the passphrase through scrypt (N = 2**scrypt_log2n, r = 8, p = 1). Load it with
    load_model(out_folder, passphrase=...). Returns the names of the files encrypted.
    """

class GroupMember:
    """
    One model of a ModelGroup. Not a Model: no create_request(); run() blocks, and a run of another member from another thread waits until it ends.
    """

    def run(self, inputs: object) -> list:
        """
        Runs the model (blocking) on a list of inputs in input order or a dict by name; returns the outputs (rt.Tensor) in output_names order. They point into the member's memory, which the next run() overwrites: copy (np.array(t)) what you keep.
        """

    def get_output(self, index_or_name: object) -> Tensor: ...

    @property
    def name(self) -> str: ...

    @property
    def input_names(self) -> list[str]: ...

    @property
    def output_names(self) -> list[str]: ...

    def get_tensor(self, name: str) -> TensorInfo: ...

    def get_input_tensor(self, index: int) -> TensorInfo: ...

    def get_output_tensor(self, index: int) -> TensorInfo: ...

    def set_profiling(self, enabled: bool = True, event_buffer_size: int = 0) -> None:
        """
        Records every later run() (a fresh buffer each call; False stops). Extension to the reference API.
        """

    def get_profile_durations(self) -> ProfileDurations: ...

    def get_layer_durations(self) -> list[LayerDuration]: ...

    def __repr__(self) -> str: ...

class ModelGroup:
    """
    Models that never run concurrently, sharing one thread pool and one Exclusive scheduler.
    """

    def add(self, path: object, devices: object | None = None, strict: bool = False, memory_optimization: bool = True, intermediate_save_path: str | None = None, passphrase: str | None = None, threads: int = 0, resizable_capacities: object | None = None, indexed_intermediate_save: bool = False, compute_precision: str = 'float32') -> GroupMember:
        """
        Loads a model (a path, or the bytes of an ONNX file) as a member. InvalidStateError once the group is sealed (a member has run).
        """

    @property
    def size(self) -> int: ...

    @property
    def sealed(self) -> bool: ...

    def __len__(self) -> int: ...

    def __repr__(self) -> str: ...

def create_model_group(cores: object | None = None, spin_iterations: int = 1000, spin_yield_iterations: int = 0, disable_denormals: bool = True, enable_work_stealing: bool = True) -> ModelGroup:
    """
    A group whose members share one thread pool (these are its knobs; its size is the largest member's threads) and one Exclusive scheduler.
    """

class RemoteModel:
    """
    A model loaded on an optimium-remote-server. The server reuses one request for every infer(), so preserved (KV-cache) tensors keep their state between calls.
    """

    @property
    def name(self) -> str: ...

    @property
    def input_names(self) -> list[str]: ...

    @property
    def output_names(self) -> list[str]: ...

    @property
    def input_tensor_infos(self) -> list[TensorInfo]: ...

    @property
    def output_tensor_infos(self) -> list[TensorInfo]: ...

    @property
    def tensor_infos(self) -> list[TensorInfo]: ...

    @property
    def operations(self) -> list[OpInfo]: ...

    @property
    def is_dynamic(self) -> bool: ...

    def get_tensor_info(self, name: str) -> TensorInfo: ...

    def infer(self, inputs: object) -> None:
        """
        Starts one run on the server (asynchronous: call wait()). Inputs: a list in input order or a dict by name, of numpy arrays or rt.Tensor.
        """

    def profile(self, inputs: object, repeat: int = 1, warmup: int = 0, warmup_time: int = 0, stop_threshold: int = 0, check_period: int = 0, event_buffer_size: int = 0) -> None:
        """
        Starts profiling on the server (asynchronous: call wait()); times in microseconds.
        """

    def wait(self, timeout: int = 0) -> bool:
        """
        Waits for the run in progress (integer microseconds, 0 = indefinitely); False on timeout. Raises the run's error.
        """

    def cancel(self) -> None: ...

    def get_output(self, index: int) -> Tensor:
        """A copy of an output of the last run, fetched from the server."""

    def get_tensor(self, name: str) -> Tensor:
        """A copy of any tensor of the last run by name, fetched from the server."""

    def set_tensor(self, name: str, value: object) -> None:
        """
        Writes a tensor of the server's request by name: an input, or a preserved/intermediate tensor (seeds or updates a KV cache between runs).
        """

    def get_profile_events(self) -> list[ProfileEvent]: ...

    def get_profile_durations(self) -> ProfileDurations: ...

    def is_saved_tensor(self, tensor_name: str) -> bool: ...

    def infer_shape(self, output_name: str, input_shapes: object) -> TensorShape: ...

    def get_attribute(self, key: str) -> object: ...

    def has_attribute(self, key: str) -> bool: ...

    @property
    def attribute_keys(self) -> list[str]: ...

    def __repr__(self) -> str: ...

class RemoteGroupMember:
    """
    A member of a model group on the server: run() is a blocking round trip.
    """

    def run(self, inputs: object) -> list:
        """
        Runs the member on the server (blocking) and returns its outputs (rt.Tensor copies) in output order.
        """

    @property
    def name(self) -> str: ...

    @property
    def input_names(self) -> list[str]: ...

    @property
    def input_tensor_infos(self) -> list[TensorInfo]: ...

    @property
    def output_tensor_infos(self) -> list[TensorInfo]: ...

    def __repr__(self) -> str: ...

class RemoteModelGroup:
    """
    A model group owned by the server: its members share one server-side pool.
    """

    def add(self, path: object, devices: object | None = None, strict: bool = False, memory_optimization: bool = True, intermediate_save_path: str | None = None, passphrase: str | None = None, threads: int = 0, resizable_capacities: object | None = None, compute_precision: str = 'float32') -> RemoteGroupMember:
        """
        Uploads the LOCAL model at path (an .onnx file or a model folder) and adds it to the group.
        """

    @property
    def size(self) -> int: ...

    def __len__(self) -> int: ...

    def __repr__(self) -> str: ...

class RemoteSession:
    """One connection to an optimium-remote-server."""

    @property
    def host_info(self) -> HostInfo: ...

    def load_model(self, path: object, devices: object | None = None, strict: bool = False, memory_optimization: bool = True, disable_denormals: bool = True, intermediate_save_path: str | None = None, passphrase: str | None = None, threads: int = 0, cores: object | None = None, scheduler_type: SchedulerType = SchedulerType.AUTO, spin_iterations: int = 1000, spin_yield_iterations: int = 0, enable_work_stealing: bool = True, resizable_capacities: object | None = None, compute_precision: str = 'float32') -> RemoteModel:
        """
        Loads the model at path ON THE SERVER (resolved inside the server's workspace folder).
        """

    def create_model_group(self, cores: object | None = None, spin_iterations: int = 1000, spin_yield_iterations: int = 0, disable_denormals: bool = True, enable_work_stealing: bool = True) -> RemoteModelGroup: ...

    def close(self) -> None: ...

    def __enter__(self) -> object: ...

    def __exit__(self, arg0: object, arg1: object, arg2: object, /) -> None: ...

    def __repr__(self) -> str: ...

def connect(host: str, port: int = 32264, enable_secure_connection: bool = False, enable_compression: bool = False, ca_file: str | None = None, server_name: str | None = None, access_token: str | None = None, connect_timeout_ms: int = 10000) -> RemoteSession:
    """
    Connects to optimium-remote-server. NetworkError when it cannot connect (or TLS fails), RemoteError when the server refuses the session (access token, protocol version).
    """
