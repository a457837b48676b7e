// Element types and rt.Tensor: the ElementType enum, numpy buffers in and out (zero-copy where
// possible), fill, and the helpers the package's rt.tensor() builds on.
#include "Bindings.h"

#include <cstring>

namespace optimium {
namespace python {

using namespace nb::literals;

// ---------------------------------------------------------------- element types
size_t elementSize(rt::ElementType T) { return rt::getElementSize(T); }

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
  if (P.T.isDeviceTensor()) // in a device's memory: a host copy first
    return tensorToNumpy(PyTensor{P.T.toHost(), nb::none()});
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

void bind_tensors(nb::module_ &m) {
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
      .def_prop_ro("is_device", [](const PyTensor &P) { return P.T.isDeviceTensor(); },
                   "Whether the data is in a device's own memory (a device output; to_host() copies it).")
      .def_prop_ro("device",
                   [](const PyTensor &P) {
                     requireValid(P, "device");
                     return P.T.getDevice();
                   })
      .def("to_host",
           [](const PyTensor &P) {
             requireValid(P, "to_host");
             return P.T.isDeviceTensor() ? PyTensor{P.T.toHost(), nb::none()} : P;
           })
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
}

} // namespace python
} // namespace optimium
