/* An extension that registers wrongly, one way per OPTIMIUM_TEST_BAD_BACKEND (read at each init):
 *   v1          built against backend API version 1 (the layout before tensor struct sizes)
 *   future      built against a later version whose OptRtBackend is larger than ours
 *   silent      refuses the host without reporting any version
 *   capability  reports a capability kind the runtime does not know
 *   capfail     fails to report its capability
 *   device      claims a device kind outside DeviceKind
 *   ok          registers correctly (platform Hexagon, HexagonCapability v73 with HVX)
 * tests/backends/ExtensionTest.cpp loads it to check each refusal is a clear ExtensionError. */
#include <Optimium/Runtime/Extension/Backend.h>

#include <stdlib.h>
#include <string.h>

static int32_t bad_supports(void *state, const OptRtNode *node) {
  (void)state;
  (void)node;
  return 0;
}
static int32_t bad_create(void *state, const OptRtNode *node, void **kernel, char *error, size_t error_size) {
  (void)state;
  (void)node;
  (void)kernel;
  (void)error;
  (void)error_size;
  return OPT_RT_ERROR_NOT_IMPLEMENTED;
}
static int32_t bad_run(void *state, void *kernel, const OptRtTensor *inputs, uint32_t num_inputs,
                       const OptRtTensor *outputs, uint32_t num_outputs, const OptRtExecContext *ctx, char *error,
                       size_t error_size) {
  (void)state, (void)kernel, (void)inputs, (void)num_inputs, (void)outputs, (void)num_outputs, (void)ctx;
  (void)error, (void)error_size;
  return OPT_RT_ERROR_NOT_IMPLEMENTED;
}
static int32_t unknown_capability(void *state, OptRtCapability *c) {
  (void)state;
  c->kind = 99;
  return OPT_RT_OK;
}
static int32_t failing_capability(void *state, OptRtCapability *c) {
  (void)state;
  (void)c;
  return OPT_RT_ERROR_DEVICE;
}
static int32_t hexagon_capability(void *state, OptRtCapability *c) {
  (void)state;
  c->kind = OPT_RT_CAPABILITY_HEXAGON;
  c->version_major = 73;
  c->features = OPT_RT_HEXAGON_HVX;
  return OPT_RT_OK;
}

int32_t optimium_rt_backend_init(const OptRtHostApi *host, OptRtBackend *backend) {
  const char *mode = getenv("OPTIMIUM_TEST_BAD_BACKEND");
  (void)host;
  if (!mode)
    mode = "";
  if (strcmp(mode, "silent") == 0)
    return OPT_RT_ERROR_INVALID_ARGUMENT;
  if (strcmp(mode, "future") == 0) {
    /* A later header's larger struct: the host's storage must take it. */
    memset(backend, 0x5a, 600);
    backend->struct_size = 600;
    backend->api_version = OPTIMIUM_RT_BACKEND_API_VERSION + 1;
    return OPT_RT_OK;
  }
  memset(backend, 0, sizeof(*backend));
  backend->struct_size = sizeof(OptRtBackend);
  backend->api_version = OPTIMIUM_RT_BACKEND_API_VERSION;
  backend->name = "bad";
  backend->platform = OPT_RT_PLATFORM_HEXAGON;
  backend->device_kind = OPT_RT_DEVICE_HEXAGON;
  backend->supports_node = bad_supports;
  backend->create_kernel = bad_create;
  backend->run_kernel = bad_run;
  if (strcmp(mode, "v1") == 0) {
    backend->api_version = 1;
    backend->struct_size = (uint32_t)offsetof(OptRtBackend, get_capability); /* version 1's size */
  } else if (strcmp(mode, "capability") == 0) {
    backend->get_capability = unknown_capability;
  } else if (strcmp(mode, "capfail") == 0) {
    backend->get_capability = failing_capability;
  } else if (strcmp(mode, "device") == 0) {
    backend->device_kind = 200;
  } else {
    backend->get_capability = hexagon_capability;
  }
  return OPT_RT_OK;
}
