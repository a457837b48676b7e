// Symbolic shapes and tensor metadata: Expr, TensorShape, QuantParam, QuantScheme, TensorInfo, OpInfo
// (and model/op attributes as Python values).
#include "Bindings.h"

#include <vector>

namespace optimium {
namespace python {

using namespace nb::literals;

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

void bind_shapes(nb::module_ &m) {
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
}

} // namespace python
} // namespace optimium
