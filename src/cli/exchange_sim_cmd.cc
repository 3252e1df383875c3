// rltrade cli: `rltrade exchange-sim --port P --bars FILE [--latency MS] [--reject-rate X]
// [--disconnect-every N] [--pause-after SEQ --pause-ms MS] [--speed X] [--seed S]
// [--lockstep] [--fee-rate X] [--cash X] [--timezone TZ] [--quiet]` — serves the broker protocol
// (paper/protocol.h) on 127.0.0.1 with the exchange simulator (paper/exchange_sim.h). Flag parsing,
// signals and printing only.
//
// stdout: first "listening on 127.0.0.1:PORT" (flushed at once, so a caller that passed
// --port 0 learns the port), last one line saying why it stopped (end of the file, or a
// signal) with the counts. stderr: one line per event unless --quiet. SIGINT and SIGTERM
// stop it cleanly (the client gets end {reason: "shutdown"}). The credential a server
// checks comes from RLTRADE_BROKER_TOKEN in the environment, never from a flag (flags
// show in `ps`), and is never printed.
#include <fmt/format.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "cli/commands.h"
#include "core/printable.h"
#include "market/csv.h"
#include "paper/exchange_sim.h"
#include "paper/tcp_broker.h"

namespace rlt::cli {
namespace {

struct ExchangeSimFlags {
  std::string bars;
  std::string timezone = "UTC";
  paper::ExchangeSimOptions options;
  bool quiet = false;
};

std::atomic<paper::ExchangeSim*> g_running{nullptr};
std::atomic<int> g_signal{0};

extern "C" void StopOnSignal(int signo) {
  g_signal.store(signo);
  if (paper::ExchangeSim* sim = g_running.load()) sim->Stop();
}

int RunExchangeSim(ExchangeSimFlags f) {
  market::CsvReadOptions read;
  read.timezone = f.timezone;
  Result<market::MarketData> data = market::ReadBarsCsv(f.bars, read);
  if (!data.ok()) return ReportError(data.status());
  if (const char* token = std::getenv(paper::kBrokerTokenVariable)) f.options.token = token;
  if (!f.quiet) {
    f.options.log = [](const std::string& line) {
      std::fprintf(stderr, "exchange-sim: %s\n", PrintableText(line).c_str());
    };
  }
  Result<std::unique_ptr<paper::ExchangeSim>> sim =
      paper::ExchangeSim::Create(std::move(data).value(), f.options);
  if (!sim.ok()) return ReportError(sim.status());
  g_running.store(sim->get());
  struct sigaction action {};
  action.sa_handler = StopOnSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  fmt::print("listening on 127.0.0.1:{}\n", (*sim)->port());
  std::fflush(stdout);
  const Status run = (*sim)->Run();
  g_running.store(nullptr);
  if (!run.ok()) return ReportError(run);
  const paper::ExchangeSimStats s = (*sim)->stats();
  const std::string counts =
      fmt::format("{} bars sent, {} connections, {} orders, {} fills, {} rejects", s.bars_sent,
                  s.connections, s.orders, s.fills, s.rejects);
  if ((*sim)->ended_at_end_of_data()) {
    fmt::print("end of {}: {}; exiting\n", f.bars, counts);
  } else {
    fmt::print("stopped by signal {}: {}; exiting\n", g_signal.load(), counts);
  }
  return 0;
}

// A check that a flag's value is a number in [lo, hi], written `bounds` in the message:
// CLI11's own range checks print a double bound with all its digits (300 for the largest).
CLI::Validator NumberIn(double lo, double hi, const std::string& bounds, const std::string& hint) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        char* end = nullptr;
        const double x = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || !(x >= lo && x <= hi)) {
          // CLI11 puts the flag's name in front: "--speed: 0: must be ...".
          return PrintableText(text, 32) + ": must be a number in " + bounds + hint;
        }
        return "";
      },
      "NUMBER in " + bounds);
}

}  // namespace

void RegisterExchangeSimCommand(CLI::App& app, Action* action) {
  auto f = std::make_shared<ExchangeSimFlags>();
  CLI::App* cmd = app.add_subcommand(
      "exchange-sim",
      "Serve the broker protocol on 127.0.0.1: stream a bar file, fill market orders at the "
      "next bar's open, inject faults");
  cmd->add_option("--port", f->options.port, "TCP port (0: any free port, printed first)")
      ->required()
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--bars", f->bars, "bar CSV to stream (any format `rltrade data check` reads)")
      ->required();
  cmd->add_option("--latency", f->options.latency_ms, "delay every response by MS milliseconds")
      ->check(CLI::Range(0, 600000));
  cmd->add_option("--reject-rate", f->options.reject_rate,
                  "reject this fraction of new orders (retryable; drawn from --seed)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--disconnect-every", f->options.disconnect_every,
                  "close the connection after every N-th bar (the client reconnects)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  cmd->add_option("--speed", f->options.speed,
                  "X times real time, 0.001 to 1000000 (default: as fast as the client reads)")
      ->check(NumberIn(paper::kMinSpeed, paper::kMaxSpeed, "[0.001, 1000000]",
                       " (times real time); leave --speed out to stream as fast as the client "
                       "reads"));
  cmd->add_option("--pause-after", f->options.pause_after,
                  "after bar SEQ hold the stream for --pause-ms (a feed that goes quiet)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  cmd->add_option("--pause-ms", f->options.pause_ms, "length of that pause, ms")
      ->check(CLI::Range(0, 3600000));
  cmd->add_option("--seed", f->options.seed, "seed of the --reject-rate draws");
  cmd->add_flag("--lockstep", f->options.lockstep,
                "stream bar t+1 only after the client's ready {after_bar: t}");
  cmd->add_option("--fee-rate", f->options.fee_rate,
                  "fee per fill as a fraction of traded value (default 0)")
      ->check(CLI::Range(0.0, 0.999));
  cmd->add_option("--cash", f->options.initial_cash,
                  "every account's starting cash, within +-1e30 (default 0)")
      ->check(NumberIn(-1e30, 1e30, "[-1e30, 1e30]", ""));
  cmd->add_option("--timezone", f->timezone, "IANA zone of naive timestamps in FILE (default UTC)");
  cmd->add_flag("--quiet", f->quiet, "no event lines on stderr");
  cmd->callback([f, action] { *action = [f] { return RunExchangeSim(*f); }; });
}

}  // namespace rlt::cli
