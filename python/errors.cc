// lancelet's errors as Python exceptions: LanceletError and one subclass per ErrorKind.
#include <string>

#include "bindings.h"
#include "lancelet/sql.h"

namespace lancelet::python {

namespace {

// Set by RegisterErrors: the Python class of each ErrorKind.
PyObject* g_error_types[6] = {};

PyObject* ErrorType(ErrorKind kind) { return g_error_types[static_cast<int>(kind)]; }

}  // namespace

[[noreturn]] void ThrowValue(const std::string& message) { throw Error(ErrorKind::kInvalidArgument, message); }

void RegisterErrors(py::module_& m) {
  // LanceletError and one subclass per kind; bad input is also a ValueError, a missing
  // thing a LookupError and an operating-system failure an OSError.
  PyObject* base = PyErr_NewException("lancelet.LanceletError", PyExc_Exception, nullptr);
  m.attr("LanceletError") = py::handle(base);
  auto make = [&](ErrorKind kind, const char* name, PyObject* also) {
    py::tuple bases = also ? py::make_tuple(py::handle(base), py::handle(also)) : py::make_tuple(py::handle(base));
    PyObject* type = PyErr_NewException((std::string("lancelet.") + name).c_str(), bases.ptr(), nullptr);
    g_error_types[static_cast<int>(kind)] = type;
    m.attr(name) = py::handle(type);
  };
  make(ErrorKind::kInvalidArgument, "InvalidArgumentError", PyExc_ValueError);
  make(ErrorKind::kNotFound, "NotFoundError", PyExc_LookupError);
  make(ErrorKind::kCorrupt, "CorruptError", nullptr);
  make(ErrorKind::kNotSupported, "NotSupportedError", nullptr);
  make(ErrorKind::kConflict, "ConflictError", nullptr);
  make(ErrorKind::kIo, "IOError", PyExc_OSError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const SqlError& e) {
      PyErr_SetString(ErrorType(e.kind()), e.Render().c_str());
    } catch (const Error& e) {
      PyErr_SetString(ErrorType(e.kind()), e.what());
    }
  });
}

}  // namespace lancelet::python
