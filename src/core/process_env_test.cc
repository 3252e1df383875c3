#include "core/process_env.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace rlt {
namespace {

// Sets or unsets one variable for the test's lifetime and restores it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_.c_str(), old_.c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

const char* Find(const char* name) {
  for (const EnvSetting* s = ThreadingEnvironment(); s->name != nullptr; ++s) {
    if (std::string(s->name) == name) return s->value;
  }
  return nullptr;
}

TEST(ThreadingEnvironment, MakesLibgompAndOpenBlasSleepWhenIdle) {
  // libgomp: PASSIVE = waiting threads do not spin. OpenBLAS: timeout 2^4 cycles, its least.
  ASSERT_NE(Find("OMP_WAIT_POLICY"), nullptr);
  EXPECT_STREQ(Find("OMP_WAIT_POLICY"), "PASSIVE");
  ASSERT_NE(Find("OPENBLAS_THREAD_TIMEOUT"), nullptr);
  EXPECT_STREQ(Find("OPENBLAS_THREAD_TIMEOUT"), "4");
}

TEST(ThreadingEnvironment, DefaultsOnlyWhatTheUserHasNotSet) {
  ScopedEnv omp("OMP_WAIT_POLICY", "active");
  ScopedEnv blas("OPENBLAS_THREAD_TIMEOUT", nullptr);
  EXPECT_STREQ(GetenvWithThreadingDefaults("OMP_WAIT_POLICY"), "active");
  EXPECT_STREQ(GetenvWithThreadingDefaults("OPENBLAS_THREAD_TIMEOUT"), "4");
  EXPECT_EQ(std::getenv("OPENBLAS_THREAD_TIMEOUT"), nullptr);  // the environment is unchanged
}

TEST(ThreadingEnvironment, OtherVariablesAreLookedUpAsLibcDoes) {
  ScopedEnv a("RLT_TEST_VAR", "x=1");
  ScopedEnv b("RLT_TEST_VA", nullptr);
  ScopedEnv c("RLT_TEST_VAR_LONGER", "no");
  EXPECT_STREQ(GetenvWithThreadingDefaults("RLT_TEST_VAR"), "x=1");
  EXPECT_EQ(GetenvWithThreadingDefaults("RLT_TEST_VA"), nullptr);  // a prefix is no match
  EXPECT_EQ(GetenvWithThreadingDefaults("RLT_TEST_UNSET"), nullptr);
  EXPECT_EQ(GetenvWithThreadingDefaults(nullptr), nullptr);
}

}  // namespace
}  // namespace rlt
