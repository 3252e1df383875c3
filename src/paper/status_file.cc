// rltrade paper: a paper session's status.json (see status_file.h).
#include "paper/status_file.h"

#include "core/file_io.h"
#include "core/json_text.h"

namespace rlt::paper {

nlohmann::ordered_json PaperStatusJson(const PaperStatus& s) {
  nlohmann::ordered_json j = {{"kind", "paper"},
                              {"pid", s.pid},
                              {"state", s.state},
                              {"run_dir", s.run_dir},
                              {"feed", s.feed},
                              {"broker", s.broker},
                              {"start_time", s.start_time},
                              {"updated_time", s.updated_time},
                              {"bars", s.bars}};
  if (s.has_bar) {
    nlohmann::ordered_json refusals = nlohmann::ordered_json::object();
    for (const auto& [rule, n] : s.refusals) refusals[rule] = n;
    j["last_bar"] = s.last_bar;
    j["last_bar_time"] = s.last_bar_time;
    j["session_date"] = s.session_date;
    j["trading"] = s.trading;
    j["position"] = s.position;
    j["cash"] = s.cash;
    j["net_worth"] = s.net_worth;
    j["pnl_today"] = s.pnl_today;
    j["orders_today"] = s.orders_today;
    j["open_orders"] = s.open_orders;
    j["fills"] = s.fills;
    j["risk"] = {{"halted", s.halted},
                 {"stopped", s.stopped},
                 {"stale_feed", s.stale_feed},
                 {"refusals", refusals}};
  }
  if (!s.error.empty()) j["error"] = s.error;
  return j;
}

Status WritePaperStatus(const std::filesystem::path& journal_dir, const PaperStatus& status) {
  return WriteFileAtomic((journal_dir / kPaperStatusFile).string(),
                         JsonText(PaperStatusJson(status), 2) + "\n");
}

bool IsPaperStatus(const nlohmann::json& j) {
  return j.is_object() && j.contains("kind") && j["kind"].is_string() &&
         j["kind"].get<std::string>() == "paper";
}

namespace {

void Read(const nlohmann::json& j, const char* key, std::string& out) {
  if (j.contains(key) && j[key].is_string()) out = j[key].get<std::string>();
}
void Read(const nlohmann::json& j, const char* key, int64_t& out) {
  if (j.contains(key) && j[key].is_number_integer()) out = j[key].get<int64_t>();
}
void Read(const nlohmann::json& j, const char* key, double& out) {
  if (j.contains(key) && j[key].is_number()) out = j[key].get<double>();
}
void Read(const nlohmann::json& j, const char* key, bool& out) {
  if (j.contains(key) && j[key].is_boolean()) out = j[key].get<bool>();
}

}  // namespace

PaperStatus PaperStatusFromJson(const nlohmann::json& j) {
  PaperStatus s;
  if (!j.is_object()) return s;
  Read(j, "pid", s.pid);
  Read(j, "state", s.state);
  Read(j, "run_dir", s.run_dir);
  Read(j, "feed", s.feed);
  Read(j, "broker", s.broker);
  Read(j, "start_time", s.start_time);
  Read(j, "updated_time", s.updated_time);
  Read(j, "bars", s.bars);
  s.has_bar = j.contains("last_bar");
  Read(j, "last_bar", s.last_bar);
  Read(j, "last_bar_time", s.last_bar_time);
  Read(j, "session_date", s.session_date);
  Read(j, "trading", s.trading);
  Read(j, "position", s.position);
  Read(j, "cash", s.cash);
  Read(j, "net_worth", s.net_worth);
  Read(j, "pnl_today", s.pnl_today);
  Read(j, "orders_today", s.orders_today);
  Read(j, "fills", s.fills);
  if (j.contains("open_orders") && j["open_orders"].is_array()) {
    for (const auto& id : j["open_orders"]) {
      if (id.is_string()) s.open_orders.push_back(id.get<std::string>());
    }
  }
  if (j.contains("risk") && j["risk"].is_object()) {
    const nlohmann::json& risk = j["risk"];
    Read(risk, "halted", s.halted);
    Read(risk, "stopped", s.stopped);
    Read(risk, "stale_feed", s.stale_feed);
    if (risk.contains("refusals") && risk["refusals"].is_object()) {
      for (const auto& [rule, n] : risk["refusals"].items()) {
        if (n.is_number_integer()) s.refusals[rule] = n.get<int64_t>();
      }
    }
  }
  Read(j, "error", s.error);
  return s;
}

}  // namespace rlt::paper
