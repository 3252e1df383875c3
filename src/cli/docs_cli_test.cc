// The generated references: docs/cli.md and docs/config.md as committed must equal what
// `rltrade docs cli` and `rltrade docs config` print from the code (the CI check: a new
// command, option, config key or default without `make docs` fails here), and the `docs`
// command itself (stdout or --out, written atomically, deterministic).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"
#include "testing/testing.h"

namespace {

namespace fs = std::filesystem;
using rlt::cli::testing_util::RunCli;
using rlt::testing::Lines;
using rlt::testing::ReadFile;

// "" when equal; otherwise where the first difference is, in the failure message the CI
// log shows.
std::string FirstDifference(const std::string& name, const std::string& committed,
                            const std::string& generated) {
  if (committed == generated) return "";
  const std::vector<std::string> a = Lines(committed);
  const std::vector<std::string> b = Lines(generated);
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  std::string where;
  if (i < a.size() && i < b.size()) {
    where = "line " + std::to_string(i + 1) + ": the file has\n  " + a[i] +
            "\nand the code generates\n  " + b[i];
  } else if (i < b.size()) {
    where = "line " + std::to_string(i + 1) + ": the file ends; the code generates\n  " + b[i];
  } else if (i < a.size()) {
    where = "line " + std::to_string(i + 1) + ": the code's text ends; the file has\n  " + a[i];
  } else {
    where = "the end of the file (a trailing newline or a carriage return)";
  }
  return name + " differs from what the code generates (first difference at " + where +
         "\n); run `make docs` and commit the result";
}

class DocsReference : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = rlt::testing::NewScratchDir("rlt_docs_cli_"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  // Generates `docs <what>` into the scratch directory and compares it with docs/<file>.
  void ExpectCommittedFileMatches(const std::string& what, const std::string& file) {
    const std::string out = Path(file);
    const auto r = RunCli("docs " + what + " --out " + out);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const std::string generated = ReadFile(out);
    ASSERT_FALSE(generated.empty()) << "rltrade docs " << what << " wrote nothing";
    const fs::path committed = fs::path(RLT_SOURCE_DIR) / "docs" / file;
    ASSERT_TRUE(fs::exists(committed))
        << "docs/" << file << " is missing; run `make docs` and commit the result";
    const std::string diff = FirstDifference("docs/" + file, ReadFile(committed), generated);
    EXPECT_TRUE(diff.empty()) << diff;
  }

  fs::path dir_;
};

TEST_F(DocsReference, CliMdMatchesTheCode) { ExpectCommittedFileMatches("cli", "cli.md"); }

TEST_F(DocsReference, ConfigMdMatchesTheCode) { ExpectCommittedFileMatches("config", "config.md"); }

TEST_F(DocsReference, StdoutEqualsTheOutFileAndNeitherDependsOnTheTerminalOrDirectory) {
  for (const std::string what : {"cli", "config"}) {
    const std::string out = Path(what + ".md");
    ASSERT_EQ(RunCli("docs " + what + " --out " + out).exit_code, 0);
    // Another working directory, a narrow terminal and another temporary directory: the
    // same text.
    const auto r = RunCli("docs " + what, "cd " + dir_.string() + " && COLUMNS=31 TMPDIR=/var/tmp",
                          "/dev/null");
    ASSERT_EQ(r.exit_code, 0);
    EXPECT_EQ(r.out, ReadFile(out)) << what;
  }
}

TEST_F(DocsReference, EveryCommandHasASection) {
  const std::string cli = ReadFile(fs::path(RLT_SOURCE_DIR) / "docs" / "cli.md");
  for (const std::string command :
       {"## `rltrade train`", "## `rltrade bench env`", "## `rltrade retrieval synth`",
        "## `rltrade docs config`", "## `rltrade exchange-sim`"}) {
    EXPECT_NE(cli.find(command + "\n"), std::string::npos) << command;
  }
}

TEST_F(DocsReference, AnOutThatIsADirectoryIsRefusedAndNothingIsWritten) {
  fs::create_directory(Path("taken"));
  const auto r = RunCli("docs config --out " + Path("taken"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find(Path("taken")), std::string::npos) << r.out;
  EXPECT_TRUE(fs::is_directory(Path("taken")));
  EXPECT_TRUE(fs::is_empty(Path("taken")));
}

TEST_F(DocsReference, AMissingDirectoryIsRefusedNamingThePath) {
  const auto r = RunCli("docs cli --out " + Path("no/such/dir/cli.md"));
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("no/such/dir"), std::string::npos) << r.out;
}

}  // namespace
