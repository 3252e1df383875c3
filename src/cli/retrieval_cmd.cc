// rltrade cli: `rltrade retrieval synth|train|eval|bench` — the two-tower retrieval
// trainer (src/retrieval/).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/json_text.h"
#include "core/options.h"
#include "retrieval/bench.h"
#include "retrieval/run.h"
#include "retrieval/synth.h"

namespace rlt::cli {
namespace {

using json = nlohmann::json;

struct SynthFlags {
  std::string pairs, bank;
  retrieval::SynthOptions options;
  std::vector<std::string> set;
};

int RunSynth(const SynthFlags& f) {
  retrieval::SynthOptions o = f.options;
  for (const std::string& kv : f.set) {
    Result<std::pair<std::string, std::string>> a = SplitAssignment(kv);
    if (!a.ok()) return ReportError(a.status());
    Status st = SetOptions(o, {{a->first, a->second}}, "--set");
    if (!st.ok()) return ReportError(st);
  }
  const Status st = retrieval::WriteSynth(o, f.pairs, f.bank);
  if (!st.ok()) return ReportError(st);
  std::cout << fmt::format(
      "wrote {} ({} training and {} validation pairs of {} x {}) and {} "
      "({} bank vectors)\n",
      f.pairs, o.n, o.n_val > 0 ? o.n_val : std::max<int64_t>(1, o.n / 8), o.t, o.d, f.bank,
      o.bank_size);
  return 0;
}

struct TrainFlags {
  retrieval::RetrievalTrainRequest request;
};

int RunTrain(const TrainFlags& f) {
  Result<retrieval::RetrievalTrainResult> r = retrieval::RunRetrievalTrain(f.request);
  if (!r.ok()) return ReportError(r.status());
  std::string line = fmt::format("run {}: {} epochs, {:.2f} it/s (median)", r->run_dir,
                                 r->epochs_done, r->it_per_sec);
  for (const auto& [k, v] : r->final_metrics.recall)
    line += fmt::format(", recall@{} {:.4f}", k, v);
  line += fmt::format(", mrr {:.4f}", r->final_metrics.mrr);
  std::cout << line << "\n";
  if (r->gated) {
    std::cerr << r->gate_message << "\n";
    return 3;
  }
  return 0;
}

struct EvalFlags {
  retrieval::RetrievalEvalRequest request;
  bool json = false;
};

int RunEval(const EvalFlags& f) {
  Result<retrieval::RetrievalMetrics> r = retrieval::RunRetrievalEval(f.request);
  if (!r.ok()) return ReportError(r.status());
  if (f.json) {
    json j;
    for (const auto& [k, v] : r->recall) j["recall@" + std::to_string(k)] = v;
    j["mrr"] = r->mrr;
    j["queries"] = r->queries;
    j["checkpoint"] = f.request.checkpoint;
    std::cout << JsonText(j, 2) << "\n";
  } else {
    for (const auto& [k, v] : r->recall) std::cout << fmt::format("recall@{}  {:.4f}\n", k, v);
    std::cout << fmt::format("mrr        {:.4f}\nqueries    {}\n", r->mrr, r->queries);
  }
  return 0;
}

struct BenchFlags {
  retrieval::RetrievalBenchRequest request;
  bool reference = false;
  std::string reference_script = "bench/twotower_reference.py";
  bool json = false;
};

int RunBench(BenchFlags f) {
  if (f.reference) f.request.reference = f.reference_script;
  Result<retrieval::RetrievalBenchResult> r = retrieval::RunRetrievalBench(f.request);
  if (!r.ok()) return ReportError(r.status());
  const double fraction = r->peak_gflops > 0 ? r->gflops / r->peak_gflops : 0.0;
  if (f.json) {
    json j = {{"it_per_sec", r->it_per_sec},
              {"it_per_sec_mining", r->it_per_sec_mining},
              {"mining_ratio", r->it_per_sec > 0 ? r->it_per_sec_mining / r->it_per_sec : 0.0},
              {"gflop_per_iter", r->gflop_per_iter},
              {"gflops", r->gflops},
              {"peak_gflops", r->peak_gflops},
              {"fraction_of_peak", fraction},
              {"threads", r->threads},
              {"batch", r->batch},
              {"t", r->steps},
              {"d", r->dim},
              {"hidden", r->hidden},
              {"memory_bank", r->memory_bank},
              {"bank_size", r->bank_size},
              {"iters", f.request.iters}};
    if (f.reference) {
      j["reference_it_per_sec"] = r->reference_it_per_sec;
      j["speedup_vs_reference"] =
          r->reference_it_per_sec > 0 ? r->it_per_sec / r->reference_it_per_sec : 0.0;
      j["reference"] = json::parse(r->reference_output, nullptr, false);
    }
    std::cout << JsonText(j, 2) << "\n";
    return 0;
  }
  std::cout << fmt::format(
      "two-tower training, batch {} x T {} x D {}, H {}, memory bank {}, bank {}, {} "
      "thread(s):\n  mining off  {:.3f} it/s  ({:.1f} GFLOP/iter, {:.1f} GFLOP/s = {:.0f}% of "
      "the {:.1f} GFLOP/s matmul peak)\n  mining on   {:.3f} it/s  ({:.1f}% of mining off)\n",
      r->batch, r->steps, r->dim, r->hidden, r->memory_bank, r->bank_size, r->threads,
      r->it_per_sec, r->gflop_per_iter, r->gflops, 100 * fraction, r->peak_gflops,
      r->it_per_sec_mining, 100 * r->it_per_sec_mining / std::max(r->it_per_sec, 1e-12));
  if (f.reference) {
    std::cout << fmt::format("  reference   {:.3f} it/s (PyTorch, {}): rltrade {:.2f}x\n",
                             r->reference_it_per_sec, f.reference_script,
                             r->it_per_sec / std::max(r->reference_it_per_sec, 1e-12));
  }
  return 0;
}

}  // namespace

void RegisterRetrievalCommands(CLI::App& app, Action* action) {
  CLI::App* r = app.add_subcommand("retrieval", "Two-tower retrieval: synth, train, eval, bench");
  r->require_subcommand(1);

  auto sf = std::make_shared<SynthFlags>();
  CLI::App* synth = r->add_subcommand(
      "synth", "Write a structured synthetic pairs file and bank (retrieval/synth.h)");
  synth->add_option("--pairs", sf->pairs, "output .npz of X_train, Y_train, X_val, Y_val")
      ->required();
  synth->add_option("--bank", sf->bank, "output .npz of vectors and ids")->required();
  synth->add_option("--n", sf->options.n, "training pairs")->capture_default_str();
  synth->add_option("--n-val", sf->options.n_val, "validation pairs (0: n / 8)")
      ->capture_default_str();
  synth->add_option("--t", sf->options.t, "steps per context")->capture_default_str();
  synth->add_option("--d", sf->options.d, "vector dimensions")->capture_default_str();
  synth->add_option("--bank-size", sf->options.bank_size, "bank vectors")->capture_default_str();
  synth->add_option("--seed", sf->options.seed, "random seed")->capture_default_str();
  synth->add_option("--dtype", sf->options.dtype, "float32 or float16")->capture_default_str();
  synth->add_option("--set", sf->set,
                    "generator setting key=value (slots, speeds, slot_weight, noise), repeatable");
  synth->callback([sf, action] { *action = [sf] { return RunSynth(*sf); }; });

  auto tf = std::make_shared<TrainFlags>();
  CLI::App* train = r->add_subcommand("train", "Train a two-tower model from a config");
  train->add_option("config", tf->request.config, "CONFIG.toml");
  train->add_option("--set", tf->request.sets, "override section.key=value, repeatable");
  train->add_option("--run-dir", tf->request.run_dir,
                    "run directory (default runs/retrieval-<time>)");
  train->add_option("--resume", tf->request.resume, "continue the run in this directory");
  train->add_flag("--quiet", tf->request.quiet, "no progress lines");
  train->callback([tf, action] {
    *action = [tf] {
      if (tf->request.config.empty() == tf->request.resume.empty()) {
        return ReportError(Status::InvalidArgument(
            "give a CONFIG to start a run or --resume RUN_DIR to continue one (not both)"));
      }
      return RunTrain(*tf);
    };
  });

  auto ef = std::make_shared<EvalFlags>();
  CLI::App* eval = r->add_subcommand("eval", "Recall@k and MRR of a run's model on validation");
  eval->add_option("run_dir", ef->request.run_dir, "RUN_DIR")->required();
  eval->add_option("--pairs", ef->request.pairs, "pairs .npz (default: the run's)");
  eval->add_option("--bank", ef->request.bank, "bank .npz (default: the run's)");
  eval->add_option("--checkpoint", ef->request.checkpoint, "best, final or last")
      ->capture_default_str();
  eval->add_flag("--json", ef->json, "print JSON");
  eval->callback([ef, action] { *action = [ef] { return RunEval(*ef); }; });

  auto bf = std::make_shared<BenchFlags>();
  CLI::App* bench = r->add_subcommand(
      "bench", "Training it/s with mining off and on (and the PyTorch reference's)");
  bench->add_option("--config", bf->request.config, "CONFIG.toml for the shapes (optional)");
  bench->add_option("--set", bf->request.sets,
                    "override section.key=value ([bench] t, d: the data's shape)");
  bench->add_option("--iters", bf->request.iters, "timed micro-batches per measurement")
      ->capture_default_str();
  bench->add_option("--warmup", bf->request.warmup, "untimed micro-batches first")
      ->capture_default_str();
  bench->add_option("--threads", bf->request.threads, "threads (0: the config's)")
      ->capture_default_str();
  bench->add_option("--bank-size", bf->request.bank_size, "bank vectors")->capture_default_str();
  bench->add_option("--negatives", bf->request.negatives, "hard negatives per query (mining on)")
      ->capture_default_str();
  bench->add_flag("--reference", bf->reference,
                  "also run the PyTorch reference (needs Debian's python3-torch)");
  bench->add_option("--reference-script", bf->reference_script, "path of the reference script")
      ->capture_default_str();
  bench->add_option("--python", bf->request.python, "Python interpreter for the reference")
      ->capture_default_str();
  bench->add_flag("--json", bf->json, "print JSON");
  bench->callback([bf, action] { *action = [bf] { return RunBench(*bf); }; });
}

}  // namespace rlt::cli
