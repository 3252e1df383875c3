// rltrade retrieval: train and eval runs (see run.h).
#include "retrieval/run.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "config/config.h"
#include "core/file_io.h"
#include "core/json_parse.h"
#include "core/json_text.h"
#include "core/printable.h"
#include "core/proc_stats.h"
#include "retrieval/npz_data.h"
#include "retrieval/trainer.h"
#include "runlog/atomic_dir.h"
#include "runlog/manifest.h"

namespace rlt::retrieval {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct Bound {
  TrainerSettings settings;
  DataFiles data;
  config::Config config;
};

Result<Bound> BindConfig(config::Config config) {
  Bound b;
  config.ResolvePaths("data", PathOptions(DataFiles()));
  RLT_RETURN_IF_ERROR(config.CheckSections({"run", "data", "model", "train", "mining", "eval"}));
  RLT_RETURN_IF_ERROR(config.Bind("run", b.settings.run));
  RLT_RETURN_IF_ERROR(config.Bind("data", b.data));
  RLT_RETURN_IF_ERROR(config.Bind("model", b.settings.model));
  RLT_RETURN_IF_ERROR(config.Bind("train", b.settings.train));
  RLT_RETURN_IF_ERROR(config.Bind("mining", b.settings.mining));
  RLT_RETURN_IF_ERROR(config.Bind("eval", b.settings.eval));
  if (b.data.pairs.empty() || b.data.bank.empty()) {
    return Status::InvalidArgument(
        "[data] pairs and [data] bank must name the .npz files (e.g. --set data.pairs=pairs.npz "
        "--set data.bank=bank.npz; `rltrade retrieval synth` writes a synthetic pair)");
  }
  // The resolved config: every key, defaults included.
  config.SetSection("run", b.settings.run);
  config.SetSection("data", b.data);
  config.SetSection("model", b.settings.model);
  config.SetSection("train", b.settings.train);
  config.SetSection("mining", b.settings.mining);
  config.SetSection("eval", b.settings.eval);
  b.config = std::move(config);
  return b;
}

// The largest k of [eval] ks (1 when empty: CheckSettings then refuses the empty list).
int LargestK(const EvalOptions& e) {
  return e.ks.empty() ? 1 : *std::max_element(e.ks.begin(), e.ks.end());
}

double MetricValue(const std::string& name, const EpochRecord& r) {
  if (name == "mrr") return r.mrr;
  return r.recall.at(std::stoi(name.substr(std::string("recall@").size())));
}

json RecordJson(const EpochRecord& r) {
  json j = {{"epoch", r.epoch},
            {"loss", r.loss},
            {"margin_loss", r.margin_loss},
            {"accuracy", r.accuracy},
            {"lr", r.lr},
            {"micro_batches", r.micro_batches},
            {"optimizer_steps", r.optimizer_steps},
            {"train_seconds", r.train_seconds},
            {"eval_seconds", r.eval_seconds},
            {"it_per_sec", r.it_per_sec},
            {"mining_busy_seconds", r.mining_busy_seconds},
            {"mining_wait_seconds", r.mining_wait_seconds}};
  if (r.evaluated) {
    for (const auto& [k, v] : r.recall) j["recall@" + std::to_string(k)] = v;
    j["mrr"] = r.mrr;
  }
  return j;
}

// Writes `name` (a directory of the run) atomically: the trainer's file, an optional
// metrics.json and a MANIFEST.
Status WriteCheckpoint(const std::string& run_dir, const std::string& name, const Trainer& t,
                       bool full_state, const json* metrics) {
  const std::string final_path = (fs::path(run_dir) / name).string();
  std::error_code ec;
  fs::create_directories(fs::path(final_path).parent_path(), ec);
  if (ec)
    return Status::IoError("cannot create " + fs::path(final_path).parent_path().string() + ": " +
                           ec.message());
  RLT_ASSIGN_OR_RETURN(runlog::StagingDir stage, runlog::StagingDir::Create(final_path));
  const fs::path dir(stage.path());
  if (full_state) {
    RLT_RETURN_IF_ERROR(t.Save((dir / "state.rtt").string()));
  } else {
    RLT_RETURN_IF_ERROR(t.SaveParameters((dir / "model.rtt").string()));
  }
  if (metrics != nullptr) {
    RLT_RETURN_IF_ERROR(
        WriteFileAtomic((dir / "metrics.json").string(), JsonText(*metrics, 2) + "\n"));
  }
  RLT_RETURN_IF_ERROR(runlog::WriteDirManifest(stage.path()));
  return stage.Commit(/*replace=*/true);
}

// history.jsonl without the lines of epochs >= `from` (a resume redoes them).
Status TrimHistory(const std::string& path, int from) {
  auto text = ReadFile(path);
  if (!text.ok()) return Status::Ok();  // none yet
  std::istringstream in(*text);
  std::string line, kept;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const json j = ParseJsonOrDiscarded<json>(line);
    if (j.is_discarded() || !j.is_object() || !j.contains("epoch") ||
        !j["epoch"].is_number_integer()) {
      return Status::DataError(path + ": a line that is not an epoch record: '" +
                               PrintableText(line, 80) + "'");
    }
    if (j["epoch"].get<int>() < from) kept += line + "\n";
  }
  return WriteFileAtomic(path, kept);
}

Status AppendLine(const std::string& path, const std::string& line) {
  std::string text;
  if (auto old = ReadFile(path); old.ok()) text = *old;
  return WriteFileAtomic(path, text + line + "\n");
}

std::string DefaultRunDir() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "runs/retrieval-%Y%m%d-%H%M%S", &tm);
  return buf;
}

// A progress line on stderr: rewritten in place on a terminal (at most once a second),
// one line per 10 s otherwise.
class Progress {
 public:
  explicit Progress(bool quiet) : quiet_(quiet), tty_(isatty(STDERR_FILENO) != 0) {}
  void Update(int epoch, int epochs, int64_t done, int64_t total, double it_per_sec) {
    if (quiet_) return;
    const auto now = std::chrono::steady_clock::now();
    const double since = std::chrono::duration<double>(now - last_).count();
    if (since < (tty_ ? 1.0 : 10.0) && done != total) return;
    last_ = now;
    const double left = (static_cast<double>(epochs - epoch - 1) * total + (total - done)) /
                        std::max(it_per_sec, 1e-9);
    const int64_t s = static_cast<int64_t>(std::ceil(left));
    std::fprintf(stderr, "%sepoch %d/%d batch %lld/%lld | %.2f it/s | ETA %lld:%02lld:%02lld%s",
                 tty_ ? "\r" : "", epoch + 1, epochs, static_cast<long long>(done),
                 static_cast<long long>(total), it_per_sec, static_cast<long long>(s / 3600),
                 static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60),
                 tty_ ? "" : "\n");
    std::fflush(stderr);
  }
  void Line(const std::string& text) {
    if (quiet_) return;
    std::fprintf(stderr, "%s%s\n", tty_ ? "\r" : "", text.c_str());
  }

 private:
  bool quiet_, tty_;
  std::chrono::steady_clock::time_point last_{};
};

std::string EpochSummary(const EpochRecord& r, int epochs) {
  std::ostringstream s;
  s.precision(4);
  s << "epoch " << r.epoch + 1 << "/" << epochs << ": loss " << r.loss << ", " << r.it_per_sec
    << " it/s";
  if (r.evaluated) {
    for (const auto& [k, v] : r.recall) s << ", recall@" << k << " " << v;
    s << ", mrr " << r.mrr;
  }
  return s.str();
}

// Prints what the data checks changed (e.g. duplicate bank rows dropped), whatever --quiet
// says: it changes what the metrics mean.
void PrintNotes(const RetrievalData& data) {
  for (const std::string& note : data.notes) std::fprintf(stderr, "note: %s\n", note.c_str());
}

// The training of a run whose directory exists and is locked: resumes from last/ when
// asked (recording a changed length in config.toml), then TrainEpochs.
Status TrainEpochs(const RetrievalTrainRequest& req, const std::string& run_dir, const Bound& bound,
                   const RetrievalData& data, Trainer& trainer, double best,
                   RetrievalTrainResult& result);

// config.toml, then the run's MANIFEST over it (each written atomically).
Status WriteConfig(const std::string& run_dir, const std::string& text) {
  RLT_RETURN_IF_ERROR(WriteFileAtomic((fs::path(run_dir) / "config.toml").string(), text));
  return runlog::WriteManifestOf(run_dir, {"config.toml"});
}

Status TrainRun(const RetrievalTrainRequest& req, const std::string& run_dir, const Bound& bound,
                const RetrievalData& data, Trainer& trainer, RetrievalTrainResult& result) {
  const bool resuming = !req.resume.empty();
  const int epochs = bound.settings.train.epochs;
  const std::string history = (fs::path(run_dir) / "history.jsonl").string();
  const std::string config_path = (fs::path(run_dir) / "config.toml").string();
  std::string previous_config;  // the config.toml this resume replaced
  double best = -1.0;
  if (resuming) {
    const std::string last = (fs::path(run_dir) / "last").string();
    if (!fs::exists(last)) {
      return Status::NotFound(run_dir +
                              " has no checkpoint to resume from (last/ is missing: "
                              "the run stopped before its first epoch ended); start it again");
    }
    RLT_RETURN_IF_ERROR(runlog::VerifyManifest(last, /*complete=*/true));
    RLT_RETURN_IF_ERROR(trainer.Load((fs::path(last) / "state.rtt").string()));
    if (trainer.next_epoch() > epochs) {
      return Status::Refused("--set train.epochs=" + std::to_string(epochs) + ": " + run_dir +
                             " has trained " + std::to_string(trainer.next_epoch()) +
                             " epochs already; a resumed run can only be extended (give "
                             "train.epochs >= " +
                             std::to_string(trainer.next_epoch()) + ")");
    }
    // config.toml says what the run trains: rewritten (atomically, then its MANIFEST)
    // when the resume changed train.epochs or run.threads, before training (so a resume
    // of a killed resume continues to the same length); put back if no epoch completes.
    const std::string text = bound.config.ToToml();
    RLT_ASSIGN_OR_RETURN(const std::string old, ReadFile(config_path));
    if (old != text) {
      RLT_RETURN_IF_ERROR(WriteConfig(run_dir, text));
      previous_config = old;
    }
    RLT_RETURN_IF_ERROR(TrimHistory(history, trainer.next_epoch()));
    const std::string best_metrics = (fs::path(run_dir) / "best" / "metrics.json").string();
    if (auto best_text = ReadFile(best_metrics); best_text.ok()) {
      const json j = ParseJsonOrDiscarded<json>(*best_text);
      if (j.is_object() && j.contains(bound.settings.eval.best_metric) &&
          j[bound.settings.eval.best_metric].is_number()) {
        best = j[bound.settings.eval.best_metric].get<double>();
      }
    }
  }
  const Status trained = TrainEpochs(req, run_dir, bound, data, trainer, best, result);
  if (!trained.ok() && !previous_config.empty() && result.epochs_done == 0) {
    const Status restored = WriteConfig(run_dir, previous_config);
    if (!restored.ok()) {
      return Status::IoError(trained.message() + "; putting back the previous " + config_path +
                             " failed too: " + restored.message());
    }
  }
  return trained;
}

// The epochs of a run from trainer.next_epoch() on: trains, checkpoints and evaluates.
Status TrainEpochs(const RetrievalTrainRequest& req, const std::string& run_dir, const Bound& bound,
                   const RetrievalData& data, Trainer& trainer, double best,
                   RetrievalTrainResult& result) {
  const int epochs = bound.settings.train.epochs;
  const std::string history = (fs::path(run_dir) / "history.jsonl").string();
  Progress progress(req.quiet);
  {
    char text[200];
    std::snprintf(text, sizeof text,
                  "training %lld pairs against a bank of %lld x %d; memory beyond the data: "
                  "about %.2f GB (estimate)",
                  static_cast<long long>(data.train.x->rows()),
                  static_cast<long long>(data.bank_rows), data.dim,
                  EstimateTrainingBytes(bound.settings, data) / 1e9);
    progress.Line(text);
  }
  std::vector<double> speeds;
  EpochRecord last_rec;
  while (trainer.next_epoch() < epochs) {
    const int epoch = trainer.next_epoch();
    const auto start = std::chrono::steady_clock::now();
    RLT_ASSIGN_OR_RETURN(EpochRecord rec, trainer.RunEpoch([&](int64_t done, int64_t total) {
      const double secs =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      progress.Update(epoch, epochs, done, total, done / std::max(secs, 1e-9));
    }));
    speeds.push_back(rec.it_per_sec);
    progress.Line(EpochSummary(rec, epochs));
    RLT_RETURN_IF_ERROR(AppendLine(history, JsonText(RecordJson(rec))));
    RLT_RETURN_IF_ERROR(WriteCheckpoint(run_dir, "last", trainer, true, nullptr));
    if ((epoch + 1) % bound.settings.run.checkpoint_every == 0) {
      RLT_RETURN_IF_ERROR(WriteCheckpoint(run_dir, "checkpoints/epoch_" + std::to_string(epoch),
                                          trainer, true, nullptr));
    }
    if (rec.evaluated) {
      json metrics = RecordJson(rec);
      const double value = MetricValue(bound.settings.eval.best_metric, rec);
      if (value > best) {
        best = value;
        RLT_RETURN_IF_ERROR(WriteCheckpoint(run_dir, "best", trainer, false, &metrics));
      }
      const EvalOptions& e = bound.settings.eval;
      if (!e.gate_metric.empty() && epoch >= e.gate_epoch &&
          MetricValue(e.gate_metric, rec) < e.gate_threshold) {
        result.gated = true;
        result.gate_message = "gate: " + e.gate_metric + " = " +
                              std::to_string(MetricValue(e.gate_metric, rec)) + " after epoch " +
                              std::to_string(epoch) + " is below [eval] gate_threshold " +
                              std::to_string(e.gate_threshold) + "; training stopped";
      }
    }
    last_rec = rec;
    result.epochs_done = epoch + 1;
    if (result.gated) break;
  }
  if (last_rec.evaluated || trainer.next_epoch() > 0) {
    if (!last_rec.evaluated) {
      const RetrievalMetrics m = trainer.Evaluate();
      last_rec.recall = m.recall;
      last_rec.mrr = m.mrr;
      last_rec.evaluated = true;
    }
    json metrics = RecordJson(last_rec);
    RLT_RETURN_IF_ERROR(WriteCheckpoint(run_dir, "final", trainer, false, &metrics));
    result.final_metrics.recall = last_rec.recall;
    result.final_metrics.mrr = last_rec.mrr;
    result.final_metrics.queries = data.val.x->rows();
  }
  if (!speeds.empty()) {
    std::sort(speeds.begin(), speeds.end());
    result.it_per_sec = speeds[speeds.size() / 2];
  }
  return Status::Ok();
}

}  // namespace

Result<RetrievalTrainResult> RunRetrievalTrain(const RetrievalTrainRequest& req) {
  const bool resuming = !req.resume.empty();
  std::string run_dir = resuming ? req.resume : req.run_dir;
  if (!resuming && !req.run_dir.empty() &&
      req.run_dir.find_first_not_of(' ') == std::string::npos) {
    return Status::InvalidArgument("--run-dir is empty: name a directory");
  }
  if (run_dir.empty()) run_dir = DefaultRunDir();
  config::Config cfg;
  if (resuming) {
    const std::string path = (fs::path(run_dir) / "config.toml").string();
    if (!fs::exists(path)) {
      return Status::NotFound(run_dir + " is not a retrieval run directory (no config.toml)");
    }
    RLT_RETURN_IF_ERROR(runlog::VerifyManifestFiles(run_dir, {"config.toml"}));
    RLT_ASSIGN_OR_RETURN(cfg, config::Config::LoadFile(path));
    for (const std::string& s : req.sets) {
      // Only the run's length may change on resume.
      if (s.rfind("train.epochs=", 0) != 0 && s.rfind("run.threads=", 0) != 0) {
        return Status::Refused("--set " + s +
                               ": a resumed run keeps its config; only "
                               "train.epochs may change (and run.threads)");
      }
      RLT_RETURN_IF_ERROR(cfg.ApplyOverride(s));
    }
  } else {
    if (fs::exists(run_dir)) {
      return Status::InvalidArgument(run_dir +
                                     " exists already: choose another --run-dir, or "
                                     "continue it with --resume " +
                                     run_dir);
    }
    RLT_ASSIGN_OR_RETURN(cfg, config::Config::LoadFile(req.config));
    for (const std::string& s : req.sets) RLT_RETURN_IF_ERROR(cfg.ApplyOverride(s));
  }
  RLT_ASSIGN_OR_RETURN(Bound bound, BindConfig(std::move(cfg)));
  // The data: every check before anything is written.
  RLT_ASSIGN_OR_RETURN(
      std::unique_ptr<RetrievalData> data,
      LoadRetrievalData(bound.data.pairs, bound.data.bank, LargestK(bound.settings.eval)));
  PrintNotes(*data);
  if (bound.data.shuffle_targets) ShuffleTrainingTargets(*data, bound.settings.run.seed);
  RLT_RETURN_IF_ERROR(CheckMemory(bound.settings, *data, AvailableMemoryBytes()));
  RLT_ASSIGN_OR_RETURN(std::unique_ptr<Trainer> trainer,
                       Trainer::Create(bound.settings, data.get()));
  if (!resuming) {
    RLT_ASSIGN_OR_RETURN(runlog::StagingDir stage, runlog::StagingDir::Create(run_dir));
    RLT_RETURN_IF_ERROR(
        WriteFileAtomic((fs::path(stage.path()) / "config.toml").string(), bound.config.ToToml()));
    RLT_RETURN_IF_ERROR(runlog::WriteManifestOf(stage.path(), {"config.toml"}));
    RLT_RETURN_IF_ERROR(stage.Commit());
  }
  RLT_ASSIGN_OR_RETURN(runlog::RunLock lock,
                       runlog::RunLock::Acquire(run_dir, "rltrade retrieval train"));
  runlog::RemoveStaleTemps(run_dir);
  RetrievalTrainResult result;
  result.run_dir = run_dir;
  const Status trained = TrainRun(req, run_dir, bound, *data, *trainer, result);
  if (!trained.ok() && !resuming && !fs::exists(fs::path(run_dir) / "last")) {
    // No epoch of this new run completed: nothing in it is worth keeping.
    std::error_code ec;
    fs::remove_all(run_dir, ec);
  }
  if (!trained.ok()) return trained;
  return result;
}

Result<RetrievalMetrics> RunRetrievalEval(const RetrievalEvalRequest& req) {
  const fs::path run(req.run_dir);
  const std::string config_path = (run / "config.toml").string();
  if (!fs::exists(config_path)) {
    return Status::NotFound(req.run_dir + " is not a retrieval run directory (no config.toml)");
  }
  if (req.checkpoint != "best" && req.checkpoint != "final" && req.checkpoint != "last") {
    return Status::InvalidArgument("--checkpoint " + req.checkpoint +
                                   ": expected best, final or last");
  }
  RLT_RETURN_IF_ERROR(runlog::VerifyManifestFiles(req.run_dir, {"config.toml"}));
  RLT_ASSIGN_OR_RETURN(config::Config cfg, config::Config::LoadFile(config_path));
  RLT_ASSIGN_OR_RETURN(Bound bound, BindConfig(std::move(cfg)));
  const std::string pairs = req.pairs.empty() ? bound.data.pairs : req.pairs;
  const std::string bank = req.bank.empty() ? bound.data.bank : req.bank;
  const fs::path dir = run / req.checkpoint;
  if (!fs::exists(dir)) {
    return Status::NotFound((dir).string() + " does not exist: the run has no " + req.checkpoint +
                            " checkpoint yet");
  }
  RLT_RETURN_IF_ERROR(runlog::VerifyManifest(dir.string(), /*complete=*/true));
  RLT_ASSIGN_OR_RETURN(std::unique_ptr<RetrievalData> data,
                       LoadRetrievalData(pairs, bank, LargestK(bound.settings.eval)));
  PrintNotes(*data);
  // Evaluation reads no mined negatives: no miner index is built.
  TrainerSettings settings = bound.settings;
  settings.mining.schedule.clear();
  RLT_ASSIGN_OR_RETURN(std::unique_ptr<Trainer> trainer, Trainer::Create(settings, data.get()));
  if (req.checkpoint == "last") {
    RLT_RETURN_IF_ERROR(trainer->LoadParameters((dir / "state.rtt").string()));
  } else {
    RLT_RETURN_IF_ERROR(trainer->LoadParameters((dir / "model.rtt").string()));
  }
  return trainer->Evaluate();
}

}  // namespace rlt::retrieval
