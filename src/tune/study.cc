// rltrade tune: studies (see study.h).
#include "tune/study.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/file_io.h"
#include "core/json_text.h"
#include "tune/search.h"

namespace rlt::tune {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

json StudyHeader(const StudyOptions& o) {
  return {{"method", o.method},       {"seed", o.seed},         {"trials", o.trials},
          {"objective", o.objective}, {"minimize", o.minimize}, {"space", o.space_text}};
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

Result<std::string> ReadStudyHeader(const std::string& out_dir) {
  const std::string path = (fs::path(out_dir) / "study.json").string();
  if (!fs::exists(path)) {
    return Status::NotFound(out_dir + " is not a tune study (no study.json)");
  }
  return ReadFile(path);
}

std::string StudyJson(const StudyResult& r, const std::string& method) {
  json params = json::object();
  for (const auto& [k, v] : r.best_params) params[k] = v;
  json j = {
      {"best_objective", std::isfinite(r.best_objective) ? json(r.best_objective) : json(nullptr)},
      {"best_params", params},
      {"best_trial", r.best_trial},
      {"trials", r.trials},
      {"method", method}};
  return JsonText(j, 2);
}

Result<StudyResult> RunStudy(const Space& space, const StudyOptions& o, const TrialFn& fn) {
  if (o.trials < 1) return Status::InvalidArgument("--trials must be >= 1");
  const fs::path out(o.out_dir);
  const std::string journal = (out / "trials.jsonl").string();
  const std::string header_path = (out / "study.json").string();
  std::vector<json> done;
  if (o.resume) {
    RLT_ASSIGN_OR_RETURN(std::string text, ReadFile(header_path));
    json header = json::parse(text, nullptr, false);
    if (!header.is_discarded()) header.erase("command");
    if (header.is_discarded() || header != StudyHeader(o)) {
      return Status::Refused(header_path +
                             " describes another study (method, seed, trials, objective or "
                             "space differ): resume it with its own arguments");
    }
    std::ifstream in(journal);
    std::string line;
    while (std::getline(in, line)) {
      const json j = json::parse(line, nullptr, false);
      if (j.is_discarded()) break;  // a line cut by a kill: that trial runs again
      done.push_back(j);
    }
  } else {
    if (fs::exists(out)) {
      return Status::InvalidArgument(o.out_dir +
                                     " exists already: choose another --out, or "
                                     "continue it with --resume " +
                                     o.out_dir);
    }
    std::error_code ec;
    fs::create_directories(out, ec);
    if (ec) return Status::IoError(o.out_dir + ": " + ec.message());
    RLT_RETURN_IF_ERROR(WriteFileAtomic(header_path, JsonText(WithCommand(StudyHeader(o), o), 2)));
  }
  RLT_ASSIGN_OR_RETURN(std::unique_ptr<Search> search,
                       MakeSearch(o.method, space, o.trials, o.seed));
  StudyResult r;
  r.best_objective = std::numeric_limits<double>::quiet_NaN();
  std::vector<json> rows;
  auto record = [&](int i, const std::vector<std::pair<std::string, std::string>>& params,
                    const json& line) {
    const std::string status = line.value("status", "");
    double score = std::numeric_limits<double>::quiet_NaN();
    if (status == "ok" && line["objective"].is_number()) {
      const double v = line["objective"].get<double>();
      score = o.minimize ? -v : v;
      ++r.ok;
      if (!std::isfinite(r.best_objective) ||
          (o.minimize ? v < r.best_objective : v > r.best_objective)) {
        r.best_objective = v;
        r.best_trial = i;
        r.best_params = params;
      }
    }
    search->Tell(score);
    ++r.trials;
    rows.push_back(line);
  };
  auto propose = [&](json* pj) {
    const std::vector<double> u = search->Propose();
    std::vector<std::pair<std::string, std::string>> params;
    *pj = json::object();
    for (int j = 0; j < space.dims(); ++j) {
      params.emplace_back(space.params[j].key, ValueText(space.params[j], u[j]));
      (*pj)[space.params[j].key] = params.back().second;
    }
    return params;
  };
  const int parallel = o.method == "anneal" ? 1 : std::max(1, o.parallel);
  int i = 0;
  while (i < o.trials) {
    if (i < static_cast<int>(done.size())) {
      json pj;
      const auto params = propose(&pj);
      if (done[i].value("trial", -1) != i || done[i]["params"] != pj) {
        return Status::DataError(journal + ": trial " + std::to_string(i) +
                                 " does not match the study's proposal; the journal belongs "
                                 "to another study or was edited");
      }
      record(i, params, done[i]);
      ++i;
      continue;
    }
    // The next batch: proposed in order, evaluated at once, journaled in order.
    const int n = std::min(parallel, o.trials - i);
    std::vector<std::vector<std::pair<std::string, std::string>>> batch(n);
    std::vector<json> batch_json(n);
    for (int k = 0; k < n; ++k) batch[k] = propose(&batch_json[k]);
    std::vector<TrialResult> results(n);
    std::vector<double> seconds(n);
    auto run = [&](int k) {
      const auto start = std::chrono::steady_clock::now();
      results[k] = fn(i + k, batch[k]);
      seconds[k] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    if (n == 1) {
      run(0);
    } else {
      std::vector<std::thread> workers;
      for (int k = 0; k < n; ++k) workers.emplace_back(run, k);
      for (std::thread& w : workers) w.join();
    }
    for (int k = 0; k < n; ++k) {
      const TrialResult& t = results[k];
      json line = {{"trial", i + k},     {"params", batch_json[k]}, {"status", t.status},
                   {"reason", t.reason}, {"seconds", seconds[k]},   {"run_dir", t.run_dir}};
      line["objective"] = t.status == "ok" ? json(t.objective) : json(nullptr);
      RLT_RETURN_IF_ERROR(AppendLine(journal, line.dump()));
      record(i + k, batch[k], line);
      if (!o.quiet) {
        std::fprintf(stderr, "trial %d/%d: %s%s\n", i + k + 1, o.trials,
                     t.status == "ok" ? ("objective " + std::to_string(t.objective)).c_str()
                                      : (t.status + ": " + t.reason).c_str(),
                     r.best_trial == i + k ? " (best so far)" : "");
      }
    }
    i += n;
  }
  // results.csv and best.json, rewritten whole at the end.
  std::string csv = "trial,status,objective,seconds";
  for (const Param& p : space.params) csv += "," + CsvField(p.key);
  csv += ",reason\n";
  for (const json& row : rows) {
    csv += std::to_string(row.value("trial", -1)) + "," + row.value("status", "") + "," +
           (row["objective"].is_number() ? JsonText(row["objective"]) : std::string()) + "," +
           JsonText(json(row.value("seconds", 0.0)));
    for (const Param& p : space.params) csv += "," + CsvField(row["params"].value(p.key, ""));
    csv += "," + CsvField(row.value("reason", "")) + "\n";
  }
  RLT_RETURN_IF_ERROR(WriteFileAtomic((out / "results.csv").string(), csv));
  RLT_RETURN_IF_ERROR(WriteFileAtomic((out / "best.json").string(), StudyJson(r, o.method)));
  return r;
}

}  // namespace rlt::tune
