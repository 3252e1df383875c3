// The run's data record (data_record.h): the JSON round trip, hostile files naming the
// field, and the check's rules on bars built here (a changed price, a removed bar, a
// session cut at the file's start, appended sessions, another symbol).
#include "train/data_record.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/sha256.h"
#include "core/status_test_util.h"
#include "testing/testing.h"

namespace rlt::train {
namespace {

// Three sessions of four 5-minute bars from 2024-01-02 (UTC), symbol "XYZ".
market::Bars MakeBars() {
  market::Bars b;
  b.symbol = "XYZ";
  const int32_t dates[3] = {20240102, 20240103, 20240104};
  const int64_t day0 = 1704186000;  // 2024-01-02T09:00:00Z
  for (int d = 0; d < 3; ++d) {
    market::Session s;
    s.date = dates[d];
    s.begin = static_cast<int32_t>(b.size());
    for (int i = 0; i < 4; ++i) {
      b.time.push_back(day0 + d * 86400 + i * 300);
      b.utc_offset.push_back(0);
      const double p = 100.0 + d + 0.1 * i;
      b.open.push_back(p);
      b.high.push_back(p + 0.05);
      b.low.push_back(p - 0.05);
      b.close.push_back(p + 0.01);
      b.volume.push_back(1000.0 + i);
      b.session.push_back(d);
      b.bar_in_session.push_back(i);
      b.last_in_session.push_back(i == 3);
    }
    s.end = static_cast<int32_t>(b.size());
    b.sessions.push_back(s);
  }
  return b;
}

class DataRecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = rlt::testing::NewScratchDir("rlt_data_record_");
    file_ = (dir_ / "bars.csv").string();
    rlt::testing::WriteFile(file_, "the bytes the file digest covers\n");
    Result<market::DateRange> train = market::DateRange::Parse("2024-01-02:2024-01-03");
    ASSERT_TRUE(train.ok());
    Result<DataRecord> r = RecordFileData(file_, MakeBars(), "", true, {*train});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    record_ = *r;
    record_.origin = "RUN/data.json";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  Status Check(const market::Bars& bars, bool symbol_column = true, RecordCheck check = {}) {
    notes_.clear();
    return CheckAgainstRecord(record_, bars, "new.csv", symbol_column, check, &notes_);
  }
  std::filesystem::path dir_;
  std::string file_;
  DataRecord record_;
  std::vector<std::string> notes_;
};

TEST_F(DataRecordTest, RecordsTheFileAndTheTrainingSessionsOnly) {
  const FileRecord& f = record_.files.at(0);
  EXPECT_EQ(f.sha256, Sha256Hex("the bytes the file digest covers\n"));
  EXPECT_EQ(f.size, 33u);
  EXPECT_EQ(f.symbols, std::vector<std::string>{"XYZ"});
  EXPECT_EQ(f.symbol_source, "column");
  EXPECT_EQ(f.bar_seconds, 300);
  ASSERT_EQ(f.sessions.size(), 2u);  // the third session is outside the training range
  EXPECT_EQ(f.sessions[1].date, 20240103);
  EXPECT_EQ(f.sessions[1].bars, 4);
  // Without a symbol column or [data] symbol the file names no symbol.
  Result<DataRecord> none = RecordFileData(file_, MakeBars(), "", false, {});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->files[0].symbols.empty());
  EXPECT_EQ(none->files[0].symbol_source, "none");
}

TEST_F(DataRecordTest, JsonRoundTripsAndHostileFilesNameTheField) {
  const std::string path = (dir_ / "data.json").string();
  rlt::testing::WriteFile(path, DataRecordJson(record_));
  Result<DataRecord> back = LoadDataRecord(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(DataRecordJson(*back), DataRecordJson(record_));
  EXPECT_EQ(back->origin, path);

  std::string text = DataRecordJson(record_);
  const size_t at = text.find("\"bars\": 4");
  ASSERT_NE(at, std::string::npos) << text;
  rlt::testing::WriteFile(path, text.substr(0, at) + "\"bars\": \"four\"" + text.substr(at + 9));
  EXPECT_TRUE(IsError(LoadDataRecord(path), Status::Code::kInvalidArgument,
                      path + " files[0] sessions[0]: field 'bars' has the wrong type"));
  rlt::testing::WriteFile(path, "{\"format\": \"rltrade-data-record 9\"}");
  EXPECT_TRUE(IsError(LoadDataRecord(path), Status::Code::kInvalidArgument, "field 'format'"));
}

TEST_F(DataRecordTest, TheSameBarsPassAndAChangedTrainingSessionIsRefused) {
  EXPECT_TRUE(Check(MakeBars()).ok());
  market::Bars changed = MakeBars();
  changed.close[5] *= 1.000001;  // session 2024-01-03
  EXPECT_TRUE(IsError(Check(changed), Status::Code::kRefused,
                      "new.csv: session 2024-01-03 has other bars"));
  RecordCheck allow;
  allow.allow_data_change = true;
  EXPECT_TRUE(Check(changed, true, allow).ok());
  ASSERT_EQ(notes_.size(), 1u);
  EXPECT_NE(notes_[0].find("--allow-data-change"), std::string::npos);
  // A bar outside the training range may change.
  market::Bars later = MakeBars();
  later.close[9] *= 1.01;
  EXPECT_TRUE(Check(later).ok());
}

TEST_F(DataRecordTest, ARemovedBarIsRefusedButAFileCutInsideItsFirstSessionIsNot) {
  // Without the second session's last bar.
  market::Bars fewer = MakeBars();
  for (auto* column : {&fewer.open, &fewer.high, &fewer.low, &fewer.close, &fewer.volume}) {
    column->erase(column->begin() + 7);
  }
  fewer.time.erase(fewer.time.begin() + 7);
  fewer.sessions[1].end = 7;
  fewer.sessions[2].begin = 7;
  fewer.sessions[2].end = 11;
  EXPECT_TRUE(IsError(Check(fewer), Status::Code::kRefused,
                      "session 2024-01-03 has 3 bars, the run trained on 4"));
  // The file starts at the first session's third bar (cut there): the same data.
  market::Bars cut = MakeBars();
  cut.sessions[0].begin = 2;
  EXPECT_TRUE(Check(cut).ok());
  // Only the later sessions (a file of new dates): nothing to compare.
  market::Bars newer = MakeBars();
  newer.sessions.erase(newer.sessions.begin(), newer.sessions.begin() + 2);
  newer.close[1] += 1.0;  // a bar of a session no longer listed
  EXPECT_TRUE(Check(newer).ok());
}

TEST_F(DataRecordTest, AnotherSymbolIsRefusedUnlessAllowedOrUnnamed) {
  market::Bars other = MakeBars();
  other.symbol = "ABC";
  EXPECT_TRUE(IsError(Check(other), Status::Code::kRefused,
                      "new.csv holds bars of 'ABC'; the run trained on 'XYZ'"));
  RecordCheck allow;
  allow.allow_mismatch = true;
  EXPECT_TRUE(Check(other, true, allow).ok());
  // A file without a symbol column is named after the file: not compared.
  EXPECT_TRUE(Check(other, /*symbol_column=*/false).ok());
}

}  // namespace
}  // namespace rlt::train
