// optimium.runtime._core: the nanobind extension module. The Python package (optimium/runtime/*.py)
// builds the documented API on top of it (rt.tensor's creation modes, dtype helpers, the runner).
//
// Lifetime rules (no segfault from Python, ever):
//  - Model / InferRequest / Tensor are reference-counted C++ handles; Python objects hold copies.
//  - A Tensor wrapping user memory (rt.tensor(arr, copy=False), numpy inputs of infer()) keeps the
//    owning Python object alive in PyTensor::Owner; a request keeps its inputs alive until the next
//    infer() or its own destruction, and its destructor waits for a run in flight (GIL released).
//  - Callbacks run on worker threads: they take the GIL, and the request clears its Python callable
//    (under the GIL) before it goes away.
//
// The bindings are split by area (Bindings.h): exceptions, tensors and element types, devices,
// runtime setup (version, logging, config), shapes and tensor metadata, profiling, model and request,
// model groups.
#include "Bindings.h"

namespace optimium {
namespace python {

std::atomic<bool> Finalizing{false};

} // namespace python
} // namespace optimium

namespace nb = nanobind;
namespace py = optimium::python;

NB_MODULE(_core, m) {
  nb::set_leak_warnings(false); // objects alive at interpreter exit are fine (reference counted in C++)
  m.doc() = "Optimium Runtime native bindings (use the optimium.runtime package)";

  py::bind_exceptions(m);
  m.def("_set_finalizing", [] { py::Finalizing.store(true); });
  // Enums and classes are registered before the functions whose default arguments use them.
  py::bind_tensors(m);
  py::bind_devices(m);
  py::bind_runtime(m);
  py::bind_shapes(m);
  py::bind_profiling(m);
  py::bind_model(m);
  py::bind_model_group(m);
  py::bind_remote(m);
}
