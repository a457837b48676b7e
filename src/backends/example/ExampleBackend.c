/* The example extension backend: the skeleton a backend author copies (as IREE's "null" driver).
 * It is a real, loadable liboptimium-runtime-<name>.so speaking only the C ABI of
 * <Optimium/Runtime/Extension/Backend.h>. It claims a simulated NPU device (Synaptics/SynapNPU),
 * reports its capability, and implements float32 Relu and same-shape Add, splitting work through
 * the runtime's pool. The test suite loads it to prove placement, execution, capabilities and
 * errors across the .so boundary. */
#include <Optimium/Runtime/Extension/Backend.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { OP_RELU, OP_ADD } ExampleOp;

typedef struct {
  ExampleOp op;
} ExampleKernel;

typedef struct {
  const OptRtHostApi *host;
  unsigned long kernels_run; /* exposed through optimium_example_backend_runs() for tests */
} ExampleState;

static ExampleState g_state;

unsigned long optimium_example_backend_runs(void) { return g_state.kernels_run; }

/* Arrays of tensor structs are read with OPT_RT_TENSOR_DESC_AT / OPT_RT_TENSOR_AT: their stride is
 * the host's struct_size, which a later runtime may grow. */
static int all_f32(const OptRtTensorDesc *t, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i)
    if (!OPT_RT_TENSOR_DESC_AT(t, i)->present || OPT_RT_TENSOR_DESC_AT(t, i)->type != OPT_RT_ELEMENT_F32)
      return 0;
  return 1;
}

static int32_t example_supports(void *state, const OptRtNode *node) {
  (void)state;
  if (node->domain[0] != '\0')
    return 0;
  if (strcmp(node->op_type, "Relu") == 0)
    return node->num_inputs == 1 && all_f32(node->inputs, 1);
  if (strcmp(node->op_type, "Add") == 0) {
    if (node->num_inputs != 2 || !all_f32(node->inputs, 2))
      return 0;
    const OptRtTensorDesc *a = OPT_RT_TENSOR_DESC_AT(node->inputs, 0), *b = OPT_RT_TENSOR_DESC_AT(node->inputs, 1);
    if (a->rank != b->rank)
      return 0;
    for (int32_t d = 0; d < a->rank; ++d)
      if (a->dims[d] != b->dims[d] || a->dims[d] < 0)
        return 0; /* no broadcasting, static shapes only */
    return 1;
  }
  return 0;
}

static int32_t example_create(void *state, const OptRtNode *node, void **kernel, char *error, size_t error_size) {
  (void)state;
  ExampleKernel *k = (ExampleKernel *)malloc(sizeof(ExampleKernel));
  if (!k) {
    snprintf(error, error_size, "example backend: out of memory creating %s", node->name);
    return OPT_RT_ERROR_OUT_OF_RESOURCE;
  }
  k->op = strcmp(node->op_type, "Relu") == 0 ? OP_RELU : OP_ADD;
  *kernel = k;
  return OPT_RT_OK;
}

typedef struct {
  ExampleOp op;
  const float *a, *b;
  float *out;
} ExampleRange;

static void example_range(void *user, size_t begin, size_t end) {
  const ExampleRange *r = (const ExampleRange *)user;
  for (size_t i = begin; i < end; ++i)
    r->out[i] = r->op == OP_RELU ? (r->a[i] > 0.0f ? r->a[i] : 0.0f) : r->a[i] + r->b[i];
}

static int32_t example_run(void *state, void *kernel, const OptRtTensor *inputs, uint32_t num_inputs,
                           const OptRtTensor *outputs, uint32_t num_outputs, const OptRtExecContext *ctx, char *error,
                           size_t error_size) {
  ExampleState *s = (ExampleState *)state;
  const ExampleKernel *k = (const ExampleKernel *)kernel;
  if (num_outputs != 1 || num_inputs < 1) {
    snprintf(error, error_size, "example backend: unexpected arity");
    return OPT_RT_ERROR_INFER;
  }
  const OptRtTensor *out = OPT_RT_TENSOR_AT(outputs, 0);
  size_t n = 1;
  for (int32_t d = 0; d < out->rank; ++d)
    n *= (size_t)out->dims[d];
  ExampleRange r = {k->op, (const float *)OPT_RT_TENSOR_AT(inputs, 0)->data,
                    num_inputs > 1 ? (const float *)OPT_RT_TENSOR_AT(inputs, 1)->data : NULL, (float *)out->data};
  if (ctx && ctx->parallel_for)
    ctx->parallel_for(ctx->pool, n, 4096, example_range, &r);
  else
    example_range(&r, 0, n);
  __atomic_add_fetch(&s->kernels_run, 1, __ATOMIC_RELAXED);
  return OPT_RT_OK;
}

static void example_destroy_kernel(void *state, void *kernel) {
  (void)state;
  free(kernel);
}

/* Nothing to free: the state is static. (init runs again when the library is loaded a second
 * time, e.g. a refused duplicate, and destroy follows for that registration only.) */
static void example_destroy(void *state) { (void)state; }

/* A real driver queries its hardware. These values are made up for the example (the Torq NPU
 * pairs its matrix engine with RISC-V vector cores); they show how a capability crosses the ABI. */
static int32_t example_capability(void *state, OptRtCapability *capability) {
  (void)state;
  if (capability->struct_size < sizeof(OptRtCapability))
    return OPT_RT_ERROR_INVALID_ARGUMENT; /* a host older than this header: nothing older exists */
  capability->kind = OPT_RT_CAPABILITY_RISCV;
  capability->features = OPT_RT_RISCV_VECTOR | OPT_RT_RISCV_FLOAT16;
  capability->vector_length = 256;
  return OPT_RT_OK;
}

int32_t optimium_rt_backend_init(const OptRtHostApi *host, OptRtBackend *backend) {
  memset(backend, 0, sizeof(*backend));
  backend->struct_size = sizeof(OptRtBackend);
  /* Reported first, also when refusing the host below: the runtime names both versions. */
  backend->api_version = OPTIMIUM_RT_BACKEND_API_VERSION;
  if (!host || host->api_version != OPTIMIUM_RT_BACKEND_API_VERSION)
    return OPT_RT_ERROR_INVALID_ARGUMENT;
  g_state.host = host;
  backend->name = "example";
  backend->platform = OPT_RT_PLATFORM_SYNAPTICS;
  backend->device_kind = OPT_RT_DEVICE_SYNAP_NPU;
  backend->device_index = 0;
  backend->state = &g_state;
  backend->supports_node = example_supports;
  backend->create_kernel = example_create;
  backend->run_kernel = example_run;
  backend->destroy_kernel = example_destroy_kernel;
  backend->destroy = example_destroy;
  backend->get_capability = example_capability;
  if (host->log)
    host->log(2, "example backend registered");
  return OPT_RT_OK;
}
