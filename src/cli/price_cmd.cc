// rltrade cli: `rltrade price` (one option's price and Greeks under any pricing model),
// `rltrade iv` (implied volatility from a price) and `rltrade bench pricing` (vectorised
// BSM prices with all Greeks per second). The numbers come from pricing/pricing.h; this
// file only parses flags and prints.
#include <fmt/format.h>
#include <time.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "cli/commands.h"
#include "core/rng.h"
#include "core/thread_pool.h"
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
  cmd->add_option("--spot", f->in.spot, "price of the underlying S")->required();
  cmd->add_option("--strike", f->in.strike, "strike K")->required();
  f->in.rate = 0;
  f->in.dividend = 0;
  cmd->add_option("--rate", f->in.rate, "risk-free rate r per year, continuous (0.05 = 5%)")
      ->capture_default_str();
  cmd->add_option("--div", f->in.dividend, "dividend yield q per year, continuous")
      ->capture_default_str();
  if (with_vol) {
    cmd->add_option("--vol", f->in.vol, "volatility sigma per sqrt(year) (0.2 = 20%)")->required();
  }
  cmd->add_option("--time", f->in.time, "years to expiry T (<= 0: expired, intrinsic value)")
      ->required();
  cmd->add_option("--steps", f->steps, "binomial tree steps")->capture_default_str();
  cmd->add_flag("--json", f->json, "print JSON");
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
    fmt::print("{}\n", j.dump(2));
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
  Result<double> iv = pricing::ImpliedVol(*model, f.in, f.price, options);
  if (!iv.ok()) return ReportError(iv.status());
  if (f.json) {
    nlohmann::json j = {
        {"model", f.model}, {"type", f.type}, {"price", f.price}, {"implied_vol", *iv}};
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("implied vol    {:.10g}   ({} {}, price {})\n", *iv, f.model, f.type, f.price);
  }
  return 0;
}

struct BenchPricingFlags {
  int64_t n = 1 << 16;
  int threads = 0;
  double seconds = 2.0;
  std::string precision = "double";
  bool json = false;
};

// Options drawn once (S 50..150, K around 100, r 0..8%, q 0..4%, vol 10..60%, T 1 day to
// 2 years, calls and puts), then BsmGreeksBatch over all of them repeatedly.
// CPU seconds used by this process (all threads).
double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct PricingRate {
  double per_sec = 0;      // options / wall second
  double per_cpu_sec = 0;  // options / CPU second (what one core does when not shared)
  double seconds = 0;
};

template <typename T>
PricingRate MeasureGreeksPerSecond(const BenchPricingFlags& f, int threads) {
  const size_t n = static_cast<size_t>(f.n);
  std::vector<pricing::OptionType> type(n);
  std::vector<std::vector<T>> in(6, std::vector<T>(n)), out(8, std::vector<T>(n));
  Rng rng(1);
  for (size_t i = 0; i < n; ++i) {
    type[i] = rng.Bernoulli(0.5) ? pricing::OptionType::kCall : pricing::OptionType::kPut;
    in[0][i] = static_cast<T>(rng.Uniform(50, 150));
    in[1][i] = static_cast<T>(100 * std::exp(0.2 * rng.Normal()));
    in[2][i] = static_cast<T>(rng.Uniform(0, 0.08));
    in[3][i] = static_cast<T>(rng.Uniform(0, 0.04));
    in[4][i] = static_cast<T>(rng.Uniform(0.1, 0.6));
    in[5][i] = static_cast<T>(rng.Uniform(1 / 365.0, 2.0));
  }
  const pricing::OptionBatch<T> batch{n,
                                      type.data(),
                                      in[0].data(),
                                      in[1].data(),
                                      in[2].data(),
                                      in[3].data(),
                                      in[4].data(),
                                      in[5].data()};
  const pricing::GreeksBatch<T> greeks{out[0].data(), out[1].data(), out[2].data(), out[3].data(),
                                       out[4].data(), out[5].data(), out[6].data(), out[7].data()};
  WorkerPool pool(threads);
  RLT_CHECK(pricing::BsmGreeksBatch(batch, greeks, &pool).ok());  // warm up
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const double cpu_start = ProcessCpuSeconds();
  int64_t passes = 0;
  double seconds = 0;
  while (seconds < f.seconds) {
    RLT_CHECK(pricing::BsmGreeksBatch(batch, greeks, &pool).ok());
    ++passes;
    seconds = std::chrono::duration<double>(Clock::now() - start).count();
  }
  const double options = static_cast<double>(passes) * static_cast<double>(n);
  return {options / seconds, options / (ProcessCpuSeconds() - cpu_start), seconds};
}

int RunBenchPricing(const BenchPricingFlags& f) {
  if (f.n < 1 || f.seconds <= 0) {
    return ReportError(Status::InvalidArgument("--n and --seconds must be positive"));
  }
  const int threads = f.threads > 0 ? f.threads : HardwareThreads();
  const PricingRate rate = f.precision == "float" ? MeasureGreeksPerSecond<float>(f, threads)
                                                  : MeasureGreeksPerSecond<double>(f, threads);
  if (f.json) {
    nlohmann::json j = {{"options", f.n},
                        {"threads", threads},
                        {"precision", f.precision},
                        {"seconds", rate.seconds},
                        {"greeks_per_option", 8},
                        {"options_per_sec", rate.per_sec},
                        {"options_per_cpu_sec", rate.per_cpu_sec}};
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print(
        "BSM price + 7 Greeks ({}), {} options, {} threads: {:.1f} million options/s "
        "({:.1f} million per CPU second)\n",
        f.precision, f.n, threads, rate.per_sec / 1e6, rate.per_cpu_sec / 1e6);
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
  iv->add_option("--price", ivf->price, "the option's price")->required();
  AddOptionFlags(iv, ivf.get(), /*with_vol=*/false);
  iv->callback([ivf, action] { *action = [ivf] { return RunImpliedVol(*ivf); }; });

  // `bench pricing` joins the `bench` group registered by RegisterBenchCommands.
  CLI::App* bench = app.get_subcommand("bench");
  auto bf = std::make_shared<BenchPricingFlags>();
  CLI::App* bp = bench->add_subcommand(
      "pricing", "Vectorised BSM prices with all Greeks per second (pricing/pricing.h)");
  bp->add_option("--n", bf->n, "options per batch")->capture_default_str();
  bp->add_option("--threads", bf->threads, "worker threads (0 = all cores)")->capture_default_str();
  bp->add_option("--seconds", bf->seconds, "measuring time")->capture_default_str();
  bp->add_option("--precision", bf->precision, "array type")
      ->check(CLI::IsMember({"double", "float"}))
      ->capture_default_str();
  bp->add_flag("--json", bf->json, "print JSON");
  bp->callback([bf, action] { *action = [bf] { return RunBenchPricing(*bf); }; });
}

}  // namespace rlt::cli
