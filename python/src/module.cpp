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
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "Optimium/Runtime.h"
#include "Optimium/Runtime/Logging/ConsoleWriter.h"
#include "Optimium/Runtime/Logging/FileWriter.h"
#include "Optimium/Runtime/Utils/StreamHelper.h"
#include "api/OwnedModelBytes.h"

namespace nb = nanobind;
namespace rt = optimium::runtime;
using namespace nb::literals;

namespace {

std::atomic<bool> Finalizing{false};

template <typename T> std::string streamed(const T &V) {
  std::ostringstream S;
  S << V;
  return S.str();
}

// ---------------------------------------------------------------- exceptions
PyObject *ExcBase = nullptr;
PyObject *ExcInvalidState, *ExcInvalidOperation, *ExcShape, *ExcExtension, *ExcDevice, *ExcModel, *ExcRequest,
    *ExcInfer, *ExcOutOfResource, *ExcContainer, *ExcRemote;

PyObject *newException(nb::module_ &M, const char *Name, PyObject *Base) {
  std::string Full = std::string("optimium.runtime.") + Name;
  PyObject *E = PyErr_NewException(Full.c_str(), Base, nullptr);
  M.attr(Name) = nb::handle(E);
  return E;
}

/// The Python exception (type) a C++ exception maps to; used for raising and for callbacks.
PyObject *pythonTypeFor(const std::exception &E) {
#define MAP(CppT, PyT)                                                                                             \
  if (dynamic_cast<const rt::CppT *>(&E))                                                                          \
    return PyT;
  MAP(InvalidArgumentError, PyExc_ValueError)
  MAP(TypeError, PyExc_TypeError)
  MAP(NotImplementedError, PyExc_NotImplementedError)
  MAP(NetworkError, PyExc_ConnectionError)
  MAP(OSError, PyExc_OSError)
  MAP(InvalidStateError, ExcInvalidState)
  MAP(InvalidOperationError, ExcInvalidOperation)
  MAP(ShapeError, ExcShape)
  MAP(ExtensionError, ExcExtension)
  MAP(DeviceError, ExcDevice)
  MAP(ModelError, ExcModel)
  MAP(RequestError, ExcRequest)
  MAP(InferError, ExcInfer)
  MAP(OutOfResourceError, ExcOutOfResource)
  MAP(ContainerError, ExcContainer)
  MAP(RemoteError, ExcRemote)
#undef MAP
  if (dynamic_cast<const rt::IOError *>(&E)) {
    std::string Msg = E.what();
    return Msg.find("does not exist") != std::string::npos ? PyExc_FileNotFoundError : PyExc_OSError;
  }
  if (dynamic_cast<const rt::Exception *>(&E))
    return ExcBase;
  return nullptr;
}

void translate(const std::exception_ptr &P, void *) {
  try {
    std::rethrow_exception(P);
  } catch (const rt::Exception &E) {
    PyErr_SetString(pythonTypeFor(E), E.what());
  }
}

nb::object exceptionObject(const std::exception_ptr &P) {
  if (!P)
    return nb::none();
  try {
    std::rethrow_exception(P);
  } catch (const std::exception &E) {
    PyObject *T = pythonTypeFor(E);
    if (!T)
      T = PyExc_RuntimeError;
    return nb::steal(PyObject_CallFunction(T, "s", E.what()));
  } catch (...) {
    return nb::steal(PyObject_CallFunction(PyExc_RuntimeError, "s", "unknown C++ exception"));
  }
}

// ---------------------------------------------------------------- element types
size_t elementSize(rt::ElementType T) { return rt::getElementSize(T); }

/// The float8 / float4 / int4 / int2 types, which numpy sees as their uint8 storage.
bool isLowPrecision(rt::ElementType T) {
  switch (T) {
  case rt::ElementType::F8E4M3FN: case rt::ElementType::F8E4M3FNUZ: case rt::ElementType::F8E5M2:
  case rt::ElementType::F8E5M2FNUZ: case rt::ElementType::F8E8M0: case rt::ElementType::F4E2M1:
  case rt::ElementType::I4: case rt::ElementType::U4: case rt::ElementType::I2: case rt::ElementType::U2: return true;
  default: return false;
  }
}

/// The ElementType of a buffer-protocol format string ("<f", "=i", "?", ...); Undefined if none.
rt::ElementType typeFromFormat(const char *Fmt, Py_ssize_t ItemSize) {
  if (!Fmt)
    return ItemSize == 1 ? rt::ElementType::U8 : rt::ElementType::Undefined;
  while (*Fmt == '<' || *Fmt == '=' || *Fmt == '@' || *Fmt == '!' || *Fmt == '>') {
    if (*Fmt == '>' || *Fmt == '!')
      return rt::ElementType::Undefined; // big-endian data
    ++Fmt;
  }
  if (Fmt[0] == '\0' || Fmt[1] != '\0')
    return rt::ElementType::Undefined;
  const bool Signed = std::strchr("bhilq", Fmt[0]) != nullptr, Unsigned = std::strchr("BHILQ", Fmt[0]) != nullptr;
  if (Fmt[0] == '?')
    return rt::ElementType::Bool;
  if (Fmt[0] == 'e')
    return rt::ElementType::F16;
  if (Fmt[0] == 'f')
    return rt::ElementType::F32;
  if (Fmt[0] == 'd')
    return rt::ElementType::F64;
  if (Signed || Unsigned) {
    switch (ItemSize) {
    case 1: return Signed ? rt::ElementType::I8 : rt::ElementType::U8;
    case 2: return Signed ? rt::ElementType::I16 : rt::ElementType::U16;
    case 4: return Signed ? rt::ElementType::I32 : rt::ElementType::U32;
    case 8: return Signed ? rt::ElementType::I64 : rt::ElementType::U64;
    }
  }
  return rt::ElementType::Undefined;
}

const char *numpyName(rt::ElementType T) {
  switch (T) {
  case rt::ElementType::Bool: return "bool";
  case rt::ElementType::I8: return "int8";
  case rt::ElementType::I16: return "int16";
  case rt::ElementType::I32: return "int32";
  case rt::ElementType::I64: return "int64";
  case rt::ElementType::U8: return "uint8";
  case rt::ElementType::U16: return "uint16";
  case rt::ElementType::U32: return "uint32";
  case rt::ElementType::U64: return "uint64";
  case rt::ElementType::F16: return "float16";
  case rt::ElementType::BF16: return "bfloat16";
  case rt::ElementType::F32: return "float32";
  case rt::ElementType::F64: return "float64";
  case rt::ElementType::String: return "str";
  case rt::ElementType::F8E4M3FN: return "float8_e4m3fn";
  case rt::ElementType::F8E4M3FNUZ: return "float8_e4m3fnuz";
  case rt::ElementType::F8E5M2: return "float8_e5m2";
  case rt::ElementType::F8E5M2FNUZ: return "float8_e5m2fnuz";
  case rt::ElementType::F8E8M0: return "float8_e8m0fnu";
  case rt::ElementType::F4E2M1: return "float4_e2m1fn";
  case rt::ElementType::I4: return "int4";
  case rt::ElementType::U4: return "uint4";
  case rt::ElementType::I2: return "int2";
  case rt::ElementType::U2: return "uint2";
  default: return "undefined";
  }
}

// ---------------------------------------------------------------- shapes
rt::Expr toExpr(nb::handle H) {
  if (nb::isinstance<rt::Expr>(H))
    return nb::cast<rt::Expr>(H);
  if (nb::isinstance<nb::str>(H))
    return rt::Expr(nb::cast<std::string>(H));
  if (PyIndex_Check(H.ptr())) {
    nb::object I = nb::steal(PyNumber_Index(H.ptr()));
    if (!I.is_valid())
      throw nb::python_error();
    return rt::Expr(static_cast<long long>(nb::cast<int64_t>(I)));
  }
  throw nb::type_error(("a dimension must be an int, a str (symbol) or an Expr, not " +
                        nb::cast<std::string>(nb::str(H.type().attr("__name__"))))
                           .c_str());
}

rt::TensorShape toShape(nb::handle H) {
  if (nb::isinstance<rt::TensorShape>(H))
    return nb::cast<rt::TensorShape>(H);
  if (PyIndex_Check(H.ptr()) || nb::isinstance<nb::str>(H) || nb::isinstance<rt::Expr>(H))
    return rt::TensorShape(std::vector<rt::Expr>{toExpr(H)});
  std::vector<rt::Expr> Dims;
  for (nb::handle D : nb::iter(H))
    Dims.push_back(toExpr(D));
  return rt::TensorShape(std::move(Dims));
}

nb::object exprValue(const rt::Expr &E) {
  if (E.isConst())
    return nb::int_(E.value());
  return nb::cast(E);
}

// ---------------------------------------------------------------- attributes
nb::object attributeToPython(const rt::Attribute &A) {
  using K = rt::AttributeKind;
  if (!A)
    return nb::none();
  switch (A.getKind()) {
  case K::None: return nb::none();
  case K::I8: return nb::int_(A.cast<rt::I8Attr>().value());
  case K::I16: return nb::int_(A.cast<rt::I16Attr>().value());
  case K::I32: return nb::int_(A.cast<rt::I32Attr>().value());
  case K::I64: return nb::int_(A.cast<rt::I64Attr>().value());
  case K::U8: return nb::int_(A.cast<rt::U8Attr>().value());
  case K::U16: return nb::int_(A.cast<rt::U16Attr>().value());
  case K::U32: return nb::int_(A.cast<rt::U32Attr>().value());
  case K::U64: return nb::int_(A.cast<rt::U64Attr>().value());
  case K::F16: return nb::float_(static_cast<float>(A.cast<rt::F16Attr>().value()));
  case K::BF16: return nb::float_(static_cast<float>(A.cast<rt::BF16Attr>().value()));
  case K::F32: return nb::float_(A.cast<rt::F32Attr>().value());
  case K::TF32: return nb::float_(A.cast<rt::TF32Attr>().value());
  case K::F64: return nb::float_(A.cast<rt::F64Attr>().value());
  case K::Bool: return nb::bool_(A.cast<rt::BoolAttr>().value());
  case K::String: return nb::str(A.cast<rt::StringAttr>().value().c_str());
  case K::List: {
    nb::list L;
    for (const rt::Attribute &E : A.cast<rt::ListAttr>())
      L.append(attributeToPython(E));
    return std::move(L);
  }
  case K::Map: {
    nb::dict D;
    for (const auto &KV : A.cast<rt::MapAttr>().value())
      D[nb::str(KV.first.c_str())] = attributeToPython(KV.second);
    return std::move(D);
  }
  case K::QS8:
  case K::QS16:
  case K::QS32:
    throw nb::type_error(("attribute of kind " + std::string(rt::toString(A.getKind())) +
                          " (a quantized scalar) has no Python representation")
                             .c_str());
  }
  return nb::none();
}

// ---------------------------------------------------------------- tensors
struct PyTensor {
  rt::Tensor T;
  nb::object Owner; ///< keeps user memory (a numpy array, a request's inputs) alive
  /// to_numpy() returns a writable view of T's memory instead of a copy (the `new` tensor of a
  /// resize-migration callback, which the callback fills in place).
  bool NumpyView = false;
};

void requireValid(const PyTensor &P, const char *What) {
  if (!P.T)
    throw nb::value_error((std::string(What) + ": the tensor is empty or released").c_str());
}

/// Wraps (copy=false) or copies (copy=true) an object supporting the buffer protocol.
PyTensor tensorFromBuffer(nb::handle Obj, rt::ElementType Type, bool Copy, const std::string &What) {
  Py_buffer View;
  if (PyObject_GetBuffer(Obj.ptr(), &View, PyBUF_RECORDS_RO) != 0) {
    PyErr_Clear();
    throw nb::type_error((What + ": expected a numpy array or rt.Tensor, got " +
                          nb::cast<std::string>(nb::str(Obj.type().attr("__name__"))))
                             .c_str());
  }
  struct Release {
    Py_buffer *V;
    ~Release() { PyBuffer_Release(V); }
  } R{&View};
  const rt::ElementType FromFmt = typeFromFormat(View.format, View.itemsize);
  if (Type == rt::ElementType::Undefined)
    Type = FromFmt;
  if (Type == rt::ElementType::Undefined)
    throw nb::type_error((What + ": numpy dtype with format '" + std::string(View.format ? View.format : "?") +
                          "' has no Optimium ElementType")
                             .c_str());
  // BF16 wraps uint16 storage, the low-precision types uint8 storage (one stored byte per element).
  if (Type != FromFmt && !(Type == rt::ElementType::BF16 && View.itemsize == 2) &&
      !(isLowPrecision(Type) && FromFmt == rt::ElementType::U8))
    throw nb::type_error((What + ": array element type " + numpyName(FromFmt) + " does not match " + numpyName(Type))
                             .c_str());
  std::vector<rt::Expr> Dims;
  for (int I = 0; I < View.ndim; ++I)
    Dims.push_back(rt::Expr(static_cast<long long>(View.shape[I])));
  const bool Contiguous = PyBuffer_IsContiguous(&View, 'C') != 0;
  if (!Copy) {
    if (!Contiguous) {
      std::string Strides;
      for (int I = 0; I < View.ndim; ++I)
        Strides += (I ? ", " : "") + std::to_string(View.strides[I]);
      throw nb::value_error((What + ": copy=False needs a C-contiguous array, but this one is not (shape " +
                             rt::TensorShape(Dims).toString() + ", byte strides (" + Strides +
                             ")); pass np.ascontiguousarray(arr) or copy=True")
                                .c_str());
    }
    PyTensor P{rt::tensor(Type, rt::TensorShape(Dims), View.buf, false), nb::borrow(Obj)};
    return P;
  }
  PyTensor P{rt::tensor(Type, rt::TensorShape(Dims)), nb::none()};
  if (Contiguous) {
    if (View.len)
      std::memcpy(P.T.data(), View.buf, static_cast<size_t>(View.len));
  } else if (PyBuffer_ToContiguous(P.T.data(), &View, View.len, 'C') != 0) {
    throw nb::python_error();
  }
  return P;
}

nb::object tensorToNumpy(const PyTensor &P) {
  requireValid(P, "to_numpy");
  const rt::Tensor &T = P.T;
  const rt::ElementType Type = T.getType();
  std::vector<int64_t> Dims64 = T.getShape().getDims();
  std::vector<size_t> Shape(Dims64.begin(), Dims64.end());
  if (Type == rt::ElementType::String) {
    nb::list L;
    const auto *S = static_cast<const std::string *>(T.data());
    for (size_t I = 0; I < T.getElementCount(); ++I)
      L.append(nb::bytes(S[I].data(), S[I].size()).attr("decode")("utf-8", "replace"));
    nb::module_ Np = nb::module_::import_("numpy");
    nb::object ShapeT = nb::tuple(nb::cast(Dims64));
    return Np.attr("array")(L, "dtype"_a = "object").attr("reshape")(ShapeT);
  }
  nb::dlpack::dtype DT;
  DT.lanes = 1;
  DT.bits = static_cast<uint8_t>(elementSize(Type) * 8);
  switch (Type) {
  case rt::ElementType::Bool: DT.code = (uint8_t)nb::dlpack::dtype_code::Bool; break;
  case rt::ElementType::I8:
  case rt::ElementType::I16:
  case rt::ElementType::I32:
  case rt::ElementType::I64: DT.code = (uint8_t)nb::dlpack::dtype_code::Int; break;
  case rt::ElementType::U8:
  case rt::ElementType::U16:
  case rt::ElementType::U32:
  case rt::ElementType::U64:
  case rt::ElementType::BF16: // uint16 storage (see DECISIONS.md); the package views it as bfloat16 if it can
  // Low-precision types: the stored byte per element as uint8 (float8 bits, 4/2-bit codes unpacked).
  case rt::ElementType::F8E4M3FN:
  case rt::ElementType::F8E4M3FNUZ:
  case rt::ElementType::F8E5M2:
  case rt::ElementType::F8E5M2FNUZ:
  case rt::ElementType::F8E8M0:
  case rt::ElementType::F4E2M1:
  case rt::ElementType::I4:
  case rt::ElementType::U4:
  case rt::ElementType::I2:
  case rt::ElementType::U2:
    DT.code = (uint8_t)nb::dlpack::dtype_code::UInt;
    break;
  case rt::ElementType::F16:
  case rt::ElementType::F32:
  case rt::ElementType::F64: DT.code = (uint8_t)nb::dlpack::dtype_code::Float; break;
  default: throw nb::type_error("to_numpy: the tensor has an undefined element type");
  }
  if (P.NumpyView) {
    auto *Keep = new rt::Tensor(T);
    nb::capsule ViewOwner(Keep, [](void *Ptr) noexcept { delete static_cast<rt::Tensor *>(Ptr); });
    return nb::cast(nb::ndarray<nb::numpy>(const_cast<void *>(T.data()), Shape.size(), Shape.data(), ViewOwner, nullptr, DT));
  }
  const size_t Bytes = T.getTensorSize();
  char *Buf = new char[Bytes ? Bytes : 1];
  if (Bytes)
    std::memcpy(Buf, T.data(), Bytes);
  nb::capsule Owner(Buf, [](void *Ptr) noexcept { delete[] static_cast<char *>(Ptr); });
  return nb::cast(nb::ndarray<nb::numpy>(Buf, Shape.size(), Shape.data(), Owner, nullptr, DT));
}

template <typename T> void fillAs(rt::Tensor &Tn, T V) {
  T *P = static_cast<T *>(Tn.data());
  for (size_t I = 0, N = Tn.getElementCount(); I < N; ++I)
    P[I] = V;
}

void tensorFill(PyTensor &P, nb::handle V) {
  requireValid(P, "fill");
  rt::Tensor &T = P.T;
  using E = rt::ElementType;
  const E Type = T.getType();
  if (Type == E::String) {
    std::string S = nb::cast<std::string>(V);
    auto *Str = static_cast<std::string *>(T.data());
    for (size_t I = 0; I < T.getElementCount(); ++I)
      Str[I] = S;
    return;
  }
  if (Type == E::F16 || Type == E::BF16 || Type == E::F32 || Type == E::F64) {
    nb::object F = nb::steal(PyNumber_Float(V.ptr()));
    if (!F.is_valid())
      throw nb::python_error();
    const double D = nb::cast<double>(F);
    switch (Type) {
    case E::F16: fillAs(T, rt::float16(static_cast<float>(D))); break;
    case E::BF16: fillAs(T, rt::bfloat16(static_cast<float>(D))); break;
    case E::F32: fillAs(T, static_cast<float>(D)); break;
    default: fillAs(T, D); break;
    }
    return;
  }
  nb::object Owned;
  if (PyIndex_Check(V.ptr()) || PyBool_Check(V.ptr())) {
    Owned = nb::steal(PyNumber_Index(V.ptr()));
  } else if (PyNumber_Check(V.ptr())) {
    Owned = nb::steal(PyNumber_Long(V.ptr())); // floats into an integer tensor truncate, like numpy's astype
  } else {
    throw nb::type_error("fill: the value must be a number");
  }
  if (!Owned.is_valid())
    throw nb::python_error();
  switch (Type) {
  case E::Bool: fillAs(T, PyObject_IsTrue(Owned.ptr()) != 0); break;
  case E::I8: fillAs(T, static_cast<int8_t>(nb::cast<int64_t>(Owned))); break;
  case E::I16: fillAs(T, static_cast<int16_t>(nb::cast<int64_t>(Owned))); break;
  case E::I32: fillAs(T, static_cast<int32_t>(nb::cast<int64_t>(Owned))); break;
  case E::I64: fillAs(T, nb::cast<int64_t>(Owned)); break;
  case E::U8: fillAs(T, static_cast<uint8_t>(nb::cast<int64_t>(Owned))); break;
  case E::U16: fillAs(T, static_cast<uint16_t>(nb::cast<int64_t>(Owned))); break;
  case E::U32: fillAs(T, static_cast<uint32_t>(nb::cast<int64_t>(Owned))); break;
  case E::U64: fillAs(T, nb::cast<uint64_t>(Owned)); break;
  default: throw nb::type_error("fill: the tensor has an undefined element type");
  }
}

// ---------------------------------------------------------------- devices
struct PyHostInfo {
  int ID = 0;
  std::string Name;
  rt::DeviceKind Architecture = rt::DeviceKind::Unspecified;
  rt::OSKind OS = rt::OSKind::Linux;
  std::vector<rt::DeviceID> Devices;
  std::string Text;
};

PyHostInfo hostInfo(const rt::HostInfo &H) {
  PyHostInfo P;
  P.ID = H.ID;
  P.Name = H.Name.str();
  P.Architecture = H.Architecture;
  P.OS = H.OS;
  P.Devices = H.Devices.vec();
  P.Text = H.toString();
  return P;
}

nb::object capabilityOf(const rt::DeviceID &D) {
  const rt::Capability &C = D.getCapability();
  switch (C.getKind()) {
  case rt::CapabilityKind::X86: return nb::cast(static_cast<const rt::X86Capability &>(C), nb::rv_policy::copy);
  case rt::CapabilityKind::ARM: return nb::cast(static_cast<const rt::ARMCapability &>(C), nb::rv_policy::copy);
  case rt::CapabilityKind::SPIRV: return nb::cast(static_cast<const rt::SPIRVCapability &>(C), nb::rv_policy::copy);
  case rt::CapabilityKind::CUDA: return nb::cast(static_cast<const rt::CUDACapability &>(C), nb::rv_policy::copy);
  case rt::CapabilityKind::RISCV: return nb::cast(static_cast<const rt::RISCVCapability &>(C), nb::rv_policy::copy);
  case rt::CapabilityKind::Hexagon:
    return nb::cast(static_cast<const rt::HexagonCapability &>(C), nb::rv_policy::copy);
  default: return nb::cast(rt::VoidCapability(), nb::rv_policy::move);
  }
}

// ---------------------------------------------------------------- requests
struct CallbackSlot {
  PyObject *Fn = nullptr; ///< guarded by the GIL
};

struct PyRequest {
  rt::InferRequest R;
  rt::Model M; ///< the model stays alive as long as its request (the C++ side does this too)
  nb::object Keep = nb::none(); ///< the inputs of the last infer() (a tuple)
  std::shared_ptr<CallbackSlot> Slot = std::make_shared<CallbackSlot>();
  bool CallbackRegistered = false;

  PyRequest(rt::InferRequest R, rt::Model M) : R(std::move(R)), M(std::move(M)) {}
  PyRequest(const PyRequest &) = delete;
  PyRequest &operator=(const PyRequest &) = delete;

  ~PyRequest() {
    // Dropped while running: the run still reads the inputs we keep; wait for it first.
    if (R) {
      try {
        if (R.getStatus() == rt::InferStatus::Running) {
          nb::gil_scoped_release G;
          R.wait();
        }
      } catch (...) {
      }
    }
    if (Slot && Slot->Fn) {
      PyObject *F = Slot->Fn;
      Slot->Fn = nullptr;
      Py_DECREF(F);
    }
  }
};

size_t inputIndex(const rt::Model &M, const std::string &Name) {
  auto Names = M.getInputNames();
  for (size_t I = 0; I < Names.size(); ++I)
    if (Names[I] == rt::StringRef(Name))
      return I;
  std::string All;
  for (auto N : Names)
    All += (All.empty() ? "" : ", ") + N.str();
  throw nb::value_error(
      ("infer: model '" + M.getName() + "' has no input named '" + Name + "' (inputs: " + All + ")").c_str());
}

/// One infer() input: an rt.Tensor as is, or a numpy array (zero-copy when contiguous, else copied).
rt::Tensor convertInput(const rt::Model &M, size_t Index, nb::handle H, std::vector<nb::object> &Keep) {
  const rt::TensorInfo &Info = M.getInputTensorInfo(Index);
  const std::string What = "input " + std::to_string(Index) + " ('" + Info.Name + "')";
  if (nb::isinstance<PyTensor>(H)) {
    Keep.push_back(nb::borrow(H));
    return nb::cast<PyTensor &>(H).T;
  }
  Py_buffer View;
  if (PyObject_GetBuffer(H.ptr(), &View, PyBUF_RECORDS_RO) != 0) {
    PyErr_Clear();
    throw nb::type_error((What + ": expected a numpy.ndarray or rt.Tensor, got " +
                          nb::cast<std::string>(nb::str(H.type().attr("__name__"))))
                             .c_str());
  }
  const rt::ElementType Got = typeFromFormat(View.format, View.itemsize);
  const bool Contiguous = PyBuffer_IsContiguous(&View, 'C') != 0;
  PyBuffer_Release(&View);
  const bool Bf16Storage = Info.Type == rt::ElementType::BF16 && Got == rt::ElementType::U16;
  if (Got != Info.Type && !Bf16Storage)
    throw nb::type_error((What + " has dtype " + numpyName(Got) + ", the model expects " + numpyName(Info.Type) +
                          " (" + rt::toString(Info.Type) + ")")
                             .c_str());
  PyTensor P = tensorFromBuffer(H, Info.Type, /*Copy=*/!Contiguous, What);
  Keep.push_back(Contiguous ? nb::borrow(H) : nb::object(nb::none()));
  return P.T;
}

void requestInfer(PyRequest &Q, nb::handle Inputs) {
  std::vector<nb::object> Keep;
  if (nb::isinstance<nb::dict>(Inputs)) {
    std::map<std::string, rt::Tensor> Map;
    for (auto KV : nb::borrow<nb::dict>(Inputs)) {
      if (!nb::isinstance<nb::str>(KV.first))
        throw nb::type_error("infer: dict keys must be input names (str)");
      std::string Name = nb::cast<std::string>(KV.first);
      Map[Name] = convertInput(Q.M, inputIndex(Q.M, Name), KV.second, Keep);
    }
    Q.Keep = nb::cast(Keep);
    nb::gil_scoped_release G;
    Q.R.infer(Map);
    return;
  }
  if (nb::isinstance<PyTensor>(Inputs) || PyObject_CheckBuffer(Inputs.ptr()))
    throw nb::type_error("infer: pass a list (or dict) of inputs, e.g. request.infer([arr])");
  std::vector<rt::Tensor> List;
  size_t I = 0;
  const size_t N = Q.M.getInputNames().size();
  for (nb::handle H : nb::iter(Inputs)) {
    if (I >= N)
      throw nb::value_error(("infer: model '" + Q.M.getName() + "' takes " + std::to_string(N) +
                             " input(s), got more")
                                .c_str());
    List.push_back(convertInput(Q.M, I++, H, Keep));
  }
  if (List.size() != N) {
    std::string Missing;
    auto Names = Q.M.getInputNames();
    for (size_t J = List.size(); J < N; ++J)
      Missing += (Missing.empty() ? "'" : ", '") + Names[J].str() + "'";
    throw nb::value_error(("infer: model '" + Q.M.getName() + "' takes " + std::to_string(N) + " input(s), got " +
                           std::to_string(List.size()) + " (missing " + Missing + ")")
                              .c_str());
  }
  Q.Keep = nb::cast(Keep);
  nb::gil_scoped_release G;
  Q.R.infer(rt::ArrayRef<rt::Tensor>(List));
}

/// request.profile(): inputs as for infer() (list or dict), times in integer microseconds,
/// event_buffer_size 0 = the default. Blocking; the GIL is released while it runs.
void requestProfile(PyRequest &Q, nb::handle Inputs, int Repeat, int WarmUp, long long WarmUpTime,
                    long long StopThreshold, int CheckPeriod, long long EventBufferSize) {
  if (EventBufferSize < 0)
    throw nb::value_error("profile: event_buffer_size must be >= 0 (0 = the default)");
  rt::ProfileOptions O;
  O.Repeat = Repeat;
  O.WarmUp = WarmUp;
  O.WarmUpTime = std::chrono::microseconds(WarmUpTime);
  O.StopThreshold = std::chrono::microseconds(StopThreshold);
  O.CheckPeriod = CheckPeriod;
  O.EventBufferSize = static_cast<size_t>(EventBufferSize);
  std::vector<nb::object> Keep;
  if (nb::isinstance<nb::dict>(Inputs)) {
    std::map<std::string, rt::Tensor> Map;
    for (auto KV : nb::borrow<nb::dict>(Inputs)) {
      if (!nb::isinstance<nb::str>(KV.first))
        throw nb::type_error("profile: dict keys must be input names (str)");
      std::string Name = nb::cast<std::string>(KV.first);
      Map[Name] = convertInput(Q.M, inputIndex(Q.M, Name), KV.second, Keep);
    }
    Q.Keep = nb::cast(Keep);
    nb::gil_scoped_release G;
    Q.R.profile(Map, O);
    return;
  }
  if (nb::isinstance<PyTensor>(Inputs) || PyObject_CheckBuffer(Inputs.ptr()))
    throw nb::type_error("profile: pass a list (or dict) of inputs, e.g. request.profile([arr])");
  std::vector<rt::Tensor> List;
  const size_t N = Q.M.getInputNames().size();
  for (nb::handle H : nb::iter(Inputs)) {
    if (List.size() >= N)
      throw nb::value_error(("profile: model '" + Q.M.getName() + "' takes " + std::to_string(N) +
                             " input(s), got more")
                                .c_str());
    List.push_back(convertInput(Q.M, List.size(), H, Keep));
  }
  Q.Keep = nb::cast(Keep);
  nb::gil_scoped_release G;
  Q.R.profile(rt::ArrayRef<rt::Tensor>(List), O);
}

void requestSetCallback(PyRequest &Q, nb::object Fn) {
  if (!Fn.is_none() && !PyCallable_Check(Fn.ptr()))
    throw nb::type_error("set_callback: expected a callable fn(status, error) or None");
  PyObject *Old = Q.Slot->Fn;
  Q.Slot->Fn = Fn.is_none() ? nullptr : Fn.inc_ref().ptr();
  Py_XDECREF(Old);
  if (Q.CallbackRegistered || !Q.Slot->Fn)
    return;
  std::weak_ptr<CallbackSlot> Weak = Q.Slot;
  Q.R.addCallback([Weak](rt::InferStatus S, std::exception_ptr E) {
    if (Finalizing.load() || !Py_IsInitialized())
      return;
    std::shared_ptr<CallbackSlot> Slot = Weak.lock();
    if (!Slot)
      return;
    nb::gil_scoped_acquire G;
    if (!Slot->Fn)
      return;
    nb::object Fn = nb::borrow(Slot->Fn);
    try {
      Fn(S, exceptionObject(E));
    } catch (nb::python_error &Err) {
      Err.discard_as_unraisable("optimium.runtime InferRequest callback");
    } catch (...) {
    }
  });
  Q.CallbackRegistered = true;
}

PyTensor outputTensor(PyRequest &Q, rt::Tensor T) { return PyTensor{std::move(T), Q.Keep}; }

/// set_resize_migration: fn(old, new) gets rt.Tensor objects; new.to_numpy() is a writable view.
/// The runtime calls it on the thread applying the resize (infer() releases the GIL: take it).
void requestSetResizeMigration(PyRequest &Q, const std::string &Name, nb::object Fn) {
  if (Fn.is_none()) {
    Q.R.setResizeMigration(rt::StringRef(Name), nullptr);
    return;
  }
  if (!PyCallable_Check(Fn.ptr()))
    throw nb::type_error("set_resize_migration: expected a callable fn(old, new) or None");
  std::shared_ptr<PyObject> Held(Fn.inc_ref().ptr(), [](PyObject *O) {
    if (Finalizing.load() || !Py_IsInitialized())
      return;
    nb::gil_scoped_acquire G;
    Py_DECREF(O);
  });
  Q.R.setResizeMigration(rt::StringRef(Name), [Held](const rt::Tensor &Old, rt::Tensor &New) {
    nb::gil_scoped_acquire G;
    nb::object F = nb::borrow(Held.get());
    PyTensor OldT{Old, nb::none()};
    PyTensor NewT{New, nb::none(), /*NumpyView=*/true};
    F(nb::cast(OldT), nb::cast(NewT));
  });
}

rt::ModelLoadOptions loadOptions(nb::object Devices, bool Strict, bool MemOpt, bool Denormals,
                                 std::optional<std::string> SavePath, std::optional<std::string> Passphrase,
                                 int Threads, nb::object Cores, rt::SchedulerType Sched, int Spin, int SpinYield,
                                 bool Stealing, nb::object Capacities) {
  rt::ModelLoadOptions O;
  if (!Devices.is_none()) {
    if (nb::isinstance<rt::DeviceID>(Devices))
      O.Devices.push_back(nb::cast<rt::DeviceID>(Devices));
    else
      for (nb::handle D : nb::iter(Devices))
        O.Devices.push_back(nb::cast<rt::DeviceID>(D));
  }
  O.Strict = Strict;
  O.EnableMemoryOptimization = MemOpt;
  O.DisableDenormals = Denormals;
  if (SavePath)
    O.IntermediateSavePath = *SavePath;
  if (Passphrase)
    O.Passphrase = *Passphrase;
  if (Threads < 0)
    throw nb::value_error("load_model: threads must be >= 0 (0 = one per core)");
  O.ThreadCount = Threads;
  if (!Cores.is_none())
    for (nb::handle C : nb::iter(Cores))
      O.Cores.push_back(nb::cast<int>(C));
  O.Scheduler = Sched;
  O.SpinIterations = Spin;
  O.SpinYieldIterations = SpinYield;
  O.EnableWorkStealing = Stealing;
  if (!Capacities.is_none())
    for (auto KV : nb::cast<nb::dict>(Capacities))
      O.ResizableCapacities[nb::cast<std::string>(KV.first)] = toShape(KV.second);
  return O;
}

std::vector<std::string> names(rt::ArrayRef<rt::StringRef> R) {
  std::vector<std::string> V;
  for (auto S : R)
    V.push_back(S.str());
  return V;
}

} // namespace

NB_MODULE(_core, m) {
  nb::set_leak_warnings(false); // objects alive at interpreter exit are fine (reference counted in C++)
  m.doc() = "Optimium Runtime native bindings (use the optimium.runtime package)";

  // Exceptions (section 12).
  ExcBase = newException(m, "RuntimeException", PyExc_RuntimeError);
  ExcInvalidState = newException(m, "InvalidStateError", ExcBase);
  ExcInvalidOperation = newException(m, "InvalidOperationError", ExcBase);
  ExcShape = newException(m, "ShapeError", ExcBase);
  ExcExtension = newException(m, "ExtensionError", ExcBase);
  ExcDevice = newException(m, "DeviceError", ExcBase);
  ExcModel = newException(m, "ModelError", ExcBase);
  ExcRequest = newException(m, "RequestError", ExcBase);
  ExcInfer = newException(m, "InferError", ExcBase);
  ExcOutOfResource = newException(m, "OutOfResourceError", ExcBase);
  ExcContainer = newException(m, "ContainerError", ExcBase);
  ExcRemote = newException(m, "RemoteError", ExcBase);
  nb::register_exception_translator(translate);

  m.def("_set_finalizing", [] { Finalizing.store(true); });

  // Enums.
  nb::enum_<rt::ElementType>(m, "ElementType")
      .value("UNDEFINED", rt::ElementType::Undefined)
      .value("BOOL", rt::ElementType::Bool)
      .value("I8", rt::ElementType::I8)
      .value("I16", rt::ElementType::I16)
      .value("I32", rt::ElementType::I32)
      .value("I64", rt::ElementType::I64)
      .value("U8", rt::ElementType::U8)
      .value("U16", rt::ElementType::U16)
      .value("U32", rt::ElementType::U32)
      .value("U64", rt::ElementType::U64)
      .value("F16", rt::ElementType::F16)
      .value("BF16", rt::ElementType::BF16)
      .value("F32", rt::ElementType::F32)
      .value("F64", rt::ElementType::F64)
      .value("STRING", rt::ElementType::String)
      .value("F8E4M3FN", rt::ElementType::F8E4M3FN)
      .value("F8E4M3FNUZ", rt::ElementType::F8E4M3FNUZ)
      .value("F8E5M2", rt::ElementType::F8E5M2)
      .value("F8E5M2FNUZ", rt::ElementType::F8E5M2FNUZ)
      .value("F4E2M1", rt::ElementType::F4E2M1)
      .value("I4", rt::ElementType::I4)
      .value("U4", rt::ElementType::U4)
      .value("I2", rt::ElementType::I2)
      .value("U2", rt::ElementType::U2)
      .value("F8E8M0", rt::ElementType::F8E8M0);
  m.def("_element_size", [](rt::ElementType T) { return rt::getElementSize(T); });

  nb::enum_<rt::PlatformKind>(m, "PlatformKind")
      .value("NATIVE", rt::PlatformKind::Native)
      .value("XNNPACK", rt::PlatformKind::XNNPack)
      .value("CUDA", rt::PlatformKind::CUDA)
      .value("VULKAN", rt::PlatformKind::Vulkan)
      .value("OPENCL", rt::PlatformKind::OpenCL)
      .value("SNPE", rt::PlatformKind::SNPE)
      .value("QNN", rt::PlatformKind::QNN)
      .value("SYNAPTICS", rt::PlatformKind::Synaptics)
      .value("HEXAGON", rt::PlatformKind::Hexagon);
  nb::enum_<rt::DeviceKind>(m, "DeviceKind")
      .value("UNSPECIFIED", rt::DeviceKind::Unspecified)
      .value("NEUTRAL", rt::DeviceKind::Neutral)
      .value("X86", rt::DeviceKind::x86)
      .value("X64", rt::DeviceKind::x64)
      .value("ARM", rt::DeviceKind::ARM)
      .value("ARM64", rt::DeviceKind::ARM64)
      .value("RISCV32", rt::DeviceKind::RISCV32)
      .value("RISCV64", rt::DeviceKind::RISCV64)
      .value("ANY_CPU", rt::DeviceKind::AnyCPU)
      .value("NVIDIA", rt::DeviceKind::NVIDIA)
      .value("AMDGPU", rt::DeviceKind::AMDGPU)
      .value("INTEL_GPU", rt::DeviceKind::IntelGPU)
      .value("MALI", rt::DeviceKind::Mali)
      .value("ADRENO", rt::DeviceKind::Adreno)
      .value("ANY_GPU", rt::DeviceKind::AnyGPU)
      .value("HEXAGON", rt::DeviceKind::Hexagon)
      .value("MYRIAD", rt::DeviceKind::Myriad)
      .value("ARA1", rt::DeviceKind::ARA1)
      .value("GOOGLE_TPU", rt::DeviceKind::GoogleTPU)
      .value("CV22", rt::DeviceKind::CV22)
      .value("SYNAP_NPU", rt::DeviceKind::SynapNPU)
      .value("ANY_NPU", rt::DeviceKind::AnyNPU);
  nb::enum_<rt::OSKind>(m, "OSKind")
      .value("LINUX", rt::OSKind::Linux)
      .value("ANDROID", rt::OSKind::Android)
      .value("WINDOWS", rt::OSKind::Windows)
      .value("MACOS", rt::OSKind::MacOS)
      .value("IOS", rt::OSKind::IOS);
  nb::enum_<rt::CapabilityKind>(m, "CapabilityKind")
      .value("VOID", rt::CapabilityKind::Void)
      .value("X86", rt::CapabilityKind::X86)
      .value("ARM", rt::CapabilityKind::ARM)
      .value("SPIRV", rt::CapabilityKind::SPIRV)
      .value("CUDA", rt::CapabilityKind::CUDA)
      .value("RISCV", rt::CapabilityKind::RISCV)
      .value("HEXAGON", rt::CapabilityKind::Hexagon);
  nb::enum_<rt::SchedulerType>(m, "SchedulerType")
      .value("AUTO", rt::SchedulerType::Auto)
      .value("EXCLUSIVE", rt::SchedulerType::Exclusive)
      .value("SEQUENTIAL", rt::SchedulerType::Sequential)
      .value("PIPELINE", rt::SchedulerType::Pipeline);
  nb::enum_<rt::InferStatus>(m, "InferStatus")
      .value("READY", rt::InferStatus::Ready)
      .value("RUNNING", rt::InferStatus::Running)
      .value("FAULT", rt::InferStatus::Fault);

  // Initialization, version, extensions.
  m.def("initialize", [] { rt::initialize(); });
  m.def("finalize", [] { rt::finalize(); });
  m.def("is_initialized", [] { return rt::isInitialized(); });
  m.def("load_extension", [](const std::string &P) { rt::loadExtension(P); }, "path"_a);

  struct PyVersion {
    rt::Version V;
  };
  nb::class_<PyVersion>(m, "Version")
      .def_prop_ro("major", [](const PyVersion &P) { return P.V.Major; })
      .def_prop_ro("minor", [](const PyVersion &P) { return P.V.Minor; })
      .def_prop_ro("patch", [](const PyVersion &P) { return P.V.Patch; })
      .def_prop_ro("tag", [](const PyVersion &P) { return std::string(P.V.Tag ? P.V.Tag : ""); })
      .def_prop_ro("commit_id", [](const PyVersion &P) { return std::string(P.V.CommitID ? P.V.CommitID : ""); })
      .def_prop_ro("build_info", [](const PyVersion &P) { return std::string(P.V.BuildInfo ? P.V.BuildInfo : ""); })
      .def("__str__", [](const PyVersion &P) { return streamed(P.V); })
      .def("__repr__", [](const PyVersion &P) { return "<optimium.runtime.Version " + streamed(P.V) + ">"; });
  m.def("get_version", [] { return PyVersion{rt::getVersion()}; });

  // Logging and config submodules.
  nb::module_ Log = m.def_submodule("logging", "Runtime log level and log writers");
  nb::enum_<rt::LogLevel>(Log, "LogLevel")
      .value("DEBUG", rt::LogLevel::Debug)
      .value("VERBOSE", rt::LogLevel::Verbose)
      .value("INFO", rt::LogLevel::Info)
      .value("WARNING", rt::LogLevel::Warning)
      .value("ERROR", rt::LogLevel::Error);
  Log.def("set_loglevel", [](rt::LogLevel L) { rt::logging::setLogLevel(L); }, "level"_a);
  Log.def("get_loglevel", [] { return rt::logging::getLogLevel(); });
  Log.def("enable_console_log",
          [] { rt::logging::addLogWriter(std::unique_ptr<rt::logging::LogWriter>(new rt::logging::ConsoleWriter())); });
  Log.def(
      "enable_file_log",
      [](const std::string &Path) {
        rt::logging::addLogWriter(std::unique_ptr<rt::logging::LogWriter>(new rt::logging::FileWriter(Path)));
      },
      "path"_a);
  Log.def("clear_log_writers", [] { rt::logging::clearLogWriters(); });

  nb::module_ Cfg = m.def_submodule("config", "Tensor print configuration");
  Cfg.def("set_print_threshold", [](int T) { rt::config::setPrintThreshold(T); }, "threshold"_a);
  Cfg.def("get_print_threshold", [] { return rt::config::getPrintThreshold(); });
  Cfg.def("set_print_precision", [](int P) { rt::config::setPrintPrecision(P); }, "precision"_a);
  Cfg.def("get_print_precision", [] { return rt::config::getPrintPrecision(); });

  // Devices.
  nb::class_<rt::Capability>(m, "Capability")
      .def_prop_ro("kind", &rt::Capability::getKind)
      .def("__str__", &rt::Capability::toString)
      .def("__repr__", [](const rt::Capability &C) { return "<" + C.toString() + ">"; });
  nb::class_<rt::VoidCapability, rt::Capability>(m, "VoidCapability");
  nb::class_<rt::X86Capability, rt::Capability>(m, "X86Capability")
      .def_ro("SSE2", &rt::X86Capability::SSE2).def_ro("SSE3", &rt::X86Capability::SSE3)
      .def_ro("SSSE3", &rt::X86Capability::SSSE3).def_ro("SSE41", &rt::X86Capability::SSE41)
      .def_ro("SSE42", &rt::X86Capability::SSE42).def_ro("AVX", &rt::X86Capability::AVX)
      .def_ro("AVX2", &rt::X86Capability::AVX2).def_ro("FMA", &rt::X86Capability::FMA)
      .def_ro("F16C", &rt::X86Capability::F16C).def_ro("AVX512F", &rt::X86Capability::AVX512F)
      .def_ro("AVX512BW", &rt::X86Capability::AVX512BW).def_ro("AVX512DQ", &rt::X86Capability::AVX512DQ)
      .def_ro("AVX512VL", &rt::X86Capability::AVX512VL).def_ro("AVX512VNNI", &rt::X86Capability::AVX512VNNI)
      .def_ro("AVX512BF16", &rt::X86Capability::AVX512BF16).def_ro("AVX512FP16", &rt::X86Capability::AVX512FP16)
      .def_ro("AVXVNNI", &rt::X86Capability::AVXVNNI).def_ro("AMXTile", &rt::X86Capability::AMXTile)
      .def_ro("AMXInt8", &rt::X86Capability::AMXInt8).def_ro("AMXBF16", &rt::X86Capability::AMXBF16);
  nb::class_<rt::ARMCapability, rt::Capability>(m, "ARMCapability")
      .def_ro("NEON", &rt::ARMCapability::NEON).def_ro("FP16", &rt::ARMCapability::FP16)
      .def_ro("DotProd", &rt::ARMCapability::DotProd).def_ro("I8MM", &rt::ARMCapability::I8MM)
      .def_ro("BF16", &rt::ARMCapability::BF16).def_ro("SVE", &rt::ARMCapability::SVE)
      .def_ro("SVE2", &rt::ARMCapability::SVE2);
  nb::class_<rt::SPIRVCapability, rt::Capability>(m, "SPIRVCapability")
      .def_ro("version_major", &rt::SPIRVCapability::VersionMajor)
      .def_ro("version_minor", &rt::SPIRVCapability::VersionMinor)
      .def_ro("float16", &rt::SPIRVCapability::Float16).def_ro("int8", &rt::SPIRVCapability::Int8);
  nb::class_<rt::CUDACapability, rt::Capability>(m, "CUDACapability")
      .def_ro("compute_major", &rt::CUDACapability::ComputeMajor)
      .def_ro("compute_minor", &rt::CUDACapability::ComputeMinor);
  nb::class_<rt::RISCVCapability, rt::Capability>(m, "RISCVCapability")
      .def_ro("vector", &rt::RISCVCapability::Vector).def_ro("float16", &rt::RISCVCapability::Float16)
      .def_ro("vector_length", &rt::RISCVCapability::VectorLength);
  nb::class_<rt::HexagonCapability, rt::Capability>(m, "HexagonCapability")
      .def_ro("version", &rt::HexagonCapability::Version).def_ro("hvx", &rt::HexagonCapability::HVX);

  nb::class_<PyHostInfo>(m, "HostInfo")
      .def_ro("id", &PyHostInfo::ID)
      .def_ro("name", &PyHostInfo::Name)
      .def_ro("architecture", &PyHostInfo::Architecture)
      .def_ro("os", &PyHostInfo::OS)
      .def_ro("devices", &PyHostInfo::Devices)
      .def("__str__", [](const PyHostInfo &H) { return H.Text; })
      .def("__repr__", [](const PyHostInfo &H) { return "<optimium.runtime.HostInfo " + H.Name + ">"; });

  nb::class_<rt::DeviceID>(m, "DeviceID")
      .def(nb::init<>())
      .def(
          "__init__",
          [](rt::DeviceID *Self, rt::PlatformKind P, rt::DeviceKind K, unsigned Index, unsigned Host) {
            if (Index > 255 || Host > 255)
              throw nb::value_error("DeviceID: index and host_id must be in 0..255");
            new (Self) rt::DeviceID(rt::DeviceID::from(P, K, (uint8_t)Index, (uint8_t)Host));
          },
          "platform"_a, "device_kind"_a, "index"_a = 0, "host_id"_a = 0)
      .def_prop_ro("platform", &rt::DeviceID::getPlatform)
      .def_prop_ro("device_kind", &rt::DeviceID::getDeviceKind)
      .def_prop_ro("index", &rt::DeviceID::getIndex)
      .def_prop_ro("host_id", &rt::DeviceID::getHostID)
      .def_prop_ro("host_info", [](const rt::DeviceID &D) { return hostInfo(D.getHostInfo()); })
      .def_prop_ro("capability", &capabilityOf)
      .def("__eq__", [](const rt::DeviceID &A, const rt::DeviceID &B) { return A == B; })
      .def("__ne__", [](const rt::DeviceID &A, const rt::DeviceID &B) { return A != B; })
      .def("__hash__", [](const rt::DeviceID &D) {
        return ((size_t)D.getHostID() << 24) | ((size_t)D.getPlatform() << 16) | ((size_t)D.getDeviceKind() << 8) |
               D.getIndex();
      })
      .def("__str__", &rt::DeviceID::toString)
      .def("__repr__", [](const rt::DeviceID &D) { return "<optimium.runtime.DeviceID " + D.toString() + ">"; });
  m.def("get_local_info", [] { return hostInfo(rt::getLocalInfo()); });

  // Shapes.
  nb::class_<rt::Expr>(m, "Expr")
      .def(nb::init<long long>(), "value"_a)
      .def(nb::init<const std::string &>(), "symbol"_a)
      .def("is_const", &rt::Expr::isConst)
      .def("is_symbol", &rt::Expr::isSymbol)
      .def_prop_ro("value", &rt::Expr::value)
      .def_prop_ro("symbol", &rt::Expr::symbol)
      .def_prop_ro("symbols", &rt::Expr::symbols)
      .def("resolve", &rt::Expr::resolve, "variables"_a)
      .def("__add__", [](const rt::Expr &A, nb::handle B) { return A + toExpr(B); })
      .def("__radd__", [](const rt::Expr &A, nb::handle B) { return toExpr(B) + A; })
      .def("__sub__", [](const rt::Expr &A, nb::handle B) { return A - toExpr(B); })
      .def("__rsub__", [](const rt::Expr &A, nb::handle B) { return toExpr(B) - A; })
      .def("__mul__", [](const rt::Expr &A, nb::handle B) { return A * toExpr(B); })
      .def("__rmul__", [](const rt::Expr &A, nb::handle B) { return toExpr(B) * A; })
      .def("__truediv__", [](const rt::Expr &A, nb::handle B) { return A / toExpr(B); })
      .def("__floordiv__", [](const rt::Expr &A, nb::handle B) { return A / toExpr(B); })
      .def("__rtruediv__", [](const rt::Expr &A, nb::handle B) { return toExpr(B) / A; })
      .def("__rfloordiv__", [](const rt::Expr &A, nb::handle B) { return toExpr(B) / A; })
      .def("__mod__", [](const rt::Expr &A, nb::handle B) { return A % toExpr(B); })
      .def("__rmod__", [](const rt::Expr &A, nb::handle B) { return toExpr(B) % A; })
      .def("min", [](const rt::Expr &A, nb::handle B) { return min(A, toExpr(B)); }, "other"_a)
      .def("max", [](const rt::Expr &A, nb::handle B) { return max(A, toExpr(B)); }, "other"_a)
      .def("__eq__",
           [](const rt::Expr &A, nb::handle B) {
             try {
               return A == toExpr(B);
             } catch (...) {
               return false;
             }
           })
      .def("__ne__",
           [](const rt::Expr &A, nb::handle B) {
             try {
               return A != toExpr(B);
             } catch (...) {
               return true;
             }
           })
      .def("__hash__", [](const rt::Expr &A) { return nb::hash(nb::str(A.toString().c_str())); })
      .def("__int__", &rt::Expr::value)
      .def("__index__", &rt::Expr::value)
      .def("__str__", &rt::Expr::toString)
      .def("__repr__", [](const rt::Expr &E) { return "Expr(" + E.toString() + ")"; });

  nb::class_<rt::TensorShape>(m, "TensorShape")
      .def("__init__", [](rt::TensorShape *S, nb::args Dims) {
        if (Dims.size() == 1 && !PyIndex_Check(Dims[0].ptr()) && !nb::isinstance<nb::str>(Dims[0]) &&
            !nb::isinstance<rt::Expr>(Dims[0]))
          new (S) rt::TensorShape(toShape(Dims[0]));
        else
          new (S) rt::TensorShape(toShape(Dims));
      })
      .def_prop_ro("rank", &rt::TensorShape::getRank)
      .def_prop_ro("dynamic", &rt::TensorShape::isDynamic)
      .def_prop_ro("size", [](const rt::TensorShape &S) { return exprValue(S.getElementCount()); })
      .def_prop_ro("strides",
                   [](const rt::TensorShape &S) {
                     nb::list L;
                     for (const rt::Expr &E : S.getStrides())
                       L.append(exprValue(E));
                     return L;
                   })
      .def_prop_ro("dims", &rt::TensorShape::getDims)
      .def("get_stride", [](const rt::TensorShape &S, size_t I) {
        if (I >= S.getRank())
          throw nb::index_error("get_stride: dimension out of range");
        return exprValue(S.getStride(I));
      }, "dim"_a)
      .def("is_compatible", [](const rt::TensorShape &S, nb::handle O) { return S.isCompatible(toShape(O)); },
           "other"_a)
      .def("resolve", &rt::TensorShape::resolve, "variables"_a)
      .def("__len__", &rt::TensorShape::getRank)
      .def("__getitem__",
           [](const rt::TensorShape &S, Py_ssize_t I) {
             const Py_ssize_t N = (Py_ssize_t)S.getRank();
             if (I < 0)
               I += N;
             if (I < 0 || I >= N)
               throw nb::index_error("TensorShape index out of range");
             return exprValue(S[(size_t)I]);
           })
      .def("__eq__",
           [](const rt::TensorShape &A, nb::handle B) {
             try {
               return A == toShape(B);
             } catch (...) {
               PyErr_Clear();
               return false;
             }
           })
      .def("__ne__",
           [](const rt::TensorShape &A, nb::handle B) {
             try {
               return A != toShape(B);
             } catch (...) {
               PyErr_Clear();
               return true;
             }
           })
      .def("__hash__", [](const rt::TensorShape &S) { return nb::hash(nb::str(S.toString().c_str())); })
      .def("__str__", &rt::TensorShape::toString)
      .def("__repr__", [](const rt::TensorShape &S) { return "TensorShape(" + S.toString() + ")"; });

  // Tensor metadata.
  nb::class_<rt::QuantParam>(m, "QuantParam")
      .def_ro("scale", &rt::QuantParam::Scale)
      .def_ro("zero_point", &rt::QuantParam::ZeroPoint)
      .def("__repr__", [](const rt::QuantParam &P) {
        return "QuantParam(scale=" + std::to_string(P.Scale) + ", zero_point=" + std::to_string(P.ZeroPoint) + ")";
      });
  nb::class_<rt::QuantScheme>(m, "QuantScheme")
      .def_prop_ro("per_channel", &rt::QuantScheme::isPerChannel)
      .def_prop_ro("axis", &rt::QuantScheme::getAxis)
      .def_prop_ro("storage_type", &rt::QuantScheme::getStorageType)
      .def("get_param", [](const rt::QuantScheme &S, size_t I) {
        if (I >= S.size())
          throw nb::index_error("get_param: index out of range");
        return S.getParam(I);
      }, "index"_a = 0)
      .def("__len__", &rt::QuantScheme::size)
      .def("__getitem__", [](const rt::QuantScheme &S, size_t I) {
        if (I >= S.size())
          throw nb::index_error("QuantScheme index out of range");
        return S[I];
      })
      .def("__str__", &rt::QuantScheme::toString);

  nb::class_<rt::TensorInfo>(m, "TensorInfo")
      .def_ro("name", &rt::TensorInfo::Name)
      .def_ro("shape", &rt::TensorInfo::Shape)
      .def_ro("type", &rt::TensorInfo::Type)
      .def_ro("alignment", &rt::TensorInfo::Alignment)
      .def_ro("padding", &rt::TensorInfo::Padding)
      .def_prop_ro("size", &rt::TensorInfo::getTensorSize)
      .def_prop_ro("scheme",
                   [](const rt::TensorInfo &I) -> nb::object {
                     if (!I.Scheme)
                       return nb::none();
                     return nb::cast(rt::QuantScheme(*I.Scheme));
                   })
      .def_ro("opt_out", &rt::TensorInfo::OptOut)
      .def_ro("constant", &rt::TensorInfo::Constant)
      .def_ro("resizable", &rt::TensorInfo::Resizable)
      .def("__str__", &rt::TensorInfo::toString)
      .def("__repr__", [](const rt::TensorInfo &I) { return "<optimium.runtime.TensorInfo " + I.toString() + ">"; });

  nb::class_<rt::OpInfo>(m, "OpInfo")
      .def_ro("name", &rt::OpInfo::Name)
      .def_ro("type", &rt::OpInfo::Type)
      .def_ro("device", &rt::OpInfo::Device)
      .def_ro("inputs", &rt::OpInfo::Inputs)
      .def_ro("outputs", &rt::OpInfo::Outputs)
      .def("has_attribute", &rt::OpInfo::hasAttribute, "key"_a)
      .def("get_attribute", [](const rt::OpInfo &O, const std::string &K) { return attributeToPython(O.getAttribute(K)); },
           "key"_a)
      .def_prop_ro("attribute_keys", &rt::OpInfo::getAttributeKeys)
      .def("__str__", [](const rt::OpInfo &O) { return streamed(O); })
      .def("__repr__", [](const rt::OpInfo &O) { return "<optimium.runtime.OpInfo " + O.Name + " (" + O.Type + ")>"; });

  // Tensor.
  nb::class_<PyTensor>(m, "Tensor")
      .def_prop_ro("shape",
                   [](const PyTensor &P) {
                     requireValid(P, "shape");
                     return P.T.getShape();
                   })
      .def_prop_ro("type",
                   [](const PyTensor &P) {
                     requireValid(P, "type");
                     return P.T.getType();
                   })
      .def_prop_ro("element_count", [](const PyTensor &P) { return P.T.impl() ? P.T.getElementCount() : 0; })
      .def_prop_ro("nbytes", [](const PyTensor &P) { return P.T.impl() ? P.T.getTensorSize() : 0; })
      .def_prop_ro("is_user_buffer", [](const PyTensor &P) { return P.T.impl() && P.T.isUserBuffer(); })
      .def("fill", &tensorFill, "value"_a)
      .def("to_numpy", &tensorToNumpy)
      .def("clone", [](const PyTensor &P) {
        requireValid(P, "clone");
        return PyTensor{P.T.clone(), nb::none()};
      })
      .def("copy_to", [](const PyTensor &P, PyTensor &D) { P.T.copyTo(D.T); }, "dest"_a)
      .def("save", [](const PyTensor &P, const std::string &Path) { P.T.save(Path); }, "path"_a)
      .def("load", [](PyTensor &P, const std::string &Path) { P.T.load(Path); }, "path"_a)
      .def("release", [](PyTensor &P) {
        P.T.release();
        P.Owner = nb::none();
      })
      .def("__bool__", [](const PyTensor &P) { return static_cast<bool>(P.T); })
      .def("__str__", [](const PyTensor &P) { return streamed(P.T); })
      .def("__repr__", [](const PyTensor &P) {
        if (!P.T)
          return std::string("<optimium.runtime.Tensor (released)>");
        return "<optimium.runtime.Tensor " + std::string(rt::toString(P.T.getType())) + " " +
               P.T.getShape().toString() + ">";
      });
  m.def("_tensor_empty", [](rt::ElementType T, nb::handle Shape) { return PyTensor{rt::tensor(T, toShape(Shape)), nb::none()}; },
        "type"_a, "shape"_a);
  m.def("_tensor_from_buffer",
        [](nb::handle Obj, std::optional<rt::ElementType> T, bool Copy) {
          return tensorFromBuffer(Obj, T ? *T : rt::ElementType::Undefined, Copy, "rt.tensor");
        },
        "array"_a, "type"_a.none(), "copy"_a);
  m.def("_element_type_of_buffer", [](nb::handle Obj) -> nb::object {
    Py_buffer View;
    if (PyObject_GetBuffer(Obj.ptr(), &View, PyBUF_RECORDS_RO) != 0) {
      PyErr_Clear();
      return nb::none();
    }
    rt::ElementType T = typeFromFormat(View.format, View.itemsize);
    PyBuffer_Release(&View);
    if (T == rt::ElementType::Undefined)
      return nb::none();
    return nb::cast(T);
  });

  // Profiling.
  nb::enum_<rt::ProfileEventKind>(m, "ProfileEventKind")
      .value("MODEL_EXECUTE_BEGIN", rt::ProfileEventKind::ModelExecuteBegin)
      .value("MODEL_EXECUTE_END", rt::ProfileEventKind::ModelExecuteEnd)
      .value("LAYER_EXECUTE_BEGIN", rt::ProfileEventKind::LayerExecuteBegin)
      .value("LAYER_EXECUTE_END", rt::ProfileEventKind::LayerExecuteEnd)
      .value("LAUNCH_BEGIN", rt::ProfileEventKind::LaunchBegin)
      .value("LAUNCH_END", rt::ProfileEventKind::LaunchEnd)
      .value("DEVICE_EXECUTE_BEGIN", rt::ProfileEventKind::DeviceExecuteBegin)
      .value("DEVICE_EXECUTE_END", rt::ProfileEventKind::DeviceExecuteEnd)
      .value("COPY_BEGIN", rt::ProfileEventKind::CopyBegin)
      .value("COPY_END", rt::ProfileEventKind::CopyEnd)
      .value("QUEUE_BEGIN", rt::ProfileEventKind::QueueBegin)
      .value("QUEUE_END", rt::ProfileEventKind::QueueEnd)
      .value("WAIT_BEGIN", rt::ProfileEventKind::WaitBegin)
      .value("WAIT_END", rt::ProfileEventKind::WaitEnd);
  nb::class_<rt::ProfileEvent>(m, "ProfileEvent")
      .def_ro("kind", &rt::ProfileEvent::Kind)
      .def_prop_ro("timestamp",
                   [](const rt::ProfileEvent &E) { return (long long)E.TimeStamp.time_since_epoch().count(); })
      .def_ro("operation", &rt::ProfileEvent::Operation)
      .def_ro("thread_id", &rt::ProfileEvent::ThreadID)
      .def_ro("tensor_id", &rt::ProfileEvent::TensorID)
      .def_ro("source_device", &rt::ProfileEvent::SourceDevice)
      .def_ro("dest_device", &rt::ProfileEvent::DestDevice)
      .def("__repr__", [](const rt::ProfileEvent &E) {
        return std::string("<optimium.runtime.ProfileEvent ") + rt::toString(E.Kind) + " op=" +
               std::to_string(E.Operation) + " thread=" + std::to_string(E.ThreadID) + ">";
      });
  nb::class_<rt::ProfileDurations>(m, "ProfileDurations")
      .def_ro("model_name", &rt::ProfileDurations::ModelName)
      .def_ro("model_durations", &rt::ProfileDurations::ModelDurations)
      .def_ro("layer_durations", &rt::ProfileDurations::LayerDurations)
      .def_ro("copy_durations", &rt::ProfileDurations::CopyDurations)
      .def("__repr__", [](const rt::ProfileDurations &D) {
        return "<optimium.runtime.ProfileDurations of '" + D.ModelName + "': " +
               std::to_string(D.ModelDurations.size()) + " runs, " + std::to_string(D.LayerDurations.size()) +
               " layers>";
      });
  nb::class_<rt::LayerDuration>(m, "LayerDuration")
      .def_ro("name", &rt::LayerDuration::Name)
      .def_ro("type", &rt::LayerDuration::Type)
      .def_ro("operation", &rt::LayerDuration::Operation)
      .def_ro("count", &rt::LayerDuration::Count)
      .def_ro("total_ns", &rt::LayerDuration::TotalNs)
      .def_ro("min_ns", &rt::LayerDuration::MinNs)
      .def_ro("max_ns", &rt::LayerDuration::MaxNs)
      .def_ro("mean_ns", &rt::LayerDuration::MeanNs)
      .def("__repr__", [](const rt::LayerDuration &L) {
        return "<optimium.runtime.LayerDuration " + L.Name + " (" + L.Type + ") x" + std::to_string(L.Count) + ">";
      });

  // InferRequest.
  nb::class_<PyRequest>(m, "InferRequest")
      .def("infer", &requestInfer, "inputs"_a)
      .def(
          "wait",
          [](PyRequest &Q, long long Timeout) {
            if (Timeout < 0)
              throw nb::value_error("wait: timeout_us must be >= 0 (0 waits indefinitely)");
            nb::gil_scoped_release G;
            return Q.R.wait(std::chrono::microseconds(Timeout));
          },
          "timeout_us"_a = 0)
      .def_prop_ro("status", [](const PyRequest &Q) { return Q.R.getStatus(); })
      .def("set_callback", &requestSetCallback, "callback"_a.none())
      .def("cancel", [](PyRequest &Q) { Q.R.cancel(); })
      .def("get_output",
           [](PyRequest &Q, nb::handle Key) {
             if (nb::isinstance<nb::str>(Key))
               return outputTensor(Q, Q.R.getOutput(rt::StringRef(nb::cast<std::string>(Key))));
             if (!PyIndex_Check(Key.ptr()))
               throw nb::type_error("get_output: expected an output index (int) or name (str)");
             const int64_t I = nb::cast<int64_t>(Key);
             if (I < 0)
               throw nb::value_error("get_output: the index must be >= 0");
             return outputTensor(Q, Q.R.getOutput((size_t)I));
           },
           "index_or_name"_a)
      .def("get_tensor",
           [](PyRequest &Q, const std::string &Name) { return outputTensor(Q, Q.R.getTensor(rt::StringRef(Name))); },
           "name"_a)
      .def("set_tensor_shape",
           [](PyRequest &Q, const std::string &Name, nb::handle Shape) {
             Q.R.setTensorShape(rt::StringRef(Name), toShape(Shape));
           },
           "name"_a, "shape"_a)
      .def("apply_shape_changes", [](PyRequest &Q, bool Shrink) { Q.R.applyShapeChanges(Shrink); },
           "shrink_to_fit"_a = false)
      .def("set_resize_migration", &requestSetResizeMigration, "name"_a, "callback"_a.none())
      .def_prop_ro("model_name", [](const PyRequest &Q) { return Q.R.getModelName(); })
      .def("profile", &requestProfile, "inputs"_a, "repeat"_a = 100, "warmup"_a = 10, "warmup_time"_a = 1000000,
           "stop_threshold"_a = 0, "check_period"_a = 0, "event_buffer_size"_a = 0)
      .def("get_profile_events",
           [](const PyRequest &Q) {
             rt::ArrayRef<rt::ProfileEvent> E = Q.R.getProfileEvents();
             return std::vector<rt::ProfileEvent>(E.begin(), E.end());
           })
      .def("get_profile_durations", [](const PyRequest &Q) { return Q.R.getProfileDurations(); })
      .def("get_layer_durations", [](const PyRequest &Q) { return Q.R.getLayerDurations(); })
      .def_prop_ro("dropped_profile_events", [](const PyRequest &Q) { return Q.R.getDroppedProfileEvents(); })
      .def("__repr__", [](const PyRequest &Q) {
        return "<optimium.runtime.InferRequest of '" + Q.R.getModelName() + "' " +
               rt::toString(Q.R.getStatus()) + ">";
      });

  // Model.
  nb::class_<rt::Model>(m, "Model")
      .def_prop_ro("name", &rt::Model::getName)
      .def_prop_ro("input_names", [](const rt::Model &M) { return names(M.getInputNames()); })
      .def_prop_ro("output_names", [](const rt::Model &M) { return names(M.getOutputNames()); })
      .def("get_tensor", [](const rt::Model &M, const std::string &N) { return rt::TensorInfo(M.getTensorInfo(N)); },
           "name"_a)
      .def("get_input_tensor", [](const rt::Model &M, size_t I) { return rt::TensorInfo(M.getInputTensorInfo(I)); },
           "index"_a)
      .def("get_output_tensor", [](const rt::Model &M, size_t I) { return rt::TensorInfo(M.getOutputTensorInfo(I)); },
           "index"_a)
      .def_prop_ro("tensors", [](const rt::Model &M) { return M.getTensors().vec(); })
      .def_prop_ro("operations", [](const rt::Model &M) { return M.getOperations().vec(); })
      .def_prop_ro("is_dynamic", &rt::Model::isDynamic)
      .def("has_attribute", [](const rt::Model &M, const std::string &K) { return M.hasAttribute(K); }, "key"_a)
      .def("get_attribute", [](const rt::Model &M, const std::string &K) { return attributeToPython(M.getAttribute(K)); },
           "key"_a)
      .def_prop_ro("attribute_keys", [](const rt::Model &M) { return names(M.getAttributeKeys()); })
      .def(
          "infer_shape",
          [](const rt::Model &M, const std::string &Name, nb::handle Shapes) {
            if (nb::isinstance<nb::dict>(Shapes)) {
              std::map<std::string, rt::TensorShape> Map;
              for (auto KV : nb::borrow<nb::dict>(Shapes))
                Map[nb::cast<std::string>(KV.first)] = toShape(KV.second);
              return M.inferShape(Name, Map);
            }
            std::vector<rt::TensorShape> List;
            for (nb::handle H : nb::iter(Shapes))
              List.push_back(toShape(H));
            return M.inferShape(Name, rt::ArrayRef<rt::TensorShape>(List));
          },
          "name"_a, "input_shapes"_a)
      .def("create_request", [](const rt::Model &M) { return new PyRequest(M.createRequest(), M); })
      .def("__repr__", [](const rt::Model &M) { return "<optimium.runtime.Model '" + M.getName() + "'>"; });

  m.def(
      "load_model",
      [](nb::handle Path, nb::object Devices, bool Strict, bool MemOpt, bool Denormals,
         std::optional<std::string> SavePath, std::optional<std::string> Passphrase, int Threads, nb::object Cores,
         rt::SchedulerType Sched, int Spin, int SpinYield, bool Stealing, nb::object Capacities, bool IndexedSave) {
        rt::ModelLoadOptions O = loadOptions(Devices, Strict, MemOpt, Denormals, SavePath, Passphrase, Threads, Cores,
                                             Sched, Spin, SpinYield, Stealing, Capacities);
        O.IndexedIntermediateSave = IndexedSave;
        if (nb::isinstance<nb::bytes>(Path) || nb::isinstance<nb::bytearray>(Path) ||
            PyMemoryView_Check(Path.ptr())) {
          Py_buffer View;
          if (PyObject_GetBuffer(Path.ptr(), &View, PyBUF_SIMPLE) != 0)
            throw nb::python_error();
          // The model keeps its own copy: constants point into it, and the Python object may be
          // freed or (bytearray) changed as soon as this call returns.
          auto Data = std::make_shared<std::vector<uint8_t>>(static_cast<const uint8_t *>(View.buf),
                                                             static_cast<const uint8_t *>(View.buf) + View.len);
          PyBuffer_Release(&View);
          nb::gil_scoped_release G;
          return rt::detail::loadModelOwningBytes(std::move(Data), O);
        }
        std::string P = nb::cast<std::string>(nb::str(nb::module_::import_("os").attr("fspath")(Path)));
        nb::gil_scoped_release G;
        return rt::loadModel(P, O);
      },
      "path"_a, "devices"_a = nb::none(), "strict"_a = false, "memory_optimization"_a = true,
      "disable_denormals"_a = true, "intermediate_save_path"_a = nb::none(), "passphrase"_a = nb::none(),
      "threads"_a = 0, "cores"_a = nb::none(), "scheduler_type"_a = rt::SchedulerType::Auto,
      "spin_iterations"_a = rt::kDefaultSpinIterations, "spin_yield_iterations"_a = rt::kDefaultSpinYieldIterations,
      "enable_work_stealing"_a = true, "resizable_capacities"_a = nb::none(),
      "indexed_intermediate_save"_a = false);
}
