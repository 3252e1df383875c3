// rltrade cli: `rltrade checkpoint convert PATH` — rewrites checkpoints written before the
// native checkpoint format (LibTorch archives: policy.pt, optimizer.pt, normalizer.pt,
// state.pt) as tensor files (learn/checkpoint.h), so that every build, also one without
// LibTorch, loads them. PATH is one checkpoint directory or a run directory (its final/,
// checkpoints/step_<N>/ and, for multi-seed runs, every seed's). Needs a build with
// LibTorch (it reads the old archives); exit 0 when done (also when nothing needed
// converting), 1 on a failure (the checkpoint that failed stays as it was), 2 for a bad
// PATH.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "learn/checkpoint.h"

namespace rlt::cli {
namespace {

int RunConvert(const std::string& path) {
  std::vector<std::string> converted, current;
  const Status s = learn::ConvertCheckpoints(path, &converted, &current);
  for (const std::string& dir : converted) std::printf("converted %s\n", dir.c_str());
  for (const std::string& dir : current) std::printf("already native: %s\n", dir.c_str());
  if (!s.ok()) return ReportError(s);
  return 0;
}

}  // namespace

void RegisterCheckpointCommands(CLI::App& app, Action* action) {
  CLI::App* group = app.add_subcommand("checkpoint", "Checkpoint maintenance");
  group->require_subcommand(1);
  auto path = std::make_shared<std::string>();
  CLI::App* convert = group->add_subcommand(
      "convert",
      "Rewrite checkpoints of the LibTorch-archive format (policy.pt, ...) as native tensor "
      "files, readable by every build (needs a build with LibTorch)");
  convert->add_option("PATH", *path, "a checkpoint directory or a run directory")->required();
  convert->callback([path, action] { *action = [path] { return RunConvert(*path); }; });
}

}  // namespace rlt::cli
