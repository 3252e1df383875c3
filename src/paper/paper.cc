// rltrade paper: a trained run trading a bar stream (see paper.h).
#include "paper/paper.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "config/config.h"
#include "core/civil_time.h"
#include "core/file_io.h"
#include "core/json_text.h"
#include "core/options.h"
#include "env/envs/intraday.h"
#include "evalrun/ensemble.h"
#include "evalrun/evalrun.h"
#include "features/incremental.h"
#include "learn/inference.h"
#include "market/csv.h"
#include "market/date_range.h"
#include "market/sessions.h"
#include "market/synth.h"
#include "market/timezone.h"
#include "paper/driven.h"
#include "paper/feed.h"
#include "paper/session.h"
#include "paper/tcp_broker.h"
#include "paper/tick_aggregator.h"
#include "runlog/run_dir.h"
#include "train/seeds.h"
#include "train/train.h"
#include "train/train_options.h"

namespace rlt::paper {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

std::string NowStamp() { return FormatPathStamp(static_cast<int64_t>(std::time(nullptr))); }

// The run's checkpoint as the session's policy.
class CheckpointPolicy : public SessionPolicy {
 public:
  explicit CheckpointPolicy(std::unique_ptr<learn::PolicyRunner> runner)
      : runner_(std::move(runner)) {}
  void Act(const float* obs, float* action) override { runner_->Act(obs, 1, action, nullptr); }
  void ResetState() override { runner_->ResetState(); }
  bool recurrent() const override { return runner_->recurrent(); }

 private:
  std::unique_ptr<learn::PolicyRunner> runner_;
};

// A multi-seed run's ensemble as the session's policy.
class EnsemblePolicy : public SessionPolicy {
 public:
  explicit EnsemblePolicy(std::unique_ptr<evalrun::EnsembleRunner> runner)
      : runner_(std::move(runner)) {}
  void Act(const float* obs, float* action) override { runner_->Act(obs, action); }
  void ResetState() override { runner_->ResetState(); }
  bool recurrent() const override { return runner_->recurrent(); }

 private:
  std::unique_ptr<evalrun::EnsembleRunner> runner_;
};

// Which run's policy trades: `run` (whose config, data and normaliser the session uses;
// a multi-seed run's first seed for its ensemble) and, for an ensemble, every seed's run.
struct PolicyRuns {
  std::string run;
  std::vector<uint64_t> seeds;
  std::vector<std::string> ensemble_runs;  // empty: one policy
};

Result<PolicyRuns> ChoosePolicyRuns(const PaperRequest& r) {
  RLT_ASSIGN_OR_RETURN(const std::optional<train::SeedsIndex> index,
                       train::ReadSeedsIndex(r.run_dir));
  RLT_RETURN_IF_ERROR(
      evalrun::CheckEnsembleFlags(r.ensemble, r.seed.has_value(), index.has_value(), r.run_dir));
  PolicyRuns p;
  if (index && !r.seed) {
    p.seeds = index->seeds;
    p.ensemble_runs = index->SeedRuns(r.run_dir);
    p.run = p.ensemble_runs.front();
    RLT_RETURN_IF_ERROR(evalrun::CheckSameObservations(p.ensemble_runs));
    return p;
  }
  RLT_ASSIGN_OR_RETURN(p.run, train::ResolveSeedRun(r.run_dir, r.seed));
  return p;
}

Status CheckBroker(const PaperRequest& r, const FeedSpec& feed) {
  if (r.broker != "sim") {
    Result<BrokerAddress> parsed = ParseBrokerAddress(r.broker);
    if (!parsed.ok()) {
      return Status::InvalidArgument("--broker " + r.broker +
                                     ": expected sim or tcp:HOST:PORT (e.g. tcp:127.0.0.1:7001)");
    }
    const BrokerAddress& a = *parsed;
    if (feed.kind != FeedSpec::Kind::kTcp || a.host != feed.host || a.port != feed.port) {
      return Status::InvalidArgument("--broker " + r.broker +
                                     ": the tcp broker fills at the bars its server streams; " +
                                     "give the same server as the feed: --feed " + r.broker);
    }
  }
  if (r.fsync != "bar" && r.fsync != "session") {
    return Status::InvalidArgument("--fsync " + r.fsync + ": expected bar or session");
  }
  return Status::Ok();
}

// The tcp feed's server, connected (and the hello accepted: account, credential) before
// the journal is created: a server that is down or refuses leaves nothing behind.
Result<std::unique_ptr<TcpBroker>> ConnectBroker(const PaperRequest& r, const FeedSpec& feed,
                                                 const std::string& symbol) {
  TcpBrokerOptions bo;
  bo.host = feed.host;
  bo.port = feed.port;
  bo.account = r.account;
  auto broker = std::make_unique<TcpBroker>(bo);
  RLT_RETURN_IF_ERROR(broker->Connect());
  const ServerHello& hello = broker->hello();
  if (std::find(hello.symbols.begin(), hello.symbols.end(), symbol) == hello.symbols.end()) {
    std::string listed;
    for (const std::string& sym : hello.symbols) listed += (listed.empty() ? "" : ", ") + sym;
    return Status::InvalidArgument("--feed " + r.feed + ": the server streams " + listed +
                                   ", not the run's symbol " + symbol);
  }
  return broker;
}

// The dates the session trades, against evaluation's in-sample rule: from --start (or a
// replay's first session; a live feed's today) to a replay's last session (a live feed's
// open end). A replay's --start after its last bar is an error.
Status CheckDates(const PaperRequest& r, const FeedSpec& feed, SessionSetup& s) {
  const market::Bars& bars = *s.data_bars;
  const bool live = feed.kind != FeedSpec::Kind::kReplay;
  int32_t first = s.start_date, last = 0;
  if (!live && !bars.sessions.empty()) {
    last = bars.sessions.back().date;
    if (s.start_date > last) {
      return Status::InvalidArgument("--start " + r.start + " is after the last bar of " +
                                     feed.file + " (" + FormatDate(last) +
                                     "): there is nothing to trade; give a --start on or "
                                     "before " +
                                     FormatDate(last));
    }
    first = std::max(first, bars.sessions.front().date);
  }
  if (first == 0) {
    const int64_t now = static_cast<int64_t>(std::time(nullptr));
    first = market::LocalDateKey(now, s.tz.OffsetAt(now));
  }
  std::string overlap;
  for (size_t i = 0; i < s.policy_runs.size() && overlap.empty(); ++i) {
    RLT_ASSIGN_OR_RETURN(
        overlap, evalrun::TrainingOverlap(s.policy_runs[i], s.policy_checkpoints[i], first, last));
  }
  if (overlap.empty()) return Status::Ok();
  market::DateRange dates;
  dates.first = first;
  dates.last = last;
  if (!r.allow_in_sample) {
    return evalrun::InSampleRefusal(r.start.empty() ? "the session's dates" : "--start " + r.start,
                                    dates.ToString(), overlap,
                                    "choose a --start after the training range");
  }
  s.in_sample = true;
  return Status::Ok();
}

// The checkpoint of every run that trades (runlog::ChooseCheckpoint; an ensemble's seeds
// take the same keyword, a directory names one seed's and is refused) and what the journal
// records of a multi-seed run's policy.
Status ChooseCheckpoints(const PaperRequest& r, const PolicyRuns& policy, SessionSetup& s) {
  s.seed = r.seed;
  s.policy_runs =
      policy.ensemble_runs.empty() ? std::vector<std::string>{policy.run} : policy.ensemble_runs;
  const bool keyword = r.checkpoint.empty() || r.checkpoint == "best" || r.checkpoint == "final";
  if (!policy.ensemble_runs.empty() && !keyword) {
    return Status::InvalidArgument(
        "--checkpoint " + r.checkpoint +
        ": the ensemble of a multi-seed run takes the same checkpoint of every seed (best or "
        "final); give --seed S to trade one seed's checkpoint directory");
  }
  s.checkpoint.clear();
  for (const std::string& run : s.policy_runs) {
    RLT_ASSIGN_OR_RETURN(const std::string dir, runlog::ChooseCheckpoint(run, r.checkpoint));
    s.policy_checkpoints.push_back(dir);
    s.checkpoint += (s.checkpoint.empty() ? "" : ", ") + dir;
  }
  s.ensemble_seeds = policy.seeds;
  return Status::Ok();
}

// What RunPaper loads from RUN_DIR before a session starts.
struct LoadedRun {
  features::Normalizer norm;
  train::EnvSetup setup;
  SessionSetup session;
  std::string preset;
  std::optional<train::DataRecord> record;  // RUN_DIR/data.json, when the run has one
  train::ReadRules read_rules;              // how the run's [data] reads bars
};

// The symbol the run trained on: [data] symbol, else the recorded symbol column's; ""
// when the run's data named none (its identity is then its fingerprint only).
std::string RunSymbol(const LoadedRun& run) {
  if (!run.setup.symbol.empty()) return run.setup.symbol;  // one of several
  if (!run.setup.data.symbol.empty()) return run.setup.data.symbol;
  if (run.record && !run.record->files.empty() && !run.record->files.front().symbols.empty()) {
    return run.record->files.front().symbols.front();
  }
  return "";
}

// The run's settings, and a replayed file's bars read as the run reads its data
// (timezone, symbol, on_bad_rows, sessions); a live session reads the run's own bars for
// the shape of a session. Features come from the stream.
Status LoadRun(const PaperRequest& r, const PolicyRuns& policy, const FeedSpec& feed,
               LoadedRun& run) {
  const fs::path run_dir(policy.run);
  if (!fs::exists(run_dir / "config.toml")) {
    return Status::NotFound(policy.run +
                            " is not a run directory (no config.toml); pass a directory "
                            "written by `rltrade train`");
  }
  // The run's files as evaluation checks them (MANIFEST) before any is parsed.
  RLT_RETURN_IF_ERROR(evalrun::VerifyRunFiles(policy.run));
  for (const std::string& seed_run : policy.ensemble_runs) {
    RLT_RETURN_IF_ERROR(evalrun::VerifyRunFiles(seed_run));
  }
  RLT_ASSIGN_OR_RETURN(config::Config config,
                       train::LoadConfig((run_dir / "config.toml").string()));
  const std::string norm_path = (run_dir / "normalizer.json").string();
  if (!fs::exists(norm_path)) {
    return Status::InvalidArgument(policy.run +
                                   " has no normalizer.json: paper trading needs a run of a "
                                   "market environment (intraday)");
  }
  RLT_ASSIGN_OR_RETURN(run.norm, features::Normalizer::LoadFile(norm_path, r.symbol));
  const bool live = feed.kind != FeedSpec::Kind::kReplay;
  train::EnvSetupOverrides overrides;
  overrides.normalizer = &run.norm;
  overrides.data_file = live ? r.data_file : feed.file;
  RLT_ASSIGN_OR_RETURN(run.record, train::LoadRunDataRecord(policy.run));
  if (run.record) overrides.record = &*run.record;
  overrides.record_check.allow_mismatch = r.allow_mismatch;
  overrides.record_check.allow_data_change = r.allow_data_change;
  overrides.symbol = r.symbol;
  RLT_ASSIGN_OR_RETURN(run.setup, train::BuildEnvSetup(config, overrides));
  RLT_ASSIGN_OR_RETURN(run.read_rules, train::ReadRulesOf(config, run.setup.data));
  if (run.setup.id != "intraday") {
    return Status::InvalidArgument("rltrade paper trades the intraday environment; " + policy.run +
                                   " trained " + run.setup.id);
  }
  SessionSetup& s = run.session;
  s.request = r;
  s.calendar = run.read_rules.calendar;
  s.feed = feed;
  RLT_RETURN_IF_ERROR(SetOptions(s.options, run.setup.context.settings, "[env]"));
  s.data_bars = &run.setup.context.market->bars;
  RLT_ASSIGN_OR_RETURN(s.tz, market::TimeZone::Load(s.data_bars->timezone));
  if (!r.start.empty()) {
    RLT_ASSIGN_OR_RETURN(const market::DateRange d, market::DateRange::Parse(r.start + ":end"));
    s.start_date = d.first;
  }
  RLT_RETURN_IF_ERROR(ChooseCheckpoints(r, policy, s));
  s.journal_dir =
      r.journal_dir.empty() ? (fs::path(r.run_dir) / "paper" / NowStamp()).string() : r.journal_dir;
  if (!r.risk_path.empty()) {
    RLT_ASSIGN_OR_RETURN(s.limits, LoadRiskLimits(r.risk_path));
  }
  run.preset = train::FeatureKey(run.setup.features);
  if (!run.setup.symbols.empty() && run.setup.features.symbol_id) {
    for (const std::string& symbol : run.setup.symbols) {
      s.symbol_id.push_back(symbol == run.setup.symbol ? 1.0f : 0.0f);
    }
  }
  return CheckDates(r, feed, s);
}

// The policy that trades: the one checkpoint, or the ensemble of the seeds' (its method
// resolved for the run's actions into `s`).
Result<std::unique_ptr<SessionPolicy>> LoadSessionPolicy(const PaperRequest& r,
                                                         const PolicyRuns& policy,
                                                         const env::EnvSpec& spec,
                                                         SessionSetup& s) {
  if (policy.ensemble_runs.empty()) {
    // Which policy trades: best/ (selected on validation) unless --checkpoint says otherwise.
    if (!r.quiet)
      std::fprintf(stderr, "paper: the policy of checkpoint %s\n", s.checkpoint.c_str());
    RLT_ASSIGN_OR_RETURN(
        std::unique_ptr<learn::PolicyRunner> runner,
        learn::PolicyRunner::Load(s.checkpoint, static_cast<int>(spec.obs_dim), spec.action));
    return std::unique_ptr<SessionPolicy>(new CheckpointPolicy(std::move(runner)));
  }
  const evalrun::EnsembleActions actions = evalrun::EnsembleActionsOf(
      spec.action, s.options.action_mode, s.options.buy_threshold, s.options.sell_threshold);
  RLT_ASSIGN_OR_RETURN(const evalrun::EnsembleMethod method,
                       evalrun::ResolveEnsembleMethod(r.ensemble, actions));
  s.ensemble_method = evalrun::EnsembleMethodName(method);
  if (!r.quiet) {
    std::fprintf(stderr, "paper: the ensemble (%s) of %zu seeds, checkpoints %s\n",
                 s.ensemble_method.c_str(), policy.seeds.size(), s.checkpoint.c_str());
  }
  RLT_ASSIGN_OR_RETURN(
      std::unique_ptr<evalrun::EnsembleRunner> runner,
      evalrun::EnsembleRunner::Load(s.policy_checkpoints, static_cast<int>(spec.obs_dim),
                                    evalrun::ActionCombiner(method, actions)));
  return std::unique_ptr<SessionPolicy>(new EnsemblePolicy(std::move(runner)));
}

// A session and what it points into: the run loaded (its bars, its normaliser).
struct BuiltSession {
  LoadedRun run;
  std::unique_ptr<PaperSession> session;
};

Result<std::unique_ptr<BuiltSession>> BuildSession(const PaperRequest& r, const FeedSpec& feed,
                                                   std::shared_ptr<ExternalBroker> external) {
  RLT_ASSIGN_OR_RETURN(const PolicyRuns policy, ChoosePolicyRuns(r));
  auto built = std::make_unique<BuiltSession>();
  LoadedRun& run = built->run;
  RLT_RETURN_IF_ERROR(LoadRun(r, policy, feed, run));
  SessionSetup& s = run.session;
  s.external = std::move(external);
  RLT_ASSIGN_OR_RETURN(features::IncrementalFeatures stream,
                       features::IncrementalFeatures::Create(run.preset, &run.norm));
  const env::EnvSpec spec = env::IntradayStockEnv::MakeSpec(
      stream.cols() + static_cast<int64_t>(s.symbol_id.size()), s.options);
  RLT_ASSIGN_OR_RETURN(std::unique_ptr<SessionPolicy> session_policy,
                       LoadSessionPolicy(r, policy, spec, s));
  std::unique_ptr<LineFeed> line_feed;
  if (feed.kind == FeedSpec::Kind::kStdin) {
    market::CsvReadOptions ro = run.read_rules.CsvOptions(run.setup.data);
    ro.timezone = s.data_bars->timezone;
    ro.symbol = run.setup.symbol.empty() ? run.setup.data.symbol : run.setup.symbol;
    line_feed =
        std::make_unique<LineFeed>(STDIN_FILENO, "stdin", ro, ShapeOf(*s.data_bars).bar_seconds);
    if (!r.allow_mismatch) line_feed->ExpectSymbol(RunSymbol(run));
  }
  std::unique_ptr<TcpBroker> broker;
  if (feed.kind == FeedSpec::Kind::kTcp) {
    RLT_ASSIGN_OR_RETURN(broker, ConnectBroker(r, feed, s.data_bars->symbol));
  }
  built->session =
      std::make_unique<PaperSession>(std::move(s), std::move(stream), std::move(session_policy),
                                     std::move(line_feed), std::move(broker));
  return built;
}

}  // namespace

Result<PaperOutcome> RunPaper(const PaperRequest& r) {
  RLT_ASSIGN_OR_RETURN(const FeedSpec feed, ParseFeedSpec(r.feed));
  RLT_RETURN_IF_ERROR(CheckBroker(r, feed));
  RLT_ASSIGN_OR_RETURN(std::unique_ptr<BuiltSession> built, BuildSession(r, feed, nullptr));
  PaperSession& session = *built->session;
  Status opened = session.OpenJournal();
  Result<PaperOutcome> out = opened.ok() ? session.Run() : Result<PaperOutcome>(opened);
  if (!out.ok()) session.MarkFailed(out.status());
  return out;
}

struct DrivenSession::Impl {
  std::unique_ptr<BuiltSession> built;
  std::unique_ptr<TickAggregator> ticks;
  Status failed;
  bool started = false, finished = false;
};

namespace {
Status Usable(const Status& failed, bool finished) {
  if (finished) {
    return Status::InvalidArgument(
        "the paper session has finished (its outputs are written); "
        "open a new one");
  }
  if (!failed.ok()) {
    return Status::FromCode(static_cast<int>(failed.code()),
                            "the paper session stopped earlier: " + failed.message());
  }
  return Status::Ok();
}
}  // namespace

DrivenSession::DrivenSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DrivenSession::~DrivenSession() = default;

Result<std::unique_ptr<DrivenSession>> DrivenSession::Open(PaperRequest r,
                                                           std::shared_ptr<ExternalBroker> broker) {
  if (broker == nullptr) return Status::InvalidArgument("paper session: no broker given");
  r.feed = "python";
  r.broker = "python";
  if (r.fsync != "bar" && r.fsync != "session") {
    return Status::InvalidArgument("fsync " + r.fsync + ": expected bar or session");
  }
  FeedSpec feed;
  feed.kind = FeedSpec::Kind::kExternal;
  auto impl = std::make_unique<Impl>();
  RLT_ASSIGN_OR_RETURN(impl->built, BuildSession(r, feed, std::move(broker)));
  PaperSession& s = *impl->built->session;
  Status opened = s.OpenJournal();
  if (!opened.ok()) {
    s.MarkFailed(opened);
    return opened;
  }
  return std::unique_ptr<DrivenSession>(new DrivenSession(std::move(impl)));
}

Status DrivenSession::Start() {
  RLT_RETURN_IF_ERROR(Usable(impl_->failed, impl_->finished));
  if (impl_->started) return Status::InvalidArgument("the paper session has started already");
  impl_->started = true;
  return Guard(impl_->built->session->StartExternal());
}

// An error that stops the session: kept (every later call returns it) and status.json
// marked failed.
Status DrivenSession::Guard(Status s) {
  if (s.ok()) return s;
  impl_->failed = s;
  impl_->built->session->MarkFailed(s);
  impl_->built->session->ReleaseJournal();
  return s;
}

Status DrivenSession::OnBar(const FeedBar& bar) {
  RLT_RETURN_IF_ERROR(Usable(impl_->failed, impl_->finished));
  if (!impl_->started) {
    return Status::InvalidArgument("on_bar before the paper session started (Start())");
  }
  PaperSession& s = *impl_->built->session;
  if (s.in_broker_call()) {
    return Status::InvalidArgument(
        "on_bar was called from inside the broker's submit(): bars come from the feed; the "
        "broker answers with on_fill / on_reject");
  }
  RLT_RETURN_IF_ERROR(Guard(s.CheckAnswered()));
  RLT_RETURN_IF_ERROR(Guard(s.TakeLiveBar(bar)));
  if (!s.last_bad_bar().empty()) {
    return Status::DataError("the bar of " + FormatIso8601(bar.time, 0) + " was dropped: " +
                             s.last_bad_bar() + " (journaled as a bad bar; the session goes on)");
  }
  return Status::Ok();
}

Status DrivenSession::OnTick(int64_t time_ms, double price, double size) {
  RLT_RETURN_IF_ERROR(Usable(impl_->failed, impl_->finished));
  if (!(price > 0) || !std::isfinite(price) || !(size >= 0) || !std::isfinite(size)) {
    return Status::DataError("the tick of " + FormatIso8601(time_ms / 1000, 0) +
                             " was dropped: expected a positive finite price and a finite "
                             "size >= 0 (the session goes on)");
  }
  PaperSession& s = *impl_->built->session;
  if (!impl_->ticks) {  // bars aligned in the run's local time, as the CLI's tick feed
    impl_->ticks = std::make_unique<TickAggregator>(s.shape().bar_seconds,
                                                    s.timezone().OffsetAt(time_ms / 1000));
  }
  const int64_t late = impl_->ticks->late_ticks();
  const std::optional<AggregatedBar> done = impl_->ticks->Add(Tick{time_ms, price, size});
  if (impl_->ticks->late_ticks() != late) {
    return Status::DataError("the tick of " + FormatIso8601(time_ms / 1000, 0) +
                             " was dropped: its bar was completed already (a late tick)");
  }
  if (!done) return Status::Ok();
  return OnBar(FeedBarOf(*done));
}

namespace {
// A report the session refused (an id it never sent, a quantity other than the order's)
// leaves it running; any other error stops it.
bool RefusedReport(const Status& s) {
  return s.code() == Status::Code::kInvalidArgument || s.code() == Status::Code::kRefused;
}
}  // namespace

Status DrivenSession::OnFill(const std::string& id, double quantity, double price, double fee) {
  RLT_RETURN_IF_ERROR(Usable(impl_->failed, impl_->finished));
  Status s = impl_->built->session->OnExternalFill(id, quantity, price, fee);
  return RefusedReport(s) ? s : Guard(s);
}

Status DrivenSession::OnReject(const std::string& id, const std::string& reason, bool retryable) {
  RLT_RETURN_IF_ERROR(Usable(impl_->failed, impl_->finished));
  Status s = impl_->built->session->OnExternalReject(id, reason, retryable);
  return RefusedReport(s) ? s : Guard(s);
}

Status DrivenSession::Idle() {
  RLT_RETURN_IF_ERROR(Usable(impl_->failed, impl_->finished));
  PaperSession& s = *impl_->built->session;
  if (impl_->ticks) {
    const int64_t now_ms = static_cast<int64_t>(std::time(nullptr)) * 1000;
    if (const std::optional<AggregatedBar> done = impl_->ticks->Flush(now_ms, 1000)) {
      RLT_RETURN_IF_ERROR(OnBar(FeedBarOf(*done)));
    }
  }
  return Guard(s.CheckStaleNow());
}

Result<PaperOutcome> DrivenSession::Finish(bool interrupted) {
  RLT_RETURN_IF_ERROR(Usable(impl_->failed, impl_->finished));
  PaperSession& s = *impl_->built->session;
  if (interrupted) s.set_end_reason("signal");
  // The ticks are over: the bar they were building is complete (the CLI's tick feed does
  // the same at the end of its input).
  if (impl_->ticks && !interrupted) {
    if (const std::optional<AggregatedBar> done =
            impl_->ticks->Flush(std::numeric_limits<int64_t>::max() / 2, 0)) {
      const Status last = OnBar(FeedBarOf(*done));
      if (!impl_->failed.ok()) return last;  // a bad last bar is dropped; an error stops
    }
  }
  Result<PaperOutcome> out = s.Finish();
  if (!out.ok()) {
    RLT_RETURN_IF_ERROR(Guard(out.status()));
  }
  impl_->finished = true;
  impl_->built->session->ReleaseJournal();
  return out;
}

void DrivenSession::Fail(const Status& error) {
  if (impl_->finished || !impl_->failed.ok()) return;
  (void)Guard(error);  // kept: later calls return it
}

const std::string& DrivenSession::journal_dir() const {
  return impl_->built->session->journal_dir();
}
bool DrivenSession::finished() const { return impl_->finished; }
bool DrivenSession::failed() const { return !impl_->failed.ok(); }
const PaperSession& DrivenSession::session() const { return *impl_->built->session; }

Result<std::string> BenchPaper(const PaperBenchOptions& b) {
  if (b.days < 10) return Status::InvalidArgument("bench paper needs --days >= 10");
  RLT_ASSIGN_OR_RETURN(const ScratchDirectory scratch,
                       ScratchDirectory::Create(b.scratch, "bench-paper-"));
  const std::string dir = scratch.path();
  market::SynthOptions so;
  so.num_days = b.days;
  RLT_ASSIGN_OR_RETURN(market::MarketData md, market::GenerateSynthetic(so));
  const market::Bars& synth = md.symbols.front();
  const int32_t cut = synth.sessions[synth.sessions.size() * 6 / 10].date;
  const std::string bars = dir + "/bars.csv";
  RLT_RETURN_IF_ERROR(market::WriteBarsCsv(bars, md));
  train::TrainRequest tr;
  tr.config_path = b.config_path;
  tr.overrides = b.overrides;
  for (const std::string& s :
       {std::string("data.source=file"), "data.file=" + bars, std::string("run.total_steps=4096"),
        std::string("run.threads=1"), std::string("env.num_envs=8"), std::string("algo.n_steps=64"),
        std::string("algo.batch_size=256")}) {
    tr.overrides.push_back(s);
  }
  // [split]: train on the sessions before the cut, trade from the cut on (a config with a
  // validation range gets it overridden by --set split.validation=...).
  const int32_t last_train = synth.sessions[synth.sessions.size() * 6 / 10 - 1].date;
  tr.overrides.push_back("split.train=start:" + FormatDate(last_train));
  tr.overrides.push_back("split.test=" + FormatDate(cut) + ":end");
  tr.run_dir = dir + "/run";
  tr.quiet = true;
  RLT_ASSIGN_OR_RETURN(train::TrainOutcome trained, train::RunTraining(tr));
  if (trained.exit_code != 0)
    return Status::IoError("bench paper: training was interrupted by a signal");
  PaperRequest pr;
  pr.run_dir = tr.run_dir;
  pr.feed = "replay:" + bars;
  pr.start = FormatDate(cut);
  pr.journal_dir = dir + "/journal";
  pr.fsync = "session";
  pr.quiet = true;
  RLT_ASSIGN_OR_RETURN(PaperOutcome o, RunPaper(pr));
  RLT_ASSIGN_OR_RETURN(config::Config config,
                       train::LoadConfig((fs::path(tr.run_dir) / "config.toml").string()));
  const config::ConfigValue* preset = config.Get("features", "preset");
  Json j = {{"config", b.config_path},
            {"preset", preset != nullptr ? preset->text : std::string()},
            {"bars", o.bars},
            {"decisions", o.decisions},
            {"latency_p50_us", o.latency_p50_us},
            {"latency_p99_us", o.latency_p99_us},
            {"latency_max_us", o.latency_max_us},
            {"bars_per_second", static_cast<double>(o.bars) / o.wall_seconds}};
  return JsonText(j, 2);
}

}  // namespace rlt::paper
