// rltrade tune: studies (see study.h).
#include "tune/study.h"

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "core/file_io.h"
#include "core/json_text.h"
#include "tune/asha.h"
#include "tune/json_file.h"
#include "tune/search.h"

namespace rlt::tune {
namespace {

// `worker` on `workers` threads (on this one when 1), until each returns.
template <typename Worker>
void RunWorkers(int workers, const Worker& worker) {
  if (workers == 1) {
    worker();
    return;
  }
  std::vector<std::thread> threads;
  for (int k = 0; k < workers; ++k) threads.emplace_back(worker);
  for (std::thread& w : threads) w.join();
}

namespace fs = std::filesystem;
using json = nlohmann::json;

json StudyHeader(const StudyOptions& o) {
  json h = {{"method", o.method},       {"seed", o.seed},         {"trials", o.trials},
            {"objective", o.objective}, {"minimize", o.minimize}, {"space", o.space_text}};
  if (o.prune == "asha" && o.method != "asha") h["prune"] = o.prune;
  if (UsesRungs(o)) {
    h["eta"] = o.eta;
    h["rung_steps"] = o.rung_steps;
  }
  if (LearnsInParallel(o.method)) h["lag"] = o.lag;
  return h;
}

using Params = std::vector<std::pair<std::string, std::string>>;

// The point of the search as parameters {key: value text}, and as JSON.
Params ParamsOf(const Space& space, const std::vector<double>& u, json* pj) {
  Params params;
  *pj = json::object();
  for (int j = 0; j < space.dims(); ++j) {
    params.emplace_back(space.params[j].key, ValueText(space.params[j], u[j]));
    (*pj)[space.params[j].key] = params.back().second;
  }
  return params;
}

json JournalLine(const TrialJob& job, const json& params, const TrialResult& t, double seconds) {
  json line = {{"trial", job.trial}, {"rung", job.rung},     {"params", params},
               {"status", t.status}, {"reason", t.reason},   {"steps", t.steps},
               {"seconds", seconds}, {"run_dir", t.run_dir}, {"checkpoint", t.checkpoint}};
  line["objective"] = t.status == "ok" ? json(t.objective) : json(nullptr);
  line["train_seconds"] = t.train_seconds >= 0 ? json(t.train_seconds) : json(nullptr);
  if (t.rank >= 0) line["rank"] = t.rank;
  return line;
}

// The journal line's score for the search (maximised; NaN unless ok).
double ScoreOf(const json& line, bool minimize) {
  if (line.value("status", "") != "ok" || !line["objective"].is_number()) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  const double v = line["objective"].get<double>();
  return minimize ? -v : v;
}

void PrintLine(const StudyOptions& o, const json& line, bool best) {
  if (o.quiet) return;
  const std::string status = line.value("status", "");
  const std::string what = status == "ok" ? "objective " + JsonText(line["objective"])
                                          : status + ": " + line.value("reason", "");
  if (UsesRungs(o)) {
    std::fprintf(stderr, "trial %d rung %d (%lld steps): %s%s\n", line.value("trial", -1),
                 line.value("rung", 0), static_cast<long long>(line.value("steps", int64_t{0})),
                 what.c_str(), best ? " (best so far)" : "");
  } else {
    // Trials are numbered from 0 everywhere (journal, folders, results.csv, report); the
    // parenthesis counts them.
    const int trial = line.value("trial", -1);
    std::fprintf(stderr, "trial %d (%d of %d): %s%s\n", trial, trial + 1, o.trials, what.c_str(),
                 best ? " (best so far)" : "");
  }
}

json WithCommand(json header, const StudyOptions& o) {
  header["command"] = o.command.empty() ? json::object() : json::parse(o.command, nullptr, false);
  return header;
}

Status AppendLine(const std::string& path, const std::string& line) {
  std::ofstream out(path, std::ios::app);
  out << line << "\n";
  out.flush();
  if (!out) return Status::IoError(path + ": cannot append");
  return Status::Ok();
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

Result<JsonDoc> ReadStudyHeader(const std::string& out_dir) {
  const std::string path = (fs::path(out_dir) / "study.json").string();
  if (!fs::exists(path)) {
    return Status::NotFound(out_dir + " is not a tune study (no study.json)");
  }
  RLT_ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
  RLT_ASSIGN_OR_RETURN(JsonDoc doc, JsonDoc::Parse(text, path));
  RLT_RETURN_IF_ERROR(doc.Object(""));
  return doc;
}

Result<StudyOptions> StudyOptionsFromHeader(const JsonDoc& h) {
  StudyOptions o;
  RLT_ASSIGN_OR_RETURN(o.method, h.String("/method"));
  if (o.method != "random" && o.method != "sobol" && o.method != "anneal" && o.method != "asha" &&
      !LearnsInParallel(o.method)) {
    return Status::DataError(h.Place("/method") + ": 'method' = \"" + o.method +
                             "\": expected random, sobol, anneal, tpe, cmaes or asha");
  }
  if (LearnsInParallel(o.method)) {
    RLT_ASSIGN_OR_RETURN(const int64_t lag, h.Int("/lag", 0, kMaxLag));
    o.lag = static_cast<int>(lag);
  }
  RLT_ASSIGN_OR_RETURN(o.seed, h.Uint64("/seed"));
  RLT_ASSIGN_OR_RETURN(const int64_t trials, h.Int("/trials", 1, kMaxTrials));
  o.trials = static_cast<int>(trials);
  RLT_ASSIGN_OR_RETURN(o.objective, h.String("/objective"));
  RLT_ASSIGN_OR_RETURN(o.minimize, h.Bool("/minimize"));
  RLT_ASSIGN_OR_RETURN(o.space_text, h.String("/space"));
  if (h.Has("/prune")) {
    RLT_ASSIGN_OR_RETURN(o.prune, h.String("/prune"));
    if (o.prune != "asha" || o.method == "asha") {
      return Status::DataError(h.Place("/prune") + ": 'prune' = \"" + o.prune +
                               "\": expected asha, with a method other than asha");
    }
  }
  if (UsesRungs(o)) {
    RLT_ASSIGN_OR_RETURN(const int64_t eta, h.Int("/eta", 2, kMaxEta));
    o.eta = static_cast<int>(eta);
    RLT_ASSIGN_OR_RETURN(o.rung_steps, h.Ints("/rung_steps", 1, kMaxRungSteps));
    if (o.rung_steps.empty() || o.rung_steps.size() > kMaxRungs) {
      return Status::DataError(h.Place("/rung_steps") + ": 'rung_steps' lists " +
                               std::to_string(o.rung_steps.size()) + " rungs: expected 1 to " +
                               std::to_string(kMaxRungs));
    }
    for (size_t k = 1; k < o.rung_steps.size(); ++k) {
      if (o.rung_steps[k] <= o.rung_steps[k - 1]) {
        return Status::DataError(h.Place("/rung_steps") +
                                 ": 'rung_steps' must increase from rung to rung");
      }
    }
  }
  if (h.Has("/command")) RLT_RETURN_IF_ERROR(h.Object("/command"));
  return o;
}

bool UsesRungs(const StudyOptions& o) { return o.method == "asha" || o.prune == "asha"; }

std::string StudyJson(const StudyResult& r, const std::string& method, bool rungs) {
  json params = json::object();
  for (const auto& [k, v] : r.best_params) params[k] = v;
  json j = {
      {"best_objective", std::isfinite(r.best_objective) ? json(r.best_objective) : json(nullptr)},
      {"best_params", params},
      {"best_trial", r.best_trial},
      {"trials", r.trials},
      {"method", method}};
  if (method == "asha" || rungs) j["best_rung"] = r.best_rung;
  if (method != "asha" && rungs) j["prune"] = "asha";
  return JsonText(j, 2);
}

namespace {

// The best result: in the highest rung with a score (every line is rung 0 except with
// successive halving), the best objective; the first of equals.
void PickBest(const std::vector<json>& rows, bool minimize, StudyResult* r) {
  r->best_objective = std::numeric_limits<double>::quiet_NaN();
  r->best_trial = -1;
  int top = -1;
  std::set<int> trials;
  for (const json& row : rows) {
    trials.insert(row.value("trial", -1));
    const std::string status = row.value("status", "");
    if (status != "ok") {
      ++(status == "rejected" ? r->rejected : r->failed);
      if (r->first_reason.empty()) {
        r->first_reason = "trial " + std::to_string(row.value("trial", -1)) + " " + status + ": " +
                          row.value("reason", "");
      }
    } else if (std::isnan(ScoreOf(row, minimize)) && r->first_reason.empty()) {
      r->first_reason = "trial " + std::to_string(row.value("trial", -1)) + ": no objective";
    }
    if (!std::isnan(ScoreOf(row, minimize))) {
      ++r->ok;
      top = std::max(top, row.value("rung", 0));
    }
  }
  r->trials = static_cast<int>(trials.size());
  for (const json& row : rows) {
    const double score = ScoreOf(row, minimize);
    if (std::isnan(score) || row.value("rung", 0) != top) continue;
    const double v = row["objective"].get<double>();
    if (r->best_trial >= 0 && !(minimize ? v < r->best_objective : v > r->best_objective)) continue;
    r->best_objective = v;
    r->best_trial = row.value("trial", -1);
    r->best_rung = top;
    r->best_checkpoint = row.value("checkpoint", "");
    r->best_params.clear();
    for (const auto& [k, value] : row["params"].items()) {
      r->best_params.emplace_back(k, value.get<std::string>());
    }
  }
}

// The search methods that propose a point per trial (random, sobol, anneal), `parallel`
// trials at a time (anneal: 1), journaled in trial order.
Status RunSequentialSearch(const Space& space, const StudyOptions& o, const TrialFn& fn,
                           const std::vector<json>& done, const std::string& journal,
                           std::vector<json>* rows) {
  RLT_ASSIGN_OR_RETURN(std::unique_ptr<Search> search,
                       MakeSearch(o.method, space, o.trials, o.seed));
  const int parallel = o.method == "anneal" ? 1 : std::max(1, o.parallel);
  double best = std::numeric_limits<double>::quiet_NaN();
  auto record = [&](const json& line) {
    const double score = ScoreOf(line, o.minimize);
    search->Tell(score);
    rows->push_back(line);
    const bool is_best = !std::isnan(score) && (std::isnan(best) || score > best);
    if (is_best) best = score;
    return is_best;
  };
  int i = 0;
  while (i < o.trials) {
    if (i < static_cast<int>(done.size())) {
      json pj;
      ParamsOf(space, search->Propose(), &pj);
      if (done[i].value("trial", -1) != i || done[i]["params"] != pj) {
        return Status::DataError(journal + ": trial " + std::to_string(i) +
                                 " does not match the study's proposal; the journal belongs "
                                 "to another study or was edited");
      }
      record(done[i]);
      ++i;
      continue;
    }
    if (parallel == 1) {
      TrialJob job;
      job.trial = i;
      json pj;
      job.params = ParamsOf(space, search->Propose(), &pj);
      const auto start = std::chrono::steady_clock::now();
      const TrialResult t = fn(job);
      const json line = JournalLine(
          job, pj, t,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      RLT_RETURN_IF_ERROR(AppendLine(journal, line.dump()));
      PrintLine(o, line, record(line));
      ++i;
      continue;
    }
    // Random and Sobol points do not depend on the scores: every remaining trial is
    // proposed now, `parallel` workers take the next one as they free up (trials of
    // different lengths do not hold each other up), and finished trials are journaled in
    // trial order as soon as every earlier one is.
    const int n = o.trials - i;
    std::vector<TrialJob> jobs(n);
    std::vector<json> jobs_json(n), lines(n);
    std::vector<bool> finished(n, false);
    for (int k = 0; k < n; ++k) {
      jobs[k].trial = i + k;
      jobs[k].params = ParamsOf(space, search->Propose(), &jobs_json[k]);
    }
    std::mutex mu;
    int next_job = 0, next_line = 0;
    Status error = Status::Ok();
    auto worker = [&]() {
      std::unique_lock<std::mutex> lock(mu);
      while (error.ok() && next_job < n) {
        const int k = next_job++;
        lock.unlock();
        const auto start = std::chrono::steady_clock::now();
        const TrialResult t = fn(jobs[k]);
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        lock.lock();
        lines[k] = JournalLine(jobs[k], jobs_json[k], t, seconds);
        finished[k] = true;
        while (error.ok() && next_line < n && finished[next_line]) {
          error = AppendLine(journal, lines[next_line].dump());
          PrintLine(o, lines[next_line], record(lines[next_line]));
          ++next_line;
        }
      }
    };
    RunWorkers(std::max(1, std::min(parallel, n)), worker);
    RLT_RETURN_IF_ERROR(error);
    i = o.trials;
  }
  return Status::Ok();
}

// The methods that learn while trials run in parallel (tpe, cmaes): `parallel` workers take
// the next trial as they free up; trial i is proposed once trials 0 .. i - 1 - lag have
// finished, after telling the search exactly their scores (in trial order), so the
// proposals do not depend on timing. Journaled in trial order.
Status RunLaggedSearch(const Space& space, const StudyOptions& o, const TrialFn& fn,
                       const std::vector<json>& done, const std::string& journal,
                       std::vector<json>* rows) {
  RLT_ASSIGN_OR_RETURN(std::unique_ptr<Search> search,
                       MakeSearch(o.method, space, o.trials, o.seed));
  const int n = o.trials;
  std::vector<json> lines(n), points_json(n);
  std::vector<Params> points(n);
  std::vector<bool> finished(n, false);
  int told = 0, proposed = 0, next_line = 0, next_job = 0;
  double best = std::numeric_limits<double>::quiet_NaN();
  auto propose = [&](int i) {  // REQUIRES: i == proposed, trials < i - lag finished
    for (; told < std::max(0, i - o.lag); ++told) search->Tell(ScoreOf(lines[told], o.minimize));
    points[i] = ParamsOf(space, search->Propose(), &points_json[i]);
    ++proposed;
  };
  auto record = [&](const json& line) {
    const double score = ScoreOf(line, o.minimize);
    rows->push_back(line);
    const bool is_best = !std::isnan(score) && (std::isnan(best) || score > best);
    if (is_best) best = score;
    return is_best;
  };
  for (; next_line < std::min(n, static_cast<int>(done.size())); ++next_line) {
    const int i = next_line;
    propose(i);
    if (done[i].value("trial", -1) != i || done[i]["params"] != points_json[i]) {
      return Status::DataError(journal + ": trial " + std::to_string(i) +
                               " does not match the study's proposal; the journal belongs "
                               "to another study or was edited");
    }
    lines[i] = done[i];
    finished[i] = true;
    record(done[i]);
  }
  next_job = next_line;
  std::mutex mu;
  std::condition_variable changed;
  Status error = Status::Ok();
  auto worker = [&]() {
    std::unique_lock<std::mutex> lock(mu);
    while (error.ok() && next_job < n) {
      const int k = next_job++;
      // Proposals in trial order, each once the trials it is told have finished.
      changed.wait(lock, [&] { return !error.ok() || (proposed == k && next_line >= k - o.lag); });
      if (!error.ok()) break;
      propose(k);
      changed.notify_all();
      TrialJob job;
      job.trial = k;
      job.params = points[k];
      lock.unlock();
      const auto start = std::chrono::steady_clock::now();
      const TrialResult t = fn(job);
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      lock.lock();
      lines[k] = JournalLine(job, points_json[k], t, seconds);
      finished[k] = true;
      while (error.ok() && next_line < n && finished[next_line]) {
        error = AppendLine(journal, lines[next_line].dump());
        PrintLine(o, lines[next_line], record(lines[next_line]));
        ++next_line;
      }
      changed.notify_all();
    }
    changed.notify_all();
  };
  RunWorkers(std::min(std::max(1, o.parallel), std::max(1, n - next_job)), worker);
  return error;
}

// Successive halving: `parallel` workers ask the scheduler for jobs; one journal line per
// finished rung, in the order they finish. New trials take the points of the study's
// method (random for "asha"), which is told each trial's rung-0 score in trial order: a
// learning method (tpe, cmaes: lag = parallel - 1; anneal: 0) proposes trial t once the
// rung-0 scores of trials 0 .. t - 1 - lag are in, so its points do not depend on timing.
Status RunAshaSearch(const Space& space, const StudyOptions& o, const TrialFn& fn,
                     const std::vector<json>& done, const std::string& journal,
                     std::vector<json>* rows) {
  const int rungs = static_cast<int>(o.rung_steps.size());
  if (o.eta < 2 || rungs < 1) {
    return Status::InvalidArgument("asha needs eta >= 2 and at least one rung");
  }
  const std::string method = o.method == "asha" ? "random" : o.method;
  RLT_ASSIGN_OR_RETURN(std::unique_ptr<Search> sampler,
                       MakeSearch(method, space, o.trials, o.seed));
  const bool learns = LearnsInParallel(method) || method == "anneal";
  const int lag = LearnsInParallel(method) ? o.lag : 0;
  std::map<int, double> rung0;  // trial -> its rung-0 score
  int told = 0;
  auto ready = [&](int t) {  // may trial t's point be proposed?
    if (!learns) return true;
    for (int j = told; j < t - lag; ++j) {
      if (rung0.count(j) == 0) return false;
    }
    return true;
  };
  std::vector<Params> points;
  std::vector<json> points_json;
  auto point = [&](int t) {  // REQUIRES: ready(t)
    while (static_cast<int>(points.size()) <= t) {
      const int k = static_cast<int>(points.size());
      for (; learns && told < k - lag; ++told) sampler->Tell(rung0.at(told));
      points_json.emplace_back();
      points.push_back(ParamsOf(space, sampler->Propose(), &points_json.back()));
    }
  };
  for (const json& line : done) {
    if (line.value("rung", -1) == 0) rung0[line.value("trial", -1)] = ScoreOf(line, o.minimize);
  }
  Asha asha(o.eta, rungs, o.trials);
  double best = std::numeric_limits<double>::quiet_NaN();
  int best_rung = -1;
  auto is_best = [&](const json& line) {  // best so far, at the highest rung reached
    const double score = ScoreOf(line, o.minimize);
    const int rung = line.value("rung", 0);
    if (std::isnan(score) || rung < best_rung) return false;
    if (rung > best_rung || std::isnan(best) || score > best) {
      best = score;
      best_rung = rung;
      return true;
    }
    return false;
  };
  for (size_t n = 0; n < done.size(); ++n) {
    const json& line = done[n];
    const int t = line.value("trial", -1), rung = line.value("rung", -1);
    if (t < 0 || t >= o.trials || rung < 0 || rung >= rungs) {
      return Status::DataError(journal + ": line " + std::to_string(n + 1) +
                               " names a trial or rung outside this study");
    }
    if (!ready(t)) {
      return Status::DataError(journal + ": trial " + std::to_string(t) +
                               " started before the rung-0 results its proposal needs; the "
                               "journal belongs to another study or was edited");
    }
    point(t);
    if (line["params"] != points_json[t]) {
      return Status::DataError(journal + ": trial " + std::to_string(t) +
                               " does not match the study's proposal; the journal belongs to "
                               "another study or was edited");
    }
    asha.Replay(t, rung, ScoreOf(line, o.minimize));
    is_best(line);
    rows->push_back(line);
  }
  std::mutex mu;
  std::condition_variable changed;
  Status error = Status::Ok();
  auto worker = [&]() {
    std::unique_lock<std::mutex> lock(mu);
    while (error.ok()) {
      const AshaJob next = asha.Next();
      if (next.kind == AshaJob::Kind::kDone) break;
      if (next.kind == AshaJob::Kind::kWait) {
        changed.wait(lock);
        continue;
      }
      changed.wait(lock, [&] { return !error.ok() || ready(next.trial); });
      if (!error.ok()) break;
      point(next.trial);
      TrialJob job;
      job.trial = next.trial;
      job.rung = next.rung;
      job.steps = o.rung_steps[next.rung];
      job.params = points[next.trial];
      const json params = points_json[next.trial];
      lock.unlock();
      const auto start = std::chrono::steady_clock::now();
      const TrialResult t = fn(job);
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      lock.lock();
      const json line = JournalLine(job, params, t, seconds);
      if (Status st = AppendLine(journal, line.dump()); !st.ok() && error.ok()) error = st;
      asha.Report(job.trial, job.rung, ScoreOf(line, o.minimize));
      if (job.rung == 0) rung0[job.trial] = ScoreOf(line, o.minimize);
      rows->push_back(line);
      PrintLine(o, line, is_best(line));
      changed.notify_all();
    }
    changed.notify_all();
  };
  RunWorkers(std::max(1, o.parallel), worker);
  return error;
}

// The journal's finished lines, each checked field by field (errors name
// trials.jsonl:line). A last line without its newline was cut by a kill: it is left out,
// and the journal is cut there so that new lines follow complete ones. Nothing is changed
// when a line is bad.
Result<std::vector<json>> ReadJournal(const std::string& journal, const Space& space,
                                      const StudyOptions& o) {
  std::vector<json> done;
  if (!fs::exists(journal)) return done;
  RLT_ASSIGN_OR_RETURN(const std::string text, ReadFile(journal));
  const int rungs = UsesRungs(o) ? static_cast<int>(o.rung_steps.size()) : 1;
  const size_t max_lines = static_cast<size_t>(o.trials) * static_cast<size_t>(rungs);
  std::set<std::pair<int64_t, int64_t>> seen;
  size_t start = 0, complete = 0;
  int number = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    if (end == std::string::npos) break;  // the cut line
    ++number;
    const std::string place = journal + ":" + std::to_string(number);
    if (done.size() == max_lines) {
      return Status::DataError(place + ": the study has " + std::to_string(o.trials) + " trials" +
                               (rungs > 1 ? " of " + std::to_string(rungs) + " rungs" : "") +
                               "; this line is one too many (the journal belongs to another "
                               "study or was edited)");
    }
    RLT_ASSIGN_OR_RETURN(JsonDoc line,
                         JsonDoc::Parse(text.substr(start, end - start), journal, number));
    RLT_RETURN_IF_ERROR(line.Object(""));
    RLT_ASSIGN_OR_RETURN(const int64_t trial, line.Int("/trial", 0, o.trials - 1));
    RLT_ASSIGN_OR_RETURN(const int64_t rung, line.Int("/rung", 0, rungs - 1));
    if (!seen.insert({trial, rung}).second) {
      return Status::DataError(place + ": trial " + std::to_string(trial) +
                               (rungs > 1 ? " rung " + std::to_string(rung) : "") +
                               " is journaled twice (the journal was edited)");
    }
    RLT_ASSIGN_OR_RETURN(const auto params, line.StringMap("/params"));
    if (params.size() != static_cast<size_t>(space.dims())) {
      return Status::DataError(line.Place("/params") + ": 'params' holds " +
                               std::to_string(params.size()) + " values; the space has " +
                               std::to_string(space.dims()) + " parameters");
    }
    RLT_ASSIGN_OR_RETURN(const std::string status, line.String("/status"));
    if (status != "ok" && status != "rejected" && status != "failed") {
      return Status::DataError(line.Place("/status") + ": 'status' = \"" + status +
                               "\": expected ok, rejected or failed");
    }
    for (const char* key : {"/objective", "/seconds", "/train_seconds"}) {
      RLT_RETURN_IF_ERROR(line.NumberOrNull(key).status());
    }
    for (const char* key : {"/reason", "/run_dir", "/checkpoint"}) {
      RLT_RETURN_IF_ERROR(line.String(key).status());
    }
    RLT_RETURN_IF_ERROR(line.Int("/steps", 0, std::numeric_limits<int64_t>::max()).status());
    done.push_back(line.root());
    complete = end + 1;
    start = end + 1;
  }
  if (complete != text.size()) {
    std::error_code ec;
    fs::resize_file(journal, complete, ec);
    if (ec) return Status::IoError(journal + ": cannot cut its unfinished line: " + ec.message());
  }
  return done;
}

}  // namespace

Result<StudyResult> RunStudy(const Space& space, const StudyOptions& options, const TrialFn& fn) {
  StudyOptions o = options;
  // A new study's lag is its parallelism; a resumed one keeps the recorded lag.
  if (LearnsInParallel(o.method)) o.lag = std::min(kMaxLag, std::max(1, o.parallel) - 1);
  if (o.trials < 1 || o.trials > kMaxTrials) {
    return Status::Refused("--trials " + std::to_string(o.trials) + ": expected 1 to " +
                           std::to_string(kMaxTrials));
  }
  // A method the space does not suit is refused before anything is written.
  RLT_RETURN_IF_ERROR(
      MakeSearch(o.method == "asha" ? "random" : o.method, space, o.trials, o.seed).status());
  const fs::path out(o.out_dir);
  const std::string journal = (out / "trials.jsonl").string();
  const std::string header_path = (out / "study.json").string();
  std::vector<json> done;
  if (o.resume) {
    RLT_ASSIGN_OR_RETURN(JsonDoc header_doc, ReadStudyHeader(o.out_dir));
    json header = header_doc.root();
    if (header.is_object()) header.erase("command");
    if (LearnsInParallel(o.method) && header_doc.Has("/lag")) {
      RLT_ASSIGN_OR_RETURN(const int64_t lag, header_doc.Int("/lag", 0, kMaxLag));
      o.lag = static_cast<int>(lag);
    }
    if (header != StudyHeader(o)) {
      return Status::Refused(header_path +
                             " describes another study (method, seed, trials, objective or "
                             "space differ): resume it with its own arguments");
    }
    RLT_ASSIGN_OR_RETURN(done, ReadJournal(journal, space, o));
  } else {
    if (fs::exists(out)) {
      return Status::Refused(o.out_dir +
                             " exists already: choose another --out, or "
                             "continue it with --resume " +
                             o.out_dir);
    }
    std::error_code ec;
    fs::create_directories(out, ec);
    if (ec) return Status::IoError(o.out_dir + ": " + ec.message());
    RLT_RETURN_IF_ERROR(WriteFileAtomic(header_path, JsonText(WithCommand(StudyHeader(o), o), 2)));
  }
  std::vector<json> rows;
  if (UsesRungs(o)) {
    RLT_RETURN_IF_ERROR(RunAshaSearch(space, o, fn, done, journal, &rows));
  } else if (LearnsInParallel(o.method)) {
    RLT_RETURN_IF_ERROR(RunLaggedSearch(space, o, fn, done, journal, &rows));
  } else {
    RLT_RETURN_IF_ERROR(RunSequentialSearch(space, o, fn, done, journal, &rows));
  }
  StudyResult r;
  PickBest(rows, o.minimize, &r);
  // results.csv and best.json, rewritten whole at the end.
  std::string csv = "trial,rung,steps,status,objective,seconds,train_seconds";
  auto field = [&csv](const std::string& text) {
    csv.push_back(',');
    csv.append(text);
  };
  auto number = [](const json& v) { return v.is_number() ? JsonText(v) : std::string(); };
  for (const Param& p : space.params) field(CsvField(p.key));
  field("reason");
  for (const json& row : rows) {
    csv.push_back('\n');
    csv.append(std::to_string(row.value("trial", -1)));
    field(std::to_string(row.value("rung", 0)));
    field(std::to_string(row.value("steps", int64_t{0})));
    field(row.value("status", ""));
    field(number(row["objective"]));
    field(number(row.value("seconds", json())));
    field(number(row.value("train_seconds", json())));
    for (const Param& p : space.params) field(CsvField(row["params"].value(p.key, "")));
    field(CsvField(row.value("reason", "")));
  }
  csv.push_back('\n');
  RLT_RETURN_IF_ERROR(WriteFileAtomic((out / "results.csv").string(), csv));
  RLT_RETURN_IF_ERROR(
      WriteFileAtomic((out / "best.json").string(), StudyJson(r, o.method, UsesRungs(o))));
  return r;
}

}  // namespace rlt::tune
