// rltrade cli: `rltrade docs cli [--out FILE]` and `rltrade docs config [--out FILE]` — the
// command-line and configuration references (docs/cli.md, docs/config.md) generated from
// the code (cli/reference.h). Without --out the text goes to stdout; with it the file is
// written atomically (core/file_io.h), so an interrupted `make docs` leaves the old file.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/reference.h"
#include "core/file_io.h"

namespace rlt::cli {
namespace {

int Emit(const Result<std::string>& text, const std::string& out) {
  if (!text.ok()) return ReportError(text.status());
  if (out.empty()) {
    std::fwrite(text->data(), 1, text->size(), stdout);
    return 0;
  }
  const Status written = WriteFileAtomic(out, *text);
  if (!written.ok()) return ReportError(Annotate(written, "--out " + out + ": "));
  return 0;
}

}  // namespace

void RegisterDocsCommands(CLI::App& app, Action* action) {
  CLI::App* root = &app;  // the whole command tree, complete once main() has registered it
  CLI::App* docs = app.add_subcommand(
      "docs", "Print the references generated from the code (docs/cli.md, docs/config.md)");
  docs->require_subcommand(1);

  auto cli_out = std::make_shared<std::string>();
  CLI::App* cli = docs->add_subcommand(
      "cli", "Every command and subcommand with its usage, arguments and options (docs/cli.md)");
  cli->add_option("--out", *cli_out, "write to FILE (atomically) instead of stdout");
  cli->callback([root, cli_out, action] {
    *action = [root, cli_out] { return Emit(CliReference(*root), *cli_out); };
  });

  auto config_out = std::make_shared<std::string>();
  CLI::App* config = docs->add_subcommand(
      "config",
      "Every config section and key with its type, default, allowed values and description "
      "(docs/config.md)");
  config->add_option("--out", *config_out, "write to FILE (atomically) instead of stdout");
  config->callback([config_out, action] {
    *action = [config_out] { return Emit(ConfigReference(), *config_out); };
  });
}

}  // namespace rlt::cli
