// rltrade cli: `rltrade price` (one option's price and Greeks under any pricing model),
// `rltrade iv` (implied volatility from a price) and `rltrade bench pricing` (vectorised
// BSM prices with all Greeks per second). The numbers come from pricing/pricing.h and
// pricing/greeks_bench.h; this file only parses flags and prints.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/numeric_flags.h"
#include "core/json_text.h"
#include "core/thread_pool.h"
#include "pricing/greeks_bench.h"
#include "pricing/pricing.h"

namespace rlt::cli {
namespace {

struct PriceFlags {
  std::string model = "bsm";
  std::string type = "call";
  pricing::OptionInputs in;
  int steps = pricing::ModelOptions{}.binomial_steps;
  double price = 0;  // iv only
  bool greeks = false;
  bool json = false;
};

// The option flags shared by `price` and `iv` (`iv` has no --vol).
void AddOptionFlags(CLI::App* cmd, PriceFlags* f, bool with_vol) {
  cmd->add_option("--model", f->model, "pricing model")
      ->check(CLI::IsMember({"bsm", "binomial", "baw", "bjerksund"}))
      ->capture_default_str();
  cmd->add_option("--type", f->type, "option type")
      ->check(CLI::IsMember({"call", "put"}))
      ->capture_default_str();
  cmd->add_option("--spot", f->in.spot, "price of the underlying S")
      ->check(DecimalNumber())
      ->required();
  cmd->add_option("--strike", f->in.strike, "strike K")->check(DecimalNumber())->required();
  f->in.rate = 0;
  f->in.dividend = 0;
  cmd->add_option("--rate", f->in.rate, "risk-free rate r per year, continuous (0.05 = 5%)")
      ->check(DecimalNumber())
      ->capture_default_str();
  cmd->add_option("--div", f->in.dividend, "dividend yield q per year, continuous")
      ->check(DecimalNumber())
      ->capture_default_str();
  if (with_vol) {
    cmd->add_option("--vol", f->in.vol, "volatility sigma per sqrt(year) (0.2 = 20%)")
        ->check(DecimalNumber())
        ->required();
  }
  cmd->add_option("--time", f->in.time, "years to expiry T (<= 0: expired, intrinsic value)")
      ->check(DecimalNumber())
      ->required();
  cmd->add_option("--steps", f->steps, "binomial tree steps")
      ->check(DecimalInteger())
      ->capture_default_str();
  cmd->add_flag("--json", f->json, "print JSON");
}

// The binomial tree's work: each price is a tree of steps (steps + 1) / 2 nodes, about
// kTreeNodesPerSecond on one core (measured, Release: 3.3e8-3.9e8 with 20,000 steps while
// another build shared the machine). `price` builds one tree, `price --greeks` eight (the
// price, the tree's own delta/gamma/theta, and two each for vega, rho and dividend rho),
// `iv` typically kIvTypicalTrees (measured 6-10 with 2,000 steps: the bracket's ends and
// the secant iterations; at most 2 + 200). The limit keeps one command to ~20 s.
constexpr double kTreeNodesPerSecond = 4e8;
constexpr double kMaxTreeNodes = 8e9;
constexpr double kIvTypicalTrees = 10;

Status CheckBinomialWork(const char* command, const PriceFlags& f, double trees) {
  const double nodes_per_tree = 0.5 * static_cast<double>(f.steps) * (f.steps + 1.0);
  const double nodes = trees * nodes_per_tree;
  if (nodes <= kMaxTreeNodes) return Status::Ok();
  // The largest N with trees * N (N + 1) / 2 <= kMaxTreeNodes.
  int64_t max_steps = static_cast<int64_t>((std::sqrt(1 + 8 * kMaxTreeNodes / trees) - 1) / 2);
  while (max_steps > 1 && trees * 0.5 * max_steps * (max_steps + 1.0) > kMaxTreeNodes) --max_steps;
  return Status::InvalidArgument(fmt::format(
      "{} --model binomial --steps {}{}: {:.0f} tree(s) of {:.3g} nodes = {:.3g} nodes, ~{:.0f} s "
      "on one core (~{:.0e} nodes a second). The limit is {:.0e} nodes (~{:.0f} s). Fix: lower "
      "--steps to at most {} (the tree's error falls like 1/steps), or use --model bjerksund "
      "or --model baw",
      command, f.steps, f.greeks ? " --greeks" : "", trees, nodes_per_tree, nodes,
      nodes / kTreeNodesPerSecond, kTreeNodesPerSecond, kMaxTreeNodes,
      kMaxTreeNodes / kTreeNodesPerSecond, max_steps));
}

Result<pricing::Model> Prepare(PriceFlags& f) {
  RLT_ASSIGN_OR_RETURN(pricing::Model model, pricing::ParseModel(f.model));
  RLT_ASSIGN_OR_RETURN(f.in.type, pricing::ParseOptionType(f.type));
  return model;
}

int RunPrice(PriceFlags f) {
  Result<pricing::Model> model = Prepare(f);
  if (!model.ok()) return ReportError(model.status());
  pricing::ModelOptions options;
  options.binomial_steps = f.steps;
  if (*model == pricing::Model::kBinomial) {
    Status work = CheckBinomialWork("price", f, f.greeks && f.steps >= 2 ? 8 : f.greeks ? 11 : 1);
    if (!work.ok()) return ReportError(work);
  }
  pricing::Greeks g;
  if (f.greeks) {
    Result<pricing::Greeks> r = pricing::ModelGreeks(*model, f.in, options);
    if (!r.ok()) return ReportError(r.status());
    g = *r;
  } else {
    Result<double> r = pricing::Price(*model, f.in, options);
    if (!r.ok()) return ReportError(r.status());
    g.price = *r;
  }
  if (f.json) {
    nlohmann::json j = {{"model", f.model}, {"type", f.type}, {"price", g.price}};
    if (f.greeks) {
      j["delta"] = g.delta;
      j["gamma"] = g.gamma;
      j["vega"] = g.vega;
      j["theta"] = g.theta;
      j["theta_per_day"] = g.theta_per_day;
      j["rho"] = g.rho;
      j["dividend_rho"] = g.dividend_rho;
      j["elasticity"] = g.elasticity;
    }
    fmt::print("{}\n", JsonText(j, 2));
    return 0;
  }
  fmt::print("{} {}  S={} K={} r={} q={} vol={} T={}\n", f.model, f.type, f.in.spot, f.in.strike,
             f.in.rate, f.in.dividend, f.in.vol, f.in.time);
  fmt::print("price          {:.10g}\n", g.price);
  if (f.greeks) {
    fmt::print("delta          {:.10g}\n", g.delta);
    fmt::print("gamma          {:.10g}\n", g.gamma);
    fmt::print("vega           {:.10g}   (per 1.00 of vol)\n", g.vega);
    fmt::print("theta          {:.10g}   (per year)\n", g.theta);
    fmt::print("theta_per_day  {:.10g}   (theta / 365)\n", g.theta_per_day);
    fmt::print("rho            {:.10g}   (per 1.00 of rate)\n", g.rho);
    fmt::print("dividend_rho   {:.10g}   (per 1.00 of yield)\n", g.dividend_rho);
    fmt::print("elasticity     {:.10g}\n", g.elasticity);
  }
  return 0;
}

int RunImpliedVol(PriceFlags f) {
  Result<pricing::Model> model = Prepare(f);
  if (!model.ok()) return ReportError(model.status());
  pricing::ImpliedVolOptions options;
  options.model.binomial_steps = f.steps;
  if (*model == pricing::Model::kBinomial) {
    Status work = CheckBinomialWork("iv", f, kIvTypicalTrees);
    if (!work.ok()) return ReportError(work);
  }
  Result<double> iv = pricing::ImpliedVol(*model, f.in, f.price, options);
  if (!iv.ok()) return ReportError(iv.status());
  if (f.json) {
    nlohmann::json j = {
        {"model", f.model}, {"type", f.type}, {"price", f.price}, {"implied_vol", *iv}};
    fmt::print("{}\n", JsonText(j, 2));
  } else {
    fmt::print("implied vol    {:.10g}   ({} {}, price {})\n", *iv, f.model, f.type, f.price);
  }
  return 0;
}

struct BenchPricingFlags {
  int64_t n = 1 << 16;
  std::string threads = "1,2";
  double seconds = 1.0;
  std::string precision = "double,float";
  bool json = false;
};

// "1,2" or "double,float": the comma-separated items, none empty.
Result<std::vector<std::string>> BenchList(const std::string& flag, const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    items.push_back(text.substr(start, comma - start));
    if (items.back().empty()) {
      return Status::InvalidArgument(flag + " " + text + ": empty item in the list");
    }
    start = comma + 1;
  }
  return items;
}

int RunBenchPricing(const BenchPricingFlags& f) {
  if (f.n < 1 || f.n > (int64_t{1} << 28) || !(f.seconds > 0 && f.seconds <= 3600)) {
    return ReportError(
        Status::InvalidArgument("--n must be in [1, 2^28] and --seconds in (0, 3600]"));
  }
  Result<std::vector<std::string>> thread_items = BenchList("--threads", f.threads);
  if (!thread_items.ok()) return ReportError(thread_items.status());
  Result<std::vector<std::string>> precisions = BenchList("--precision", f.precision);
  if (!precisions.ok()) return ReportError(precisions.status());
  std::vector<int> threads;
  for (const std::string& t : *thread_items) {
    char* end = nullptr;
    const long v = std::strtol(t.c_str(), &end, 10);
    if (*end != '\0' || v < 0 || v > 1024) {
      return ReportError(Status::InvalidArgument(
          "--threads " + f.threads + ": expected thread counts 0..1024, e.g. 1,2 (0 = all cores)"));
    }
    threads.push_back(v == 0 ? HardwareThreads() : static_cast<int>(v));
  }
  for (const std::string& p : *precisions) {
    if (p != "double" && p != "float") {
      return ReportError(Status::InvalidArgument("--precision " + f.precision +
                                                 ": expected double, float or double,float"));
    }
  }
  std::vector<pricing::GreeksRate> rates;
  for (const std::string& p : *precisions) {
    for (int t : threads) {
      rates.push_back(pricing::MeasureGreeksRate(p == "float", f.n, t, f.seconds));
    }
  }
  bool accurate = true;
  for (const pricing::GreeksRate& r : rates) accurate = accurate && r.accurate;
  if (f.json) {
    nlohmann::json results = nlohmann::json::array();
    for (const pricing::GreeksRate& r : rates) {
      results.push_back({{"precision", r.precision},
                         {"threads", r.threads},
                         {"seconds", r.seconds},
                         {"options_per_sec", r.per_sec},
                         {"options_per_cpu_sec", r.per_cpu_sec},
                         {"max_scaled_error", r.max_scaled_error},
                         {"tolerance", r.tolerance},
                         {"accurate", r.accurate}});
    }
    nlohmann::json j = {{"options", f.n},
                        {"greeks_per_option", 8},
                        {"target_options_per_sec", 50e6},
                        {"results", results},
                        {"accurate", accurate}};
    if (rates.size() == 1) {  // one setting: its figures at the top level too
      for (const char* key : {"precision", "threads", "seconds", "options_per_sec",
                              "options_per_cpu_sec", "max_scaled_error"}) {
        j[key] = results[0][key];
      }
    }
    fmt::print("{}\n", JsonText(j, 2));
  } else {
    fmt::print("BSM price + 7 Greeks, {} options per batch, {:g} s per setting\n", f.n, f.seconds);
    fmt::print("{:>9} {:>8} {:>14} {:>18} {:>12} {:>10}\n", "precision", "threads", "Mopt/s",
               "Mopt/CPU-s", "max error", "check");
    for (const pricing::GreeksRate& r : rates) {
      fmt::print("{:>9} {:>8} {:>14.1f} {:>18.1f} {:>12.2e} {:>10}\n", r.precision, r.threads,
                 r.per_sec / 1e6, r.per_cpu_sec / 1e6, r.max_scaled_error,
                 r.accurate ? "ok" : "FAILED");
    }
    fmt::print(
        "max error: max |batch - scalar reference| / max(1, |reference|) over the batch and "
        "all 8 outputs (elasticity's also divided by its condition number (|delta| S + "
        "|rho|/T) / price); tolerance 1e-12 (double), 1e-6 (float). Target: 50 million/s on "
        "2 cores.\n");
  }
  if (!accurate) {
    return ReportError(Status::DataError(
        "the vectorised batch differs from the scalar reference beyond the tolerance"));
  }
  return 0;
}

}  // namespace

void RegisterPricingCommands(CLI::App& app, Action* action) {
  auto pf = std::make_shared<PriceFlags>();
  CLI::App* price = app.add_subcommand(
      "price", "Price one option (bsm European; binomial, baw, bjerksund American)");
  AddOptionFlags(price, pf.get(), /*with_vol=*/true);
  price->add_flag("--greeks", pf->greeks,
                  "also print delta, gamma, vega, theta (per year and per day), rho, dividend "
                  "rho, elasticity (vega and rho per 1.00)");
  price->callback([pf, action] { *action = [pf] { return RunPrice(*pf); }; });

  auto ivf = std::make_shared<PriceFlags>();
  CLI::App* iv = app.add_subcommand("iv", "Implied volatility of an option price under a model");
  iv->add_option("--price", ivf->price, "the option's price")->check(DecimalNumber())->required();
  AddOptionFlags(iv, ivf.get(), /*with_vol=*/false);
  iv->callback([ivf, action] { *action = [ivf] { return RunImpliedVol(*ivf); }; });

  // `bench pricing` joins the `bench` group registered by RegisterBenchCommands.
  CLI::App* bench = app.get_subcommand("bench");
  auto bf = std::make_shared<BenchPricingFlags>();
  CLI::App* bp = bench->add_subcommand(
      "pricing",
      "Vectorised BSM prices with all Greeks per second, 1 and 2 threads, double and float, "
      "checked against the scalar reference (pricing/pricing.h); exit 1 if the check fails");
  bp->add_option("--n", bf->n, "options per batch")->check(DecimalInteger())->capture_default_str();
  bp->add_option("--threads", bf->threads,
                 "comma-separated worker thread counts to measure (0 = all cores)")
      ->capture_default_str();
  bp->add_option("--seconds", bf->seconds, "measuring time per setting")
      ->check(DecimalNumber())
      ->capture_default_str();
  bp->add_option("--precision", bf->precision, "array types to measure: double, float or both")
      ->capture_default_str();
  bp->add_flag("--json", bf->json, "print JSON");
  bp->callback([bf, action] { *action = [bf] { return RunBenchPricing(*bf); }; });
}

}  // namespace rlt::cli
