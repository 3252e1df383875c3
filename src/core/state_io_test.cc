// Tests of the binary state writer/reader and of Rng::state()/set_state().
#include "core/state_io.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "core/rng.h"
#include "core/status_test_util.h"

namespace rlt {
namespace {

TEST(StateIo, ReadsBackExactlyWhatWasWritten) {
  StateWriter w;
  w.Put<int32_t>(-7);
  w.Put<double>(-0.0);
  w.Put<double>(std::numeric_limits<double>::quiet_NaN());
  const float floats[3] = {1.5f, std::numeric_limits<float>::denorm_min(), -3.0f};
  w.PutArray(floats, 3);
  w.PutBool(true);
  w.PutString("cartpole");
  w.PutString("");
  const std::string bytes = w.Release();

  StateReader r(bytes, "test");
  int32_t i = 0;
  double zero = 1, nan = 0;
  float back[3] = {};
  bool flag = false;
  std::string_view s1, s2;
  ASSERT_TRUE(r.Get(&i, "i").ok());
  ASSERT_TRUE(r.Get(&zero, "zero").ok());
  ASSERT_TRUE(r.Get(&nan, "nan").ok());
  ASSERT_TRUE(r.GetArray(back, 3, "floats").ok());
  ASSERT_TRUE(r.GetBool(&flag, "flag").ok());
  ASSERT_TRUE(r.GetString(&s1, "s1").ok());
  ASSERT_TRUE(r.GetString(&s2, "s2").ok());
  EXPECT_TRUE(r.Finish().ok());
  EXPECT_EQ(i, -7);
  EXPECT_TRUE(zero == 0.0 && std::signbit(zero));
  EXPECT_TRUE(std::isnan(nan));
  for (int k = 0; k < 3; ++k) EXPECT_EQ(back[k], floats[k]);
  EXPECT_TRUE(flag);
  EXPECT_EQ(s1, "cartpole");
  EXPECT_EQ(s2, "");
}

TEST(StateIo, TruncationIsADataErrorNamingTheFieldAndTheSource) {
  StateWriter w;
  w.Put<int32_t>(1);
  const std::string bytes = w.Release();
  StateReader r(std::string_view(bytes).substr(0, 3), "envs.bin");
  int32_t v = 0;
  const Status s = r.Get(&v, "num_envs");
  ASSERT_EQ(s.code(), Status::Code::kDataError);
  EXPECT_NE(s.message().find("envs.bin"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("num_envs"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("truncated"), std::string::npos) << s.message();
}

TEST(StateIo, AStringLongerThanTheRestOfTheInputIsAnError) {
  StateWriter w;
  w.Put<uint64_t>(1000);  // a length with no bytes behind it
  w.Put<int32_t>(5);
  const std::string bytes = w.Release();
  StateReader r(bytes);
  std::string_view s;
  EXPECT_EQ(r.GetString(&s, "blob").code(), Status::Code::kDataError);
}

TEST(StateIo, ExpectReportsSavedAndCurrentValues) {
  StateWriter w;
  w.Put<int32_t>(4);
  w.PutString("cartpole");
  const std::string bytes = w.Release();
  StateReader r(bytes, "envs.bin");
  const Status s = r.Expect<int32_t>(8, "num_envs");
  ASSERT_EQ(s.code(), Status::Code::kDataError);
  EXPECT_NE(s.message().find("num_envs is 4 in the saved state but 8 here"), std::string::npos)
      << s.message();
  const Status id = r.ExpectString("pendulum", "env id");
  ASSERT_TRUE(IsError(id, Status::Code::kDataError, "'cartpole'"));
  EXPECT_NE(id.message().find("'pendulum'"), std::string::npos) << id.message();
}

TEST(StateIo, UnreadBytesAndNonBooleanBytesAreErrors) {
  StateWriter w;
  w.Put<uint8_t>(2);
  w.Put<uint8_t>(0);
  const std::string bytes = w.Release();
  StateReader r(bytes);
  bool b = false;
  EXPECT_EQ(r.GetBool(&b, "flag").code(), Status::Code::kDataError);
  EXPECT_EQ(r.remaining(), 1u);
  EXPECT_EQ(r.Finish().code(), Status::Code::kDataError);
}

TEST(RngState, RestoredGeneratorContinuesTheSameStreamIncludingTheSpareNormal) {
  Rng a(42);
  for (int i = 0; i < 5; ++i) a.NextU64();
  a.Normal();  // leaves a spare normal cached
  ASSERT_TRUE(a.state().has_spare);
  StateWriter w;
  w.PutRng(a.state());
  const std::string bytes = w.Release();
  StateReader r(bytes);
  RngState saved;
  ASSERT_TRUE(r.GetRng(&saved, "rng").ok());
  ASSERT_TRUE(r.Finish().ok());
  Rng b(7);  // another seed: everything must come from the saved state
  b.set_state(saved);
  for (int i = 0; i < 100; ++i) {
    const double na = a.Normal(), nb = b.Normal();
    EXPECT_EQ(std::memcmp(&na, &nb, sizeof(double)), 0) << i;
    EXPECT_EQ(a.NextU64(), b.NextU64()) << i;
  }
}

TEST(RngState, AllZeroStateIsRefused) {
  StateWriter w;
  w.PutRng(RngState{});
  const std::string bytes = w.Release();
  StateReader r(bytes);
  RngState s;
  EXPECT_EQ(r.GetRng(&s, "rng").code(), Status::Code::kDataError);
}

}  // namespace
}  // namespace rlt
