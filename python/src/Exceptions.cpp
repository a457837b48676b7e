// The runtime's exception classes as Python exceptions (section 12), and the translation of C++
// exceptions into them.
#include "Bindings.h"

namespace optimium {
namespace python {

using namespace nb::literals;

namespace {

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

} // namespace

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

void bind_exceptions(nb::module_ &m) {
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
}

} // namespace python
} // namespace optimium
