/* The C ABI between the runtime and a backend (the built-in native CPU backend and extension
 * libraries liboptimium-runtime-<backend>.so alike). Plain C so it crosses .so boundaries safely:
 * every struct starts with its size, the backend reports the API version it was built against,
 * and one entry symbol is exported: optimium_rt_backend_init.
 *
 * Flow: the runtime places each node on a backend that supports it (supports_node), creates a
 * kernel once at load (create_kernel: validate, pack constant weights), then calls run_kernel for
 * every run with concrete shapes and bound pointers. run_kernel may be called concurrently from
 * several requests with the same kernel. Intra-op parallelism goes through the runtime's thread
 * pool (OptRtExecContext::parallel_for); a backend must not start threads of its own.
 *
 * Versions: the runtime accepts exactly OPTIMIUM_RT_BACKEND_API_VERSION and refuses a library built
 * against another one with an ExtensionError naming both. A change that moves or resizes a field
 * bumps the version; a field appended to a size-prefixed struct does not (readers check
 * struct_size first). History:
 *   1  first release.
 *   2  OptRtTensorDesc and OptRtTensor start with struct_size; OptRtBackend gains get_capability;
 *      C constants for element types, platforms, device kinds and capabilities. Appended since
 *      (no bump: read only where struct_size covers them): OptRtHostApi::get_attr_name; OptRtBackend's
 *      flags, device memory (allocate, release, copy_to_device, copy_from_device) and get_property;
 *      the flag OPT_RT_BACKEND_DEVICE_ADDRESSES (device values planned in one allocation);
 *      OptRtHostApi's native_* kernel callbacks (after get_attr_name); OptRtNode::weights_cache
 *      (the packed-weights cache, OptRtWeightsCache; last field of OptRtNode). */
#ifndef OPTIMIUM_RUNTIME_EXTENSION_BACKEND_H
#define OPTIMIUM_RUNTIME_EXTENSION_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OPTIMIUM_RT_BACKEND_API_VERSION 2u

/* Element types: the numbering of optimium::runtime::ElementType. */
enum {
  OPT_RT_ELEMENT_UNDEFINED = 0,
  OPT_RT_ELEMENT_BOOL = 1,
  OPT_RT_ELEMENT_I8 = 2,
  OPT_RT_ELEMENT_I16 = 3,
  OPT_RT_ELEMENT_I32 = 4,
  OPT_RT_ELEMENT_I64 = 5,
  OPT_RT_ELEMENT_U8 = 6,
  OPT_RT_ELEMENT_U16 = 7,
  OPT_RT_ELEMENT_U32 = 8,
  OPT_RT_ELEMENT_U64 = 9,
  OPT_RT_ELEMENT_F16 = 10,
  OPT_RT_ELEMENT_BF16 = 11,
  OPT_RT_ELEMENT_F32 = 12,
  OPT_RT_ELEMENT_F64 = 13,
  OPT_RT_ELEMENT_STRING = 14,
  OPT_RT_ELEMENT_F8E4M3FN = 15,
  OPT_RT_ELEMENT_F8E4M3FNUZ = 16,
  OPT_RT_ELEMENT_F8E5M2 = 17,
  OPT_RT_ELEMENT_F8E5M2FNUZ = 18,
  OPT_RT_ELEMENT_F4E2M1 = 19,
  OPT_RT_ELEMENT_I4 = 20,
  OPT_RT_ELEMENT_U4 = 21,
  OPT_RT_ELEMENT_I2 = 22,
  OPT_RT_ELEMENT_U2 = 23,
  OPT_RT_ELEMENT_F8E8M0 = 24
};

/* Platforms: the numbering of optimium::runtime::PlatformKind. */
enum {
  OPT_RT_PLATFORM_NATIVE = 0,
  OPT_RT_PLATFORM_XNNPACK = 1,
  OPT_RT_PLATFORM_CUDA = 2,
  OPT_RT_PLATFORM_VULKAN = 3,
  OPT_RT_PLATFORM_OPENCL = 4,
  OPT_RT_PLATFORM_SNPE = 5,
  OPT_RT_PLATFORM_QNN = 6,
  OPT_RT_PLATFORM_SYNAPTICS = 7,
  OPT_RT_PLATFORM_HEXAGON = 8
};

/* Device kinds: the numbering of optimium::runtime::DeviceKind. */
enum {
  OPT_RT_DEVICE_UNSPECIFIED = 0,
  OPT_RT_DEVICE_NEUTRAL = 1,
  OPT_RT_DEVICE_X86 = 2,
  OPT_RT_DEVICE_X64 = 3,
  OPT_RT_DEVICE_ARM = 4,
  OPT_RT_DEVICE_ARM64 = 5,
  OPT_RT_DEVICE_RISCV32 = 6,
  OPT_RT_DEVICE_RISCV64 = 7,
  OPT_RT_DEVICE_ANY_CPU = 8,
  OPT_RT_DEVICE_NVIDIA = 9,
  OPT_RT_DEVICE_AMDGPU = 10,
  OPT_RT_DEVICE_INTEL_GPU = 11,
  OPT_RT_DEVICE_MALI = 12,
  OPT_RT_DEVICE_ADRENO = 13,
  OPT_RT_DEVICE_ANY_GPU = 14,
  OPT_RT_DEVICE_HEXAGON = 15,
  OPT_RT_DEVICE_MYRIAD = 16,
  OPT_RT_DEVICE_ARA1 = 17,
  OPT_RT_DEVICE_GOOGLE_TPU = 18,
  OPT_RT_DEVICE_CV22 = 19,
  OPT_RT_DEVICE_SYNAP_NPU = 20,
  OPT_RT_DEVICE_ANY_NPU = 21
};

/* Capability kinds: the numbering of optimium::runtime::CapabilityKind. */
enum {
  OPT_RT_CAPABILITY_VOID = 0,
  OPT_RT_CAPABILITY_X86 = 1,
  OPT_RT_CAPABILITY_ARM = 2,
  OPT_RT_CAPABILITY_SPIRV = 3,
  OPT_RT_CAPABILITY_CUDA = 4,
  OPT_RT_CAPABILITY_RISCV = 5,
  OPT_RT_CAPABILITY_HEXAGON = 6
};

/* OptRtCapability::features bits, per kind (the fields of the matching Capability class). */
#define OPT_RT_X86_SSE2 (1ull << 0)
#define OPT_RT_X86_SSE3 (1ull << 1)
#define OPT_RT_X86_SSSE3 (1ull << 2)
#define OPT_RT_X86_SSE41 (1ull << 3)
#define OPT_RT_X86_SSE42 (1ull << 4)
#define OPT_RT_X86_AVX (1ull << 5)
#define OPT_RT_X86_AVX2 (1ull << 6)
#define OPT_RT_X86_FMA (1ull << 7)
#define OPT_RT_X86_F16C (1ull << 8)
#define OPT_RT_X86_AVX512F (1ull << 9)
#define OPT_RT_X86_AVX512BW (1ull << 10)
#define OPT_RT_X86_AVX512DQ (1ull << 11)
#define OPT_RT_X86_AVX512VL (1ull << 12)
#define OPT_RT_X86_AVX512VNNI (1ull << 13)
#define OPT_RT_X86_AVX512BF16 (1ull << 14)
#define OPT_RT_X86_AVX512FP16 (1ull << 15)
#define OPT_RT_X86_AVXVNNI (1ull << 16)
#define OPT_RT_X86_AMX_TILE (1ull << 17)
#define OPT_RT_X86_AMX_INT8 (1ull << 18)
#define OPT_RT_X86_AMX_BF16 (1ull << 19)

#define OPT_RT_ARM_NEON (1ull << 0)
#define OPT_RT_ARM_FP16 (1ull << 1)
#define OPT_RT_ARM_DOTPROD (1ull << 2)
#define OPT_RT_ARM_I8MM (1ull << 3)
#define OPT_RT_ARM_BF16 (1ull << 4)
#define OPT_RT_ARM_SVE (1ull << 5)
#define OPT_RT_ARM_SVE2 (1ull << 6)

#define OPT_RT_SPIRV_FLOAT16 (1ull << 0)
#define OPT_RT_SPIRV_INT8 (1ull << 1)

#define OPT_RT_RISCV_VECTOR (1ull << 0)
#define OPT_RT_RISCV_FLOAT16 (1ull << 1)

#define OPT_RT_HEXAGON_HVX (1ull << 0)

/* What a backend's device can do: get_capability fills it, and DeviceID::getCapability() /
 * getLocalInfo() report it as the matching Capability class. The host sets struct_size to the
 * size it knows and zeroes the rest; a backend writes only the fields that struct_size covers. */
typedef struct OptRtCapability {
  uint32_t struct_size;
  int32_t kind;           /* OPT_RT_CAPABILITY_* */
  uint64_t features;      /* OR of the kind's OPT_RT_<KIND>_* bits */
  uint32_t version_major; /* SPIR-V version, CUDA compute capability, Hexagon version (major only) */
  uint32_t version_minor;
  uint32_t vector_length; /* RISC-V: VLEN in bits */
  uint32_t reserved;      /* 0 */
} OptRtCapability;

/* Return codes: 0 = ok, otherwise one of these (they map to the public exception types). */
enum {
  OPT_RT_OK = 0,
  OPT_RT_ERROR_INVALID_ARGUMENT = 1,
  OPT_RT_ERROR_TYPE = 4,
  OPT_RT_ERROR_SHAPE = 5,
  OPT_RT_ERROR_DEVICE = 7,
  OPT_RT_ERROR_MODEL = 8,
  OPT_RT_ERROR_INFER = 10,
  OPT_RT_ERROR_OUT_OF_RESOURCE = 11,
  OPT_RT_ERROR_NOT_IMPLEMENTED = 17
};

/* Arrays of the size-prefixed tensor structs below are laid out with the host's struct size:
 * index them with OPT_RT_TENSOR_AT / OPT_RT_TENSOR_DESC_AT (the stride is the elements'
 * struct_size), so a backend built against this header still reads every element when a later
 * runtime appends fields. */
typedef struct OptRtTensorDesc {
  uint32_t struct_size;
  int32_t present;          /* 0 for an omitted optional input/output */
  int32_t type;             /* OPT_RT_ELEMENT_* */
  int32_t rank;
  const int64_t *dims;      /* -1 for a dimension unknown at load time */
  const void *const_data;   /* non-null for constants (weights) */
  uint64_t const_bytes;
} OptRtTensorDesc;

/* A packed-weights cache the host offers a backend per node at create_kernel (like XNNPACK's
 * weights cache): a factory that packs a constant input into a layout of its own first asks
 * lookup with a key naming the input, its kernel variant, the packing parameters and the CPU
 * feature level; a hit hands it bytes it borrows (64-byte aligned, read-only, valid as long as the
 * kernel) instead of packing; on a miss it packs as before and offers the result to store (the
 * host may copy it: optimium-compile records them into the compiled folder's packed.bin). Keys
 * are per node (the host scopes them by node and backend); the bytes are the backend's own
 * layout, opaque to the host: lookup passes the size the backend will read, and only an entry of
 * exactly that size is a hit (another size is a miss, so the host's hit/miss counts are exact).
 * Both return 1 for a hit / a stored entry, 0 otherwise. */
typedef struct OptRtWeightsCache {
  uint32_t struct_size;
  void *state;
  int32_t (*lookup)(void *state, const char *key, size_t key_size, uint64_t size, const void **data);
  int32_t (*store)(void *state, const char *key, size_t key_size, const void *data, uint64_t size);
} OptRtWeightsCache;

typedef struct OptRtNode {
  uint32_t struct_size;
  const char *name;
  const char *op_type;
  const char *domain; /* "" = ai.onnx */
  int32_t opset_version;
  uint32_t num_inputs;
  const OptRtTensorDesc *inputs;
  uint32_t num_outputs;
  const OptRtTensorDesc *outputs;
  const void *host_node; /* opaque: pass to OptRtHostApi attribute getters */
  /* Present when struct_size covers it; may be NULL (no cache: pack as usual). Valid during
   * create_kernel only; the bytes of a hit live as long as the model. */
  const OptRtWeightsCache *weights_cache;
} OptRtNode;

/* Sequence and optional values (ONNX sequence(tensor), optional(...)) reach only the built-in native
   backend (extension backends are never offered nodes that read or write them): their type carries the
   value kind in the bits above OPT_RT_VALUE_KIND_SHIFT, the element type below, and data points to a
   host-owned container object. A plain tensor has kind 0, so existing backends see no change. */
#define OPT_RT_VALUE_KIND_SHIFT 16

typedef struct OptRtTensor {
  uint32_t struct_size;
  int32_t type; /* OPT_RT_ELEMENT_* (plus the value kind above OPT_RT_VALUE_KIND_SHIFT) */
  int32_t rank;
  const int64_t *dims;
  void *data; /* null for an omitted optional input */
} OptRtTensor;

/* Element I of an array of OptRtTensor / OptRtTensorDesc (see the note above OptRtTensorDesc). */
#define OPT_RT_TENSOR_AT(array, i)                                                                     \
  ((const OptRtTensor *)((const char *)(array) + (size_t)(i) * (array)[0].struct_size))
#define OPT_RT_TENSOR_DESC_AT(array, i)                                                                \
  ((const OptRtTensorDesc *)((const char *)(array) + (size_t)(i) * (array)[0].struct_size))

typedef void (*OptRtRangeFn)(void *user, size_t begin, size_t end);

typedef struct OptRtExecContext {
  uint32_t struct_size;
  int32_t num_threads;
  void *pool;
  /* Calls fn on disjoint ranges covering [0, n) on the runtime's threads; returns when done. */
  void (*parallel_for)(void *pool, size_t n, size_t grain, OptRtRangeFn fn, void *user);
  /* Present when struct_size covers it (may be NULL). An output whose shape the runtime could not
   * know before the run (control flow) is passed with data == NULL and rank 0; the kernel
   * allocates it here once it knows the dims. Returns the buffer to write, or NULL on failure. */
  void *(*allocate_output)(void *request, uint32_t index, int32_t rank, const int64_t *dims);
  void *request;
  /* Present when struct_size covers it; NULL unless the run is profiled. A kernel that copies or
   * converts one of its tensors (to a device, to another precision) brackets the copy with
   * record_copy(profile, 1, is_output, index) and record_copy(profile, 0, is_output, index): the
   * profiler records them as CopyBegin / CopyEnd events of input (is_output 0) or output index. */
  void (*record_copy)(void *profile, int32_t begin, int32_t is_output, uint32_t index);
  void *profile;
} OptRtExecContext;

typedef struct OptRtHostApi {
  uint32_t struct_size;
  uint32_t api_version;
  /* Attribute getters: return 0 when found with the right kind, non-zero otherwise. */
  int32_t (*get_attr_int)(const void *host_node, const char *name, int64_t *out);
  int32_t (*get_attr_float)(const void *host_node, const char *name, float *out);
  int32_t (*get_attr_string)(const void *host_node, const char *name, const char **out, size_t *len);
  int32_t (*get_attr_ints)(const void *host_node, const char *name, const int64_t **out, size_t *count);
  int32_t (*get_attr_floats)(const void *host_node, const char *name, const float **out, size_t *count);
  /* level: 0 debug, 1 verbose, 2 info, 3 warning, 4 error */
  void (*log)(int32_t level, const char *message);
  /* Present when struct_size covers it. The name of the node's attribute number index (0-based,
   * in name order): returns 0 and sets *name while index is below the attribute count, non-zero
   * after. A backend lists them to refuse nodes carrying attributes it does not know (the fusion
   * passes write internal ones, named "optimium.*"). */
  int32_t (*get_attr_name)(const void *host_node, size_t index, const char **name);
  /* Present when struct_size covers them: the host's native CPU kernels, for a backend that
   * computes with them (the simulated accelerator, src/backends/sim/). They take the OptRtNode the
   * host passed to supports_node / create_kernel (its host_node carries what the native backend
   * needs) and run on whatever pointers the tensors hold, so they must be addressable by the CPU.
   * Same contracts as OptRtBackend's callbacks of the same names. */
  int32_t (*native_supports_node)(const OptRtNode *node);
  int32_t (*native_create_kernel)(const OptRtNode *node, void **kernel, char *error, size_t error_size);
  int32_t (*native_run_kernel)(void *kernel, const OptRtTensor *inputs, uint32_t num_inputs,
                               const OptRtTensor *outputs, uint32_t num_outputs, const OptRtExecContext *ctx,
                               char *error, size_t error_size);
  void (*native_destroy_kernel)(void *kernel);
} OptRtHostApi;

/* OptRtBackend::flags */
/* Placed only where ModelLoadOptions.Devices names the device (a simulator must not take nodes
 * from the CPU when no device was asked for). */
#define OPT_RT_BACKEND_EXPLICIT_ONLY (1u << 0)
/* The device has memory of its own: the data pointers run_kernel gets are buffers of allocate(),
 * which the host fills with copy_to_device and reads with copy_from_device (recorded as profiler
 * Copy events). A value produced and consumed on the device stays there; run_kernel never sees a
 * host pointer. allocate, release, copy_to_device and copy_from_device are then required. */
#define OPT_RT_BACKEND_DEVICE_MEMORY (1u << 1)
/* With OPT_RT_BACKEND_DEVICE_MEMORY: a buffer of allocate() is a device address range, so that
 * buffer + n (as a char pointer; n below its size, a multiple of 64) addresses its byte n wherever
 * a buffer is taken (run_kernel's tensors, copy_to_device, copy_from_device; never release). The
 * host then plans the device values of a run as it plans its own arena: one allocation per
 * request, each value at an offset from the liveness-based memory planner, so values whose
 * lifetimes do not overlap share bytes. Without it every device value is an allocation of its own. */
#define OPT_RT_BACKEND_DEVICE_ADDRESSES (1u << 2)

typedef struct OptRtBackend {
  uint32_t struct_size;
  /* OPTIMIUM_RT_BACKEND_API_VERSION the backend was built against. Set it first, also when init
   * refuses the host's api_version: the runtime's error then names both versions. */
  uint32_t api_version;
  const char *name;     /* e.g. "native", "xnnpack" */
  int32_t platform;     /* OPT_RT_PLATFORM_* */
  int32_t device_kind;  /* OPT_RT_DEVICE_* */
  uint32_t device_index;
  void *state;
  int32_t (*supports_node)(void *state, const OptRtNode *node);
  int32_t (*create_kernel)(void *state, const OptRtNode *node, void **kernel, char *error, size_t error_size);
  int32_t (*run_kernel)(void *state, void *kernel, const OptRtTensor *inputs, uint32_t num_inputs,
                        const OptRtTensor *outputs, uint32_t num_outputs, const OptRtExecContext *ctx,
                        char *error, size_t error_size);
  void (*destroy_kernel)(void *state, void *kernel);
  /* Called once when the runtime unloads the backend (finalize()), after every kernel it made
   * has been destroyed; the library is dlclose'd right after. */
  void (*destroy)(void *state);
  /* Optional (NULL: the device reports VoidCapability). Called once at registration with a
   * host-initialized *capability (see OptRtCapability); returns OPT_RT_OK, or an error code to
   * refuse the registration. */
  int32_t (*get_capability)(void *state, OptRtCapability *capability);
  /* Appended in version 2 (read where struct_size covers them; zero = absent). */
  uint32_t flags; /* OR of OPT_RT_BACKEND_* */
  /* Device memory (OPT_RT_BACKEND_DEVICE_MEMORY). allocate returns an opaque device buffer of at
   * least bytes (OPT_RT_ERROR_OUT_OF_RESOURCE with a message when the device memory is full);
   * release frees it; the copies move bytes between host memory and the start of a buffer (or an
   * address inside one, OPT_RT_BACKEND_DEVICE_ADDRESSES). All may be called concurrently. */
  int32_t (*allocate)(void *state, uint64_t bytes, void **buffer, char *error, size_t error_size);
  void (*release)(void *state, void *buffer);
  int32_t (*copy_to_device)(void *state, void *buffer, const void *host, uint64_t bytes, char *error,
                            size_t error_size);
  int32_t (*copy_from_device)(void *state, void *host, const void *buffer, uint64_t bytes, char *error,
                              size_t error_size);
  /* Optional: a property of the device as a string the backend keeps alive, NULL when it has
   * none. Keys the runtime reads at registration (DeviceID::getProperty):
   *   "hw_type"              the backend's name within its driver (optimium-run --hw_type)
   *   "inference_time_path"  a file holding the device's cumulative inference time in
   *                          microseconds (as the Torq NPU's sysfs counter)
   *   "memory"               a description of the device memory, e.g. its size
   * Any other key is asked anew at each getDeviceProperty() call (live values, e.g. the sim's
   * "arena_bytes_in_use"); the host copies the string at once. */
  const char *(*get_property)(void *state, const char *key);
} OptRtBackend;

/* The one symbol an extension library exports. Fills *backend; returns OPT_RT_OK on success.
 * *backend points to at least OPT_RT_BACKEND_STORAGE_BYTES zeroed bytes, so a library built
 * against a later header (a larger OptRtBackend) cannot write past it, and its api_version is
 * still read and refused with a clear error. */
typedef int32_t (*OptRtBackendInitFn)(const OptRtHostApi *host, OptRtBackend *backend);
#define OPT_RT_BACKEND_STORAGE_BYTES 1024u
#define OPTIMIUM_RT_BACKEND_INIT_SYMBOL "optimium_rt_backend_init"

#ifdef __cplusplus
}
#endif

#endif /* OPTIMIUM_RUNTIME_EXTENSION_BACKEND_H */
