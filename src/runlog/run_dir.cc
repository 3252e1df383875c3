// rltrade runlog: the run directory's layout (see run_dir.h).
#include "runlog/run_dir.h"

#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/file_io.h"
#include "core/json_parse.h"
#include "core/json_text.h"
#include "runlog/manifest.h"

namespace rlt::runlog {
namespace fs = std::filesystem;
namespace {

// status.json is a few hundred bytes; anything far larger is not ours.
constexpr int64_t kMaxStatusBytes = int64_t{16} << 20;

bool Complete(const fs::path& dir) {
  std::error_code ec;
  return fs::exists(dir / "FORMAT", ec);
}

double NumberOf(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : NAN;
}

std::string TextOf(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

}  // namespace

fs::path StepCheckpointPath(const fs::path& run_dir, int64_t step) {
  return run_dir / "checkpoints" / ("step_" + std::to_string(step));
}

fs::path FinalCheckpointPath(const fs::path& run_dir) { return run_dir / "final"; }

fs::path BestCheckpointPath(const fs::path& run_dir) { return run_dir / "best"; }

namespace {

// The step best/ was selected at (its selection.json's best_step), or -1 when best/ is
// incomplete or its record unreadable.
int64_t BestCheckpointStep(const fs::path& run_dir) {
  const fs::path best = BestCheckpointPath(run_dir);
  if (!Complete(best)) return -1;
  Result<std::string> text = ReadFile((best / kSelectionFile).string(), kMaxStatusBytes);
  if (!text.ok()) return -1;
  const nlohmann::json j = ParseJsonOrDiscarded<nlohmann::json>(*text);
  if (!j.is_object()) return -1;
  const double step = NumberOf(j, "best_step");
  return std::isfinite(step) && step >= 0 ? static_cast<int64_t>(step) : -1;
}

}  // namespace

Result<std::string> ChooseCheckpoint(const fs::path& run_dir, const std::string& choice,
                                     std::string* label) {
  const fs::path best = BestCheckpointPath(run_dir);
  std::string used = choice;
  if (choice.empty()) used = Complete(best) ? "best" : "final";
  if (label != nullptr) *label = used == "best" || used == "final" ? used : "DIR";
  if (used == "final") return FinalCheckpointPath(run_dir).string();
  if (used != "best") return choice;
  if (!Complete(best)) {
    return Status::NotFound(
        "--checkpoint best: " + best.string() +
        " does not exist (the run was trained with [run] eval_every = 0, or no validation "
        "score has been finite yet); use --checkpoint final, or train with run.eval_every > 0 "
        "to select a checkpoint on validation");
  }
  return best.string();
}

std::string NewestCheckpoint(const fs::path& run_dir) {
  std::string best;
  int64_t best_step = -1;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(run_dir / "checkpoints", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("step_", 0) != 0 || name.size() == 5) continue;
    char* end = nullptr;
    const long long step = std::strtoll(name.c_str() + 5, &end, 10);
    if (*end != '\0' || step < 0 || !Complete(entry.path())) continue;
    if (step > best_step) {
      best_step = step;
      best = entry.path().string();
    }
  }
  const int64_t selected = BestCheckpointStep(run_dir);
  if (selected >= 0 && selected > best_step &&
      (best_step >= 0 || !Complete(FinalCheckpointPath(run_dir)))) {
    return BestCheckpointPath(run_dir).string();
  }
  if (best.empty() && Complete(FinalCheckpointPath(run_dir))) {
    best = FinalCheckpointPath(run_dir).string();
  }
  return best;
}

std::string LoadableCheckpoint(const fs::path& run_dir) {
  const std::string newest = NewestCheckpoint(run_dir);
  if (newest.empty()) return "";
  return VerifyManifest(newest, /*complete=*/true).ok() ? newest : "";
}

Status WriteRunStatus(const fs::path& run_dir, const RunStatus& s) {
  const nlohmann::json j = {{"pid", s.pid},
                            {"start_time", s.start_time},
                            {"updated_time", s.updated_time},
                            {"total_steps", s.total_steps},
                            {"steps", s.steps},
                            {"fps", s.fps},
                            {"last_checkpoint", s.last_checkpoint},
                            {"state", s.state},
                            {"message", s.message}};
  nlohmann::json out = j;
  if (!s.select_metric.empty()) {
    out["select_metric"] = s.select_metric;
    out["best_step"] = s.best_step;
    out["best_score"] = std::isfinite(s.best_score) ? nlohmann::json(s.best_score) : nullptr;
  }
  return WriteFileAtomic((run_dir / kRunStatusFile).string(), JsonText(out, 2) + "\n");
}

Result<RunStatusRead> ReadRunStatus(const fs::path& run_dir) {
  const fs::path path = run_dir / kRunStatusFile;
  Result<std::string> text = ReadFile(path.string(), kMaxStatusBytes);
  if (!text.ok() && text.status().code() == Status::Code::kNotFound) {
    return Status::NotFound(path.string() +
                            " not found: not a run directory of this rltrade version (or "
                            "training has not started yet)");
  }
  if (!text.ok()) return text.status();
  // Depth-limited (core/json_parse.h): a hand-made status.json cannot crash a reader.
  Result<nlohmann::json> parsed = ParseJson<nlohmann::json>(*text, path.string());
  if (!parsed.ok()) return Status::DataError(parsed.status().message());
  const nlohmann::json& j = *parsed;
  if (!j.is_object()) {
    return Status::DataError(path.string() + " is not a JSON object (got " + JsonSummary(j) + ")");
  }
  RunStatusRead r;
  r.pid = NumberOf(j, "pid");
  r.start_time = NumberOf(j, "start_time");
  r.updated_time = NumberOf(j, "updated_time");
  r.total_steps = NumberOf(j, "total_steps");
  r.steps = NumberOf(j, "steps");
  r.fps = NumberOf(j, "fps");
  r.last_checkpoint = TextOf(j, "last_checkpoint");
  r.state = TextOf(j, "state");
  r.message = TextOf(j, "message");
  r.select_metric = TextOf(j, "select_metric");
  r.best_step = NumberOf(j, "best_step");
  r.best_score = NumberOf(j, "best_score");
  r.text = std::move(text).value();
  return r;
}

}  // namespace rlt::runlog
