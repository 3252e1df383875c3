// rltrade python: pieces of the `rltrade._core` extension module (module.cc puts them
// together). LibTorch-free: environments, pricing, indicators, metrics.
#ifndef RLT_PYTHON_BINDINGS_H_
#define RLT_PYTHON_BINDINGS_H_

#include <pybind11/pybind11.h>

#include "core/status.h"

namespace rlt::python {

// Raises the Python exception for a failed Status: OSError for I/O, PermissionError for
// a refused request (e.g. evaluating an in-sample range), ValueError otherwise; `what`
// prefixes the message when not empty.
[[noreturn]] void Raise(const Status& status, const char* what = "");

void BindVecEnv(pybind11::module_& m);
void BindPricing(pybind11::module_& m);
void BindIndicators(pybind11::module_& m);
void BindMetrics(pybind11::module_& m);
// rltrade._train's paper session (paper_binding.cc; links the paper trader).
void BindPaper(pybind11::module_& m);

}  // namespace rlt::python

#endif  // RLT_PYTHON_BINDINGS_H_
