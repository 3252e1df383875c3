// rltrade python: Status -> Python exception (see bindings.h); linked into both
// extension modules.
#include <string>

#include "python/bindings.h"

namespace py = pybind11;

namespace rlt::python {

void Raise(const Status& status, const char* what) {
  std::string text = status.message();
  if (what != nullptr && *what != '\0') text = std::string(what) + ": " + text;
  PyObject* type = PyExc_ValueError;
  if (status.code() == Status::Code::kIoError) type = PyExc_OSError;
  if (status.code() == Status::Code::kRefused) type = PyExc_PermissionError;
  PyErr_SetString(type, text.c_str());
  throw py::error_already_set();
}

}  // namespace rlt::python
