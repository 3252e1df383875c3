// End-to-end tests of run directories that know their data: a config's relative paths are
// resolved against the config file's directory (a --set one against the current
// directory), the run records absolute paths and a fingerprint of its data (data.json),
// and eval, signal and paper work from any directory, refuse changed training-range data
// and bars of another symbol unless told (--allow-data-change, --allow-mismatch).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"

namespace rlt::cli {
namespace {

namespace fs = std::filesystem;
using testing_util::ReadFile;
using testing_util::RunCli;

// A file source of 40 synthetic sessions (symbol column SYN0), trained for 2,048 steps.
constexpr const char* kConfig = R"([run]
total_steps = 2048
seed = 4
threads = 1
[data]
source = "file"
file = "data/bars.csv"
timezone = "Asia/Kolkata"
[split]
train = "2023-01-02:2023-02-10"
test = "2023-02-13:2023-02-24"
[env]
id = "intraday"
action_mode = "target_position"
num_envs = 8
[algo]
n_steps = 64
batch_size = 256
n_epochs = 2
)";

// One run shared by the tests (training takes a couple of seconds).
class DataIdentityCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(rlt::testing::NewScratchDir("rlt_dataid_"));
    fs::create_directories(*dir_ / "project" / "data");
    fs::create_directories(*dir_ / "elsewhere");
    const std::string bars = (*dir_ / "project" / "data" / "bars.csv").string();
    auto made = RunCli("data synth --days 40 --seed 3 --out " + bars);
    ASSERT_EQ(made.exit_code, 0) << made.out;
    rlt::testing::WriteFile(*dir_ / "project" / "cfg.toml", kConfig);
    // Trained from another directory: the data path is relative to the config file.
    auto trained = RunCli("train ../project/cfg.toml --run-dir ../run --quiet",
                          "cd " + (*dir_ / "elsewhere").string() + " &&");
    ASSERT_EQ(trained.exit_code, 0) << trained.out;
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  static std::string Path(const std::string& name) { return (*dir_ / name).string(); }
  // Runs rltrade from the filesystem root, far from the run and its data.
  static testing_util::CmdResult FromRoot(const std::string& args) {
    return RunCli(args, "cd / &&");
  }
  // The lines of the run's bars file.
  static std::vector<std::string> BarLines() {
    return rlt::testing::Lines(ReadFile(*dir_ / "project" / "data" / "bars.csv"));
  }
  static void WriteLines(const std::string& path, const std::vector<std::string>& lines) {
    std::string text;
    for (const std::string& l : lines) text += l + "\n";
    rlt::testing::WriteFile(path, text);
  }
  static fs::path* dir_;
};
fs::path* DataIdentityCli::dir_ = nullptr;

TEST_F(DataIdentityCli, TheRunRecordsAbsolutePathsAndAFingerprintOfItsData) {
  const std::string bars = fs::canonical(Path("project/data/bars.csv")).string();
  EXPECT_NE(ReadFile(Path("run/config.toml")).find("file = \"" + bars + "\""), std::string::npos)
      << ReadFile(Path("run/config.toml"));
  const auto record = nlohmann::json::parse(ReadFile(Path("run/data.json")));
  const auto& f = record["files"][0];
  EXPECT_EQ(f["path"], bars);
  EXPECT_EQ(f["size"].get<uint64_t>(), fs::file_size(bars));
  // The whole-file digest is the one coreutils prints.
  auto sum = RunCli("", "sha256sum '" + bars + "' | cut -c1-64 #");
  ASSERT_EQ(sum.exit_code, 0) << sum.out;
  EXPECT_EQ(f["sha256"].get<std::string>() + "\n", sum.out);
  EXPECT_EQ(f["symbols"], nlohmann::json({"SYN0"}));
  EXPECT_EQ(f["bar_seconds"], 300);
  EXPECT_EQ(f["timezone"], "Asia/Kolkata");
  // One hash per training session: the weekdays 2023-01-02 .. 2023-02-10 (30 sessions).
  EXPECT_EQ(f["sessions"].size(), 30u);
  EXPECT_EQ(f["sessions"][0]["date"], "2023-01-02");
  // The record is covered by the run's MANIFEST.
  EXPECT_NE(ReadFile(Path("run/MANIFEST")).find(" data.json\n"), std::string::npos);
}

// The record is one of the run's files: an edited data.json is refused by its MANIFEST
// before it is read.
TEST_F(DataIdentityCli, AnEditedRecordIsRefusedByTheManifest) {
  std::string record = ReadFile(Path("run/data.json"));
  const size_t at = record.find("\"bars\": 75");
  ASSERT_NE(at, std::string::npos) << record;
  record.replace(at, 11, "\"bars\": 74");
  rlt::testing::WriteFile(Path("run/data.json"), record);
  auto eval = FromRoot("eval " + Path("run") + " --range test");
  EXPECT_NE(eval.exit_code, 0);
  EXPECT_NE(eval.out.find("data.json: checksum mismatch"), std::string::npos) << eval.out;
}

TEST_F(DataIdentityCli, EvalAndSignalWorkFromAnyDirectory) {
  auto eval = FromRoot("eval " + Path("run") + " --range test --json");
  ASSERT_EQ(eval.exit_code, 0) << eval.out;
  auto signal = FromRoot("signal " + Path("run") + " --bars " + Path("project/data/bars.csv"));
  EXPECT_EQ(signal.exit_code, 0) << signal.out;
}

TEST_F(DataIdentityCli, AMovedFileIsNamedAndFoundAgainWithData) {
  const std::string moved = Path("moved.csv");
  fs::copy_file(Path("project/data/bars.csv"), moved);
  fs::rename(Path("project/data/bars.csv"), Path("project/data/bars.csv.away"));
  auto missing = FromRoot("eval " + Path("run") + " --range test");
  fs::rename(Path("project/data/bars.csv.away"), Path("project/data/bars.csv"));
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.out.find("bars.csv: the run's training data is not there"), std::string::npos)
      << missing.out;
  EXPECT_NE(missing.out.find("--data FILE"), std::string::npos) << missing.out;
  auto found = FromRoot("eval " + Path("run") + " --range test --data " + moved + " --json");
  EXPECT_EQ(found.exit_code, 0) << found.out;
}

TEST_F(DataIdentityCli, ChangedTrainingDataIsRefusedNamingTheSessionUnlessAllowed) {
  std::vector<std::string> lines = BarLines();
  // Line 80 of the file: the 79th bar, in the second session (75 bars each): 2023-01-03.
  std::vector<std::string> cells = rlt::testing::Cells(lines[79]);
  cells[5] = std::to_string(std::stod(cells[5]) * 1.0001);  // close; high and low kept valid
  cells[3] = std::to_string(std::max(std::stod(cells[3]), std::stod(cells[5])));
  cells[4] = std::to_string(std::min(std::stod(cells[4]), std::stod(cells[5])));
  std::string row;
  for (const std::string& c : cells) row += (row.empty() ? "" : ",") + c;
  lines[79] = row;
  const std::string changed = Path("changed.csv");
  WriteLines(changed, lines);
  auto refused = FromRoot("eval " + Path("run") + " --range test --data " + changed);
  EXPECT_EQ(refused.exit_code, 2) << refused.out;
  EXPECT_NE(refused.out.find(changed + ": session 2023-01-03"), std::string::npos) << refused.out;
  EXPECT_NE(refused.out.find("--allow-data-change"), std::string::npos) << refused.out;
  auto allowed =
      FromRoot("eval " + Path("run") + " --range test --allow-data-change --data " + changed);
  EXPECT_EQ(allowed.exit_code, 0) << allowed.out;
  EXPECT_NE(allowed.out.find("used anyway (--allow-data-change)"), std::string::npos);
}

TEST_F(DataIdentityCli, AppendedBarsAndAFileCutInsideASessionAreTheSameData) {
  // The file without its first 40 rows (cut inside the first session), and with a session
  // appended after the recorded last bar (the last session's bars a week later).
  std::vector<std::string> lines = BarLines();
  std::vector<std::string> grown = {lines[0]};
  grown.insert(grown.end(), lines.begin() + 41, lines.end());
  size_t appended = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    const size_t at = lines[i].find("2023-02-24T");  // the last session
    if (at == std::string::npos) continue;
    grown.push_back(lines[i].replace(at, 10, "2023-03-03"));
    ++appended;
  }
  ASSERT_EQ(appended, 75u);
  const std::string grown_path = Path("grown.csv");
  WriteLines(grown_path, grown);
  auto ok = FromRoot("eval " + Path("run") + " --range 2023-02-13:2023-03-03 --data " + grown_path +
                     " --json");
  ASSERT_EQ(ok.exit_code, 0) << ok.out;
  EXPECT_NE(ok.out.find("2023-03-03"), std::string::npos);
}

TEST_F(DataIdentityCli, BarsOfAnotherSymbolAreRefusedEverywhereUnlessAllowed) {
  std::vector<std::string> lines = BarLines();
  for (size_t i = 1; i < lines.size(); ++i) {
    const size_t at = lines[i].find(",SYN0,");
    ASSERT_NE(at, std::string::npos) << lines[i];
    lines[i].replace(at, 6, ",AAPL,");
  }
  const std::string other = Path("aapl.csv");
  WriteLines(other, lines);
  auto eval = FromRoot("eval " + Path("run") + " --range test --data " + other);
  EXPECT_EQ(eval.exit_code, 2) << eval.out;
  EXPECT_NE(eval.out.find("holds bars of 'AAPL'; the run trained on 'SYN0'"), std::string::npos)
      << eval.out;
  auto allowed = FromRoot("eval " + Path("run") + " --range test --allow-mismatch --data " + other);
  EXPECT_EQ(allowed.exit_code, 0) << allowed.out;
  auto replay = FromRoot("paper " + Path("run") + " --feed replay:" + other + " --journal " +
                         Path("journal_replay") + " --quiet");
  EXPECT_EQ(replay.exit_code, 2) << replay.out;
  EXPECT_NE(replay.out.find("holds bars of 'AAPL'"), std::string::npos) << replay.out;
  // A stdin feed: every AAPL line is refused (skipped and reported), none is traded.
  auto stdin_feed =
      RunCli("paper " + Path("run") + " --feed stdin --journal " + Path("journal_stdin"),
             "cd / && head -n 200 " + other + " |");
  EXPECT_NE(stdin_feed.out.find("symbol 'AAPL' is not the run's symbol 'SYN0'"), std::string::npos)
      << stdin_feed.out;
  const std::string journal = ReadFile(Path("journal_stdin") + "/journal.jsonl");
  EXPECT_EQ(journal.find("\"type\":\"bar\""), std::string::npos) << journal;
}

}  // namespace
}  // namespace rlt::cli
