// rltrade cli: the generated references docs/cli.md and docs/config.md (`rltrade docs cli`,
// `rltrade docs config`; `make docs` regenerates both, and the test docs_cli_test fails when
// the committed files differ from what the code generates).
//
// CliReference walks the CLI11 App tree the binary parses with: every command and
// subcommand in registration order, its description, usage, positional arguments and
// options (names, CLI11's type name with its validators, default, description), all read
// from CLI11's own data. ConfigReference prints every config section and key the binder
// knows, from the options structs' VisitFields (core/options.h DocumentOptions: key, type,
// default, doc, allowed values), one table per section, and every registered environment's
// [env] options (env/registry.h). Sections and files parsed by hand rather than through an
// options struct ([split], the paper trader's risk limits, tune's search spaces, the keys
// the binder leaves to its caller such as [env] id and [algo] name) are listed in
// reference.cc, in one place each (HandParsedKeys below).
//
// Both texts are deterministic: no terminal width, no paths of the build, nothing measured
// on the machine; neither depends on whether the build has LibTorch or MPI (no command and
// no help text does).
#ifndef RLT_CLI_REFERENCE_H_
#define RLT_CLI_REFERENCE_H_

#include <string>
#include <vector>

#include "core/status.h"

namespace CLI {
class App;
}

namespace rlt::cli {

// docs/cli.md: every command of `root` (the `rltrade` app) and its subcommands.
std::string CliReference(const CLI::App& root);

// docs/config.md. Errors: a registered environment without its option docs (env/registry.cc).
Result<std::string> ConfigReference();

// A key of a file parsed by hand (no options struct): its documentation and a value it
// accepts, so a test can check the parser still knows it.
struct HandParsedKey {
  const char* key;
  const char* type;
  const char* absent;   // what an absent key means ("" when it has no default)
  const char* example;  // TOML text of a valid value
  const char* doc;
};

// The keys of `rltrade paper --risk RISK.toml` (paper/risk.cc ParseRiskLimits).
const std::vector<HandParsedKey>& RiskLimitKeys();
// The distributions of `rltrade tune --space SPACE.toml` (tune/space.cc ParseSpace): `key` is
// the distribution's name, `type` the form of its value, `example` an entry's value.
const std::vector<HandParsedKey>& SearchSpaceForms();
// The names of [split] (train/train_options.cc ReadSplit).
const std::vector<HandParsedKey>& SplitKeys();

}  // namespace rlt::cli

#endif  // RLT_CLI_REFERENCE_H_
