// rltrade cli: `rltrade paper RUN_DIR --feed FEED --broker BROKER [--start DATE]
// [--risk RISK.toml] [--journal DIR] [--checkpoint best|final|DIR] [--fsync bar|session]
// [--seed S | --ensemble mean|median|vote] [--allow-in-sample]
// [--json] [--quiet]`.
// Flag parsing only; the work is in paper/paper.h.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <memory>

#include "cli/commands.h"
#include "paper/paper.h"

namespace rlt::cli {
namespace {

struct PaperFlags {
  paper::PaperRequest request;
  bool json = false;
};

int RunPaperCommand(const PaperFlags& f) {
  Result<paper::PaperOutcome> out = paper::RunPaper(f.request);
  if (!out.ok()) return ReportError(out.status());
  if (f.json) {
    fmt::print("{}", out->summary_json);
    return 0;
  }
  fmt::print(
      "{}{} bars, {} decisions, {} fills over {} sessions; final net worth {:.2f}; decision "
      "latency p50 {:.1f} us, p99 {:.1f} us\nwrote {} (journal.jsonl, daily_returns.csv, "
      "trades.csv, equity.csv, summary.json)\n",
      out->in_sample ? "IN-SAMPLE (the dates overlap training): " : "", out->bars, out->decisions,
      out->fills, out->sessions, out->final_net_worth, out->latency_p50_us, out->latency_p99_us,
      out->journal_dir);
  return 0;
}

}  // namespace

void RegisterPaperCommand(CLI::App& app, Action* action) {
  auto f = std::make_shared<PaperFlags>();
  CLI::App* cmd = app.add_subcommand(
      "paper", "Trade a trained run on a bar stream: streaming features, a journal, a broker");
  cmd->add_option("run_dir", f->request.run_dir, "RUN_DIR written by rltrade train")->required();
  cmd->add_option("--feed", f->request.feed,
                  "replay:FILE[@SPEED] (SPEED x real time), stdin (CSV bars or ticks, one per "
                  "line, after a header), tcp:HOST:PORT (a broker-protocol server's bars)")
      ->required();
  cmd->add_option("--broker", f->request.broker,
                  "sim (in process: next bar's open, run's costs) or tcp:HOST:PORT (the feed's "
                  "server; credentials from RLTRADE_BROKER_TOKEN)")
      ->capture_default_str();
  cmd->add_option("--account", f->request.account, "the tcp broker's account")
      ->capture_default_str();
  cmd->add_option("--start", f->request.start,
                  "YYYY-MM-DD: earlier bars only warm up the features; trading starts here");
  cmd->add_flag("--allow-in-sample", f->request.allow_in_sample,
                "trade dates that overlap what the policy saw in training (as eval; summary.json "
                "then says in_sample: true)");
  cmd->add_option("--data", f->request.data_file,
                  "the run's training data where it is now, if it moved (live feeds read it for "
                  "the shape of a session; checked against RUN_DIR/data.json)");
  cmd->add_option("--symbol", f->request.symbol,
                  "a run trained on several symbols ([data] symbols): the one symbol this "
                  "session trades");
  cmd->add_flag("--allow-mismatch", f->request.allow_mismatch,
                "trade bars of another symbol than the run trained on");
  cmd->add_flag("--allow-data-change", f->request.allow_data_change,
                "use bars whose sessions of the training range differ from the run's record");
  cmd->add_option("--risk", f->request.risk_path,
                  "RISK.toml: position, order, exposure, daily-loss, rate, hours and price limits");
  cmd->add_option("--journal", f->request.journal_dir,
                  "journal directory (default RUN_DIR/paper/<UTC time>)");
  cmd->add_option("--checkpoint", f->request.checkpoint,
                  "the trained policy's checkpoint: best (RUN_DIR/best, selected on validation), "
                  "final (RUN_DIR/final) or a checkpoint directory (default: best when the run "
                  "has it, else final)");
  cmd->add_option_function<uint64_t>(
      "--seed", [f](const uint64_t& s) { f->request.seed = s; },
      "a run trained with --seeds N: trade this seed's policy (default: the ensemble of its "
      "seeds)");
  cmd->add_option("--ensemble", f->request.ensemble,
                  "a run trained with --seeds N: how its seeds' actions combine: mean, median or "
                  "vote (default: vote for action_mode original, mean for target_position); "
                  "journaled, and a restart with another is refused");
  cmd->add_option("--fsync", f->request.fsync, "fsync the journal every bar or every session")
      ->check(CLI::IsMember({"bar", "session"}))
      ->capture_default_str();
  cmd->add_flag("--json", f->json, "print summary.json");
  cmd->add_flag("--quiet", f->request.quiet, "no progress output");
  cmd->callback([f, action] { *action = [f] { return RunPaperCommand(*f); }; });
}

}  // namespace rlt::cli
