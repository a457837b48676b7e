/* The C ABI between the runtime and a backend (the built-in native CPU backend and extension
 * libraries liboptimium-runtime-<backend>.so alike). Plain C so it crosses .so boundaries safely:
 * every struct starts with its size, the backend reports the API version it was built against,
 * and one entry symbol is exported: optimium_rt_backend_init.
 *
 * Flow: the runtime places each node on a backend that supports it (supports_node), creates a
 * kernel once at load (create_kernel: validate, pack constant weights), then calls run_kernel for
 * every run with concrete shapes and bound pointers. run_kernel may be called concurrently from
 * several requests with the same kernel. Intra-op parallelism goes through the runtime's thread
 * pool (OptRtExecContext::parallel_for); a backend must not start threads of its own. */
#ifndef OPTIMIUM_RUNTIME_EXTENSION_BACKEND_H
#define OPTIMIUM_RUNTIME_EXTENSION_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OPTIMIUM_RT_BACKEND_API_VERSION 1u

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

/* Element types use the numbering of optimium::runtime::ElementType. */
typedef struct OptRtTensorDesc {
  int32_t present;          /* 0 for an omitted optional input/output */
  int32_t type;             /* ElementType */
  int32_t rank;
  const int64_t *dims;      /* -1 for a dimension unknown at load time */
  const void *const_data;   /* non-null for constants (weights) */
  uint64_t const_bytes;
} OptRtTensorDesc;

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
} OptRtNode;

/* Sequence and optional values (ONNX sequence(tensor), optional(...)) reach only the built-in native
   backend (extension backends are never offered nodes that read or write them): their type carries the
   value kind in the bits above OPT_RT_VALUE_KIND_SHIFT, the element type below, and data points to a
   host-owned container object. A plain tensor has kind 0, so existing backends see no change. */
#define OPT_RT_VALUE_KIND_SHIFT 16

typedef struct OptRtTensor {
  int32_t type;
  int32_t rank;
  const int64_t *dims;
  void *data; /* null for an omitted optional input */
} OptRtTensor;

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
} OptRtHostApi;

typedef struct OptRtBackend {
  uint32_t struct_size;
  uint32_t api_version; /* OPTIMIUM_RT_BACKEND_API_VERSION the backend was built against */
  const char *name;     /* e.g. "native", "xnnpack" */
  int32_t platform;     /* PlatformKind */
  int32_t device_kind;  /* DeviceKind */
  uint32_t device_index;
  void *state;
  int32_t (*supports_node)(void *state, const OptRtNode *node);
  int32_t (*create_kernel)(void *state, const OptRtNode *node, void **kernel, char *error, size_t error_size);
  int32_t (*run_kernel)(void *state, void *kernel, const OptRtTensor *inputs, uint32_t num_inputs,
                        const OptRtTensor *outputs, uint32_t num_outputs, const OptRtExecContext *ctx,
                        char *error, size_t error_size);
  void (*destroy_kernel)(void *state, void *kernel);
  void (*destroy)(void *state);
} OptRtBackend;

/* The one symbol an extension library exports. Fills *backend; returns OPT_RT_OK on success. */
typedef int32_t (*OptRtBackendInitFn)(const OptRtHostApi *host, OptRtBackend *backend);
#define OPTIMIUM_RT_BACKEND_INIT_SYMBOL "optimium_rt_backend_init"

#ifdef __cplusplus
}
#endif

#endif /* OPTIMIUM_RUNTIME_EXTENSION_BACKEND_H */
