// The pieces of the optimium.runtime._core extension that its translation units share: the
// Python-side wrappers (PyTensor), the conversions several areas need (shapes, buffers, exceptions),
// and one bind_xxx(m) per area, called in order by module.cpp. Lifetime rules: see module.cpp.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <exception>
#include <functional>
#include <map>
#include <sstream>
#include <string>

#include "Optimium/Runtime.h"
#include "Optimium/Runtime/Utils/StreamHelper.h"

namespace optimium {
namespace python {

namespace nb = nanobind;
namespace rt = optimium::runtime;

/// Set by the package's atexit hook: callbacks from worker threads stop touching Python.
extern std::atomic<bool> Finalizing;

template <typename T> std::string streamed(const T &V) {
  std::ostringstream S;
  S << V;
  return S.str();
}

// ---- exceptions (Exceptions.cpp)
/// The Python exception object for a C++ exception (None for a null pointer); for callbacks.
nb::object exceptionObject(const std::exception_ptr &P);

// ---- element types and tensors (Tensors.cpp)
size_t elementSize(rt::ElementType T);
/// The float8 / float4 / int4 / int2 types, which numpy sees as their uint8 storage.
bool isLowPrecision(rt::ElementType T);
/// The ElementType of a buffer-protocol format string ("<f", "=i", "?", ...); Undefined if none.
rt::ElementType typeFromFormat(const char *Fmt, Py_ssize_t ItemSize);
/// numpy's name of an element type ("float32", "bfloat16", ...), for messages.
const char *numpyName(rt::ElementType T);

struct PyTensor {
  rt::Tensor T;
  nb::object Owner; ///< keeps user memory (a numpy array, a request's inputs) alive
  /// to_numpy() returns a writable view of T's memory instead of a copy (the `new` tensor of a
  /// resize-migration callback, which the callback fills in place).
  bool NumpyView = false;
};

/// ValueError "<What>: the tensor is empty or released" when P holds no tensor.
void requireValid(const PyTensor &P, const char *What);
/// Wraps (copy=false) or copies (copy=true) an object supporting the buffer protocol.
PyTensor tensorFromBuffer(nb::handle Obj, rt::ElementType Type, bool Copy, const std::string &What);

// ---- devices (Devices.cpp)
/// A HostInfo that owns its strings and devices (the C++ one points into runtime-owned storage).
struct PyHostInfo {
  int ID = 0;
  std::string Name;
  rt::DeviceKind Architecture = rt::DeviceKind::Unspecified;
  rt::OSKind OS = rt::OSKind::Linux;
  std::vector<rt::DeviceID> Devices;
  std::string Text;
};
PyHostInfo hostInfo(const rt::HostInfo &H);

// ---- shapes and attributes (Shapes.cpp)
/// A dimension from an int, a str (symbol) or an Expr; TypeError otherwise.
rt::Expr toExpr(nb::handle H);
/// A shape from a TensorShape, one dimension or an iterable of dimensions.
rt::TensorShape toShape(nb::handle H);
/// An int for a constant dimension, else the Expr.
nb::object exprValue(const rt::Expr &E);
/// A model or op attribute as a Python value (int, float, bool, str, list, dict or None).
nb::object attributeToPython(const rt::Attribute &A);

// ---- inputs of infer() / profile() / GroupMember.run() (Model.cpp)
/// One input: an rt.Tensor as is, or a numpy array (zero-copy when contiguous, else copied), checked
/// against the input's element type; Keep collects what must stay alive while the run reads it.
rt::Tensor convertInput(const rt::TensorInfo &Info, size_t Index, nb::handle H, std::vector<nb::object> &Keep);
struct ConvertedInputs {
  bool ByName = false;
  std::vector<rt::Tensor> List;           ///< in input order (a list was given)
  std::map<std::string, rt::Tensor> Map;  ///< by name (a dict was given)
  std::vector<nb::object> Keep;
};
/// A list in input order or a dict by name; What ("infer", "run", ...) starts every message.
ConvertedInputs convertInputs(const char *What, const std::string &ModelName, rt::ArrayRef<rt::StringRef> Names,
                              const std::function<const rt::TensorInfo &(size_t)> &InfoOf, nb::handle Inputs);

// ---- options (Model.cpp): the per-model and the pool keywords of load_model() / group.add() /
// create_model_group(). What starts the messages.
void setPerModelOptions(rt::PerModelOptions &O, const char *What, nb::object Devices, bool Strict, bool MemOpt,
                        std::optional<std::string> SavePath, std::optional<std::string> Passphrase, int Threads,
                        nb::object Capacities);
/// compute_precision: "float32" (also "fp32", "f32") or "bfloat16" (also "bf16"); ValueError otherwise.
rt::ComputePrecision computePrecision(const std::string &Name);
void setPoolTuning(rt::PoolTuning &O, nb::object Cores, int Spin, int SpinYield, bool Denormals, bool Stealing);
/// Every keyword of load_model() (also session.load_model()).
rt::ModelLoadOptions loadOptions(nb::object Devices, bool Strict, bool MemOpt, bool Denormals,
                                 std::optional<std::string> SavePath, std::optional<std::string> Passphrase,
                                 int Threads, nb::object Cores, rt::SchedulerType Sched, int Spin, int SpinYield,
                                 bool Stealing, nb::object Capacities);
/// The keywords of profile() (request.profile(), RemoteModel.profile()): times in integer
/// microseconds, event_buffer_size 0 = the default (ValueError when negative).
rt::ProfileOptions profileOptions(int Repeat, int WarmUp, long long WarmUpTime, long long StopThreshold,
                                  int CheckPeriod, long long EventBufferSize);
/// Names as Python strings.
std::vector<std::string> names(rt::ArrayRef<rt::StringRef> R);

// ---- one function per area, in the order module.cpp calls them
void bind_exceptions(nb::module_ &m);
void bind_tensors(nb::module_ &m);
void bind_devices(nb::module_ &m);
void bind_runtime(nb::module_ &m);
void bind_shapes(nb::module_ &m);
void bind_profiling(nb::module_ &m);
void bind_model(nb::module_ &m);
void bind_model_group(nb::module_ &m);
void bind_remote(nb::module_ &m);

} // namespace python
} // namespace optimium
