// rltrade python: the `rltrade._core` extension module (see bindings.h). The Python
// package (python/rltrade/) wraps it; users import `rltrade`.
#include <pybind11/pybind11.h>

#include "python/bindings.h"

namespace py = pybind11;

PYBIND11_MODULE(_core, m) {
  m.doc() = "rltrade's compiled core: vector environments, pricing, indicators, metrics";
  m.attr("__version__") = RLT_PROJECT_VERSION;
  rlt::python::BindVecEnv(m);
  rlt::python::BindPricing(m);
  rlt::python::BindIndicators(m);
  rlt::python::BindMetrics(m);
}
