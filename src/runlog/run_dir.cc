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
  return WriteFileAtomic((run_dir / kRunStatusFile).string(), JsonText(j, 2) + "\n");
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
  r.text = std::move(text).value();
  return r;
}

}  // namespace rlt::runlog
