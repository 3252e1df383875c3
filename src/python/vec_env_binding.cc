// rltrade python: the vector environment behind `rltrade.make_vec` (python/rltrade/vector.py
// adds the Python-level API on top).
//
// Built as `rltrade train` builds its environments (vec_env_setup.h).
//
// Buffers: observations, rewards, terminated and truncated are NumPy arrays created once,
// viewing the engine's buffers (zero copy). They are read-only and are overwritten by the
// next reset() or step(); their base object keeps the engine alive, so a view never
// dangles. step() releases the GIL while the environments step.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "env/registry.h"
#include "env/vec_env.h"
#include "python/bindings.h"
#include "python/vec_env_setup.h"

namespace py = pybind11;
using namespace pybind11::literals;

namespace rlt::python {
namespace {

// The engine and the NumPy views of its buffers. Shared with every view's base capsule.
struct Engine {
  std::unique_ptr<env::VecEnv> vec;
};

class PyVecEnv {
 public:
  PyVecEnv(const std::string& env_id, int num_envs, uint64_t seed, int num_threads,
           const std::vector<Setting>& settings) {
    Result<std::unique_ptr<env::VecEnv>> vec = MakeVecEnv(env_id, num_envs, num_threads, settings);
    if (!vec.ok()) Raise(vec.status(), "make_vec");
    engine_ = std::make_shared<Engine>();
    engine_->vec = std::move(vec).value();
    seed_ = seed;
    MakeViews();
  }

  env::VecEnv& vec() { return *engine_->vec; }

  py::tuple Reset(std::optional<uint64_t> seed) {
    CheckOpen();
    // Without a seed: the first reset uses make_vec's seed, later ones fresh streams
    // (seed + k * num_envs for the k-th), so every env's episodes stay distinct.
    const uint64_t s = seed.has_value() ? *seed : seed_ + resets_ * vec().num_envs();
    if (seed.has_value()) {
      seed_ = *seed;
      resets_ = 0;
    }
    ++resets_;
    {
      py::gil_scoped_release release;
      vec().Reset(s);
    }
    stepped_ = true;
    return py::make_tuple(obs_, Infos(false));
  }

  py::tuple Step(const py::array& actions) {
    CheckOpen();
    if (!stepped_) throw std::runtime_error("step() before reset(): call reset() first");
    const float* a = Actions(actions);
    {
      py::gil_scoped_release release;
      vec().Step(a);
    }
    return py::make_tuple(obs_, rewards_, terminated_, truncated_, Infos(true));
  }

  void Close() { closed_ = true; }

  py::dict Spec() const {
    const env::EnvSpec& spec = engine_->vec->spec();
    py::dict d;
    d["env_id"] = spec.id;
    d["num_envs"] = engine_->vec->num_envs();
    d["obs_dim"] = spec.obs_dim;
    d["discrete"] = spec.action.discrete;
    d["action_dim"] = spec.action.dim;
    d["n"] = spec.action.n;
    d["action_low"] = spec.action.low;
    d["action_high"] = spec.action.high;
    d["info_names"] = spec.info_names;
    d["threads"] = engine_->vec->threads();
    return d;
  }

  py::bytes SaveState() const { return py::bytes(engine_->vec->SaveState()); }
  void LoadState(const py::bytes& state) {
    const Status st = engine_->vec->LoadState(std::string(state), "load_state(state)");
    if (!st.ok()) Raise(st);
    stepped_ = true;
  }

 private:
  void CheckOpen() const {
    if (closed_) throw std::runtime_error("the environment is closed");
  }

  // A read-only NumPy view of `data` whose base keeps the engine alive.
  template <typename T>
  py::array View(const T* data, std::vector<py::ssize_t> shape,
                 std::vector<py::ssize_t> strides) const {
    auto* keep = new std::shared_ptr<Engine>(engine_);
    py::capsule base(keep, [](void* p) { delete static_cast<std::shared_ptr<Engine>*>(p); });
    py::array a(py::dtype::of<T>(), std::move(shape), std::move(strides), data, base);
    a.attr("flags").attr("writeable") = false;
    return a;
  }

  py::array BoolView(const uint8_t* data, py::ssize_t n) const {
    // uint8 0/1 buffers viewed as NumPy bool (same size, same values).
    auto* keep = new std::shared_ptr<Engine>(engine_);
    py::capsule base(keep, [](void* p) { delete static_cast<std::shared_ptr<Engine>*>(p); });
    py::array a(py::dtype("bool"), {n}, {static_cast<py::ssize_t>(1)}, data, base);
    a.attr("flags").attr("writeable") = false;
    return a;
  }

  void MakeViews() {
    env::VecEnv& v = *engine_->vec;
    const py::ssize_t n = v.num_envs(), od = v.obs_dim(), id = v.info_dim();
    obs_ = View(v.observations(), {n, od},
                {od * static_cast<py::ssize_t>(sizeof(float)), sizeof(float)});
    rewards_ = View(v.rewards(), {n}, {sizeof(float)});
    terminated_ = BoolView(v.terminated(), n);
    truncated_ = BoolView(v.truncated(), n);
    const std::vector<std::string>& names = v.spec().info_names;
    py::array_t<bool> all_true(n);
    for (py::ssize_t i = 0; i < n; ++i) all_true.mutable_at(i) = true;
    all_true.attr("flags").attr("writeable") = false;
    for (size_t k = 0; k < names.size(); ++k) {
      info_columns_.push_back(
          View(v.info() + k, {n}, {id * static_cast<py::ssize_t>(sizeof(double))}));
    }
    all_true_ = all_true;
  }

  // Actions as (N, dim) float32, checked: shape, dtype kind, NaN, discrete range.
  const float* Actions(const py::array& actions) {
    const env::ActionSpace& space = vec().spec().action;
    const py::ssize_t n = vec().num_envs(), dim = space.dim;
    const char kind = actions.dtype().kind();
    if (kind != 'f' && kind != 'i' && kind != 'u' && kind != 'b') {
      throw py::type_error("step(actions): expected a numeric array, got dtype " +
                           std::string(py::str(actions.dtype())));
    }
    const bool flat_ok = dim == 1 && actions.ndim() == 1 && actions.shape(0) == n;
    const bool full_ok = actions.ndim() == 2 && actions.shape(0) == n && actions.shape(1) == dim;
    if (!flat_ok && !full_ok) {
      std::string got = "(";
      for (py::ssize_t k = 0; k < actions.ndim(); ++k) {
        got += (k ? ", " : "") + std::to_string(actions.shape(k));
      }
      got += actions.ndim() == 1 ? ",)" : ")";
      throw py::value_error(
          "step(actions): expected shape (" + std::to_string(n) + ", " + std::to_string(dim) + ")" +
          (dim == 1 ? " or (" + std::to_string(n) + ",)" : std::string()) + ", got " + got);
    }
    auto converted = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(actions);
    if (!converted) throw py::error_already_set();
    actions_ = converted;
    const float* a = actions_.data();
    for (py::ssize_t i = 0; i < n * dim; ++i) {
      if (!std::isfinite(a[i])) {
        throw py::value_error("step(actions): env " + std::to_string(i / dim) + " has " +
                              (std::isnan(a[i]) ? "a NaN" : "an infinite") + " action");
      }
      if (space.discrete && (a[i] != std::floor(a[i]) || a[i] < 0 || a[i] >= space.n)) {
        throw py::value_error("step(actions): env " + std::to_string(i / dim) + " action " +
                              std::to_string(a[i]) + " is not one of the discrete actions 0.." +
                              std::to_string(space.n - 1));
      }
    }
    return a;
  }

  // Gymnasium 0.29's vector infos: per-env arrays with `_key` masks; after a step, the
  // finished envs' final_observation / final_info (object arrays, None elsewhere).
  py::dict Infos(bool after_step) {
    env::VecEnv& v = vec();
    py::dict infos;
    const std::vector<std::string>& names = v.spec().info_names;
    for (size_t k = 0; k < names.size(); ++k) {
      infos[py::str(names[k])] = info_columns_[k];
      infos[py::str("_" + names[k])] = all_true_;
    }
    if (!after_step) return infos;
    const int n = v.num_envs();
    int done = 0;
    for (int i = 0; i < n; ++i) done += v.done(i) ? 1 : 0;
    if (done == 0) return infos;
    const py::module_ np = Numpy();
    py::array final_obs = np.attr("empty")(n, "dtype"_a = "object");
    py::array final_info = np.attr("empty")(n, "dtype"_a = "object");
    py::array_t<bool> mask(n);
    const int od = v.obs_dim(), id = v.info_dim();
    for (int i = 0; i < n; ++i) {
      mask.mutable_at(i) = v.done(i);
      if (!v.done(i)) {
        final_obs[py::int_(i)] = py::none();
        final_info[py::int_(i)] = py::none();
        continue;
      }
      py::array_t<float> last(od);
      std::copy_n(v.terminal_observations() + static_cast<int64_t>(i) * od, od,
                  last.mutable_data());
      final_obs[py::int_(i)] = last;
      py::dict d;
      for (int k = 0; k < id; ++k) {
        d[py::str(names[k])] = v.terminal_info()[static_cast<int64_t>(i) * id + k];
      }
      d["episode_return"] = v.episode_returns()[i];
      d["episode_length"] = v.episode_lengths()[i];
      final_info[py::int_(i)] = d;
    }
    infos["final_observation"] = final_obs;
    infos["_final_observation"] = mask;
    infos["final_info"] = final_info;
    infos["_final_info"] = mask;
    return infos;
  }

  // Looked up per call (a dict lookup): a static py::object would be destroyed after the
  // interpreter has finalised.
  static py::module_ Numpy() { return py::module_::import("numpy"); }

  std::shared_ptr<Engine> engine_;
  py::array obs_, rewards_, terminated_, truncated_, all_true_;
  std::vector<py::array> info_columns_;
  py::array_t<float, py::array::c_style | py::array::forcecast> actions_;
  uint64_t seed_ = 0, resets_ = 0;
  bool stepped_ = false, closed_ = false;
};

}  // namespace

void BindVecEnv(py::module_& m) {
  py::class_<PyVecEnv>(m, "VecEnvCore")
      .def(py::init<const std::string&, int, uint64_t, int, const std::vector<Setting>&>(),
           py::arg("env_id"), py::arg("num_envs"), py::arg("seed"), py::arg("num_threads"),
           py::arg("settings"))
      .def("reset", &PyVecEnv::Reset, py::arg("seed") = py::none())
      .def("step", &PyVecEnv::Step, py::arg("actions"))
      .def("close", &PyVecEnv::Close)
      .def("spec", &PyVecEnv::Spec)
      .def("save_state", &PyVecEnv::SaveState)
      .def("load_state", &PyVecEnv::LoadState, py::arg("state"));
  m.def("env_ids", [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const env::EnvEntry& e : env::EnvRegistry()) out.emplace_back(e.id, e.summary);
    return out;
  });
}

}  // namespace rlt::python
