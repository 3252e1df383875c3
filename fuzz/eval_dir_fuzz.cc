// Fuzzes the readers of an evaluation directory (eval/eval_files.h: summary.json,
// equity.csv, daily_returns.csv, trades.csv) and the HTML report built from them
// (eval/report.h), as `rltrade report` and `eval` use them. Input: the four files in that
// order, separated by lines "%%" (a missing part is an empty file). They are written to a
// private temporary directory (removed at exit), then WriteReport reads them and writes
// report.html.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "eval/eval_files.h"
#include "eval/outputs.h"
#include "eval/report.h"
#include "fuzz_util.h"

namespace {

// The directory, created once; a plain array so that the exit handler may still read it.
char g_dir[] = "/tmp/rlt_eval_dir_fuzz.XXXXXX";

const std::string& Dir() {
  static const std::string kDir = [] {
    FUZZ_REQUIRE(::mkdtemp(g_dir) != nullptr, "mkdtemp failed");
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(g_dir, ec);
    });
    return std::string(g_dir);
  }();
  return kDir;
}

void WriteText(const std::string& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  FUZZ_REQUIRE(static_cast<bool>(out), "cannot write " + path);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const char* const kFiles[] = {rlt::eval::kSummaryFile, rlt::eval::kEquityFile,
                                       rlt::eval::kDailyReturnsFile, rlt::eval::kTradesFile};
  std::string_view rest = rlt::fuzz::AsText(data, size);
  for (const char* name : kFiles) {
    const size_t sep = rest.find("\n%%\n");
    WriteText(Dir() + "/" + name, rest.substr(0, sep));
    rest = sep == std::string_view::npos ? std::string_view() : rest.substr(sep + 4);
  }
  std::remove((Dir() + "/" + rlt::eval::kReportFile).c_str());
  rlt::Status s = rlt::eval::WriteReport(Dir());
  if (!s.ok()) FUZZ_REQUIRE(!s.message().empty(), "error without a message");
  return 0;
}
