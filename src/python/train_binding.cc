// rltrade python: `rltrade._train`, the runs behind rltrade.train and rltrade.evaluate,
// and rltrade.paper's session (paper_binding.cc). It links the learner and the paper
// trader (no LibTorch: the torch backend is a plug-in loaded on use), so the package
// imports it only when one of them is used. The work is
// the CLI's own: train::RunTraining and evalrun::RunEvaluation (on a multi-seed run the
// ensemble of its seeds, evalrun::RunEnsembleEvaluation), with the same checks and refusals.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <csignal>
#include <optional>
#include <string>
#include <vector>

#include "evalrun/ensemble.h"
#include "evalrun/evalrun.h"
#include "evalrun/seeds_eval.h"
#include "python/bindings.h"
#include "train/seeds.h"
#include "train/train.h"

namespace py = pybind11;

namespace {

py::tuple Train(const std::string& config, const std::string& run_dir,
                const std::vector<std::string>& overrides, const std::string& resume, bool quiet) {
  rlt::train::TrainRequest r;
  r.config_path = config;
  r.run_dir = run_dir;
  r.overrides = overrides;
  r.resume_dir = resume;
  r.quiet = quiet;
  std::optional<rlt::Result<rlt::train::TrainOutcome>> result;
  {
    // Training installs its own SIGINT/SIGTERM handlers (a checkpoint, then return) and
    // restores Python's afterwards.
    py::gil_scoped_release release;
    result.emplace(rlt::train::RunTraining(r));
  }
  const rlt::Result<rlt::train::TrainOutcome>& out = *result;
  if (!out.ok()) rlt::python::Raise(out.status(), "train");
  if (out->exit_code == 130) {
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }
  return py::make_tuple(out->run_dir, out->total_steps, out->exit_code);
}

// A multi-seed run: the ensemble of its seeds (RunEnsembleEvaluation), or the seed `seed`
// names; one run otherwise. The CLI's flag rules (evalrun::CheckEnsembleFlags).
rlt::Result<rlt::evalrun::EvalOutcome> EvaluateRun(const rlt::evalrun::EvalRequest& r,
                                                   std::optional<uint64_t> seed,
                                                   const std::string& ensemble) {
  RLT_ASSIGN_OR_RETURN(const std::optional<rlt::train::SeedsIndex> index,
                       rlt::train::ReadSeedsIndex(r.run_dir));
  RLT_RETURN_IF_ERROR(
      rlt::evalrun::CheckEnsembleFlags(ensemble, seed.has_value(), index.has_value(), r.run_dir));
  if (index && !seed && r.policy == "trained") {
    rlt::evalrun::SeedsEvalRequest s;
    s.eval = r;
    s.seeds = index->seeds;
    s.ensemble = ensemble;
    return rlt::evalrun::RunEnsembleEvaluation(s);
  }
  rlt::evalrun::EvalRequest one = r;
  RLT_ASSIGN_OR_RETURN(one.run_dir, rlt::train::ResolveSeedRun(r.run_dir, seed));
  return rlt::evalrun::RunEvaluation(one);
}

// (summary.json's text, the directory the evaluation wrote)
py::tuple Evaluate(const std::string& run_dir, const std::string& range, const std::string& policy,
                   bool allow_in_sample, int episodes, const std::string& checkpoint,
                   const std::string& data_file, bool allow_data_change, bool allow_mismatch,
                   std::optional<uint64_t> seed, const std::string& ensemble,
                   const std::string& symbol) {
  rlt::evalrun::EvalRequest r;
  r.run_dir = run_dir;
  r.range = range;
  r.policy = policy;
  r.allow_in_sample = allow_in_sample;
  r.episodes = episodes;
  r.checkpoint = checkpoint;
  r.data_file = data_file;
  r.allow_data_change = allow_data_change;
  r.allow_mismatch = allow_mismatch;
  r.symbol = symbol;
  std::optional<rlt::Result<rlt::evalrun::EvalOutcome>> result;
  {
    py::gil_scoped_release release;
    result.emplace(EvaluateRun(r, seed, ensemble));
  }
  const rlt::Result<rlt::evalrun::EvalOutcome>& out = *result;
  if (!out.ok()) rlt::python::Raise(out.status(), "evaluate");
  return py::make_tuple(out->summary_json, out->out_dir);
}

}  // namespace

PYBIND11_MODULE(_train, m) {
  m.doc() = "rltrade's training and evaluation runs and the paper session";
  m.def("train", &Train, py::arg("config"), py::arg("run_dir"), py::arg("overrides"),
        py::arg("resume"), py::arg("quiet"));
  m.def("evaluate", &Evaluate, py::arg("run_dir"), py::arg("range"), py::arg("policy"),
        py::arg("allow_in_sample"), py::arg("episodes"), py::arg("checkpoint"),
        py::arg("data_file"), py::arg("allow_data_change"), py::arg("allow_mismatch"),
        py::arg("seed"), py::arg("ensemble"), py::arg("symbol"));
  rlt::python::BindPaper(m);
}
