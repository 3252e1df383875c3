// Tests of the native PPO loss (no LibTorch): its gradients against central finite
// differences of the double-precision reference, and a single sample's advantage.
#include "native/ppo_loss.h"

#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "core/rng.h"
#include "native/test_util.h"

namespace rlt::native {
namespace {

using testing_util::LossData;
using testing_util::RandomLossData;
using testing_util::ToDouble;

TEST(PpoLoss, GradientsMatchFiniteDifferencesOfTheDoubleReference) {
  Rng rng(4);
  for (const PpoLossSettings s :
       {PpoLossSettings{0.2, 0.0, 0.0, 0.5, true}, PpoLossSettings{0.1, 0.2, 0.01, 0.7, true},
        PpoLossSettings{0.3, 0.0, 0.05, 0.5, false}}) {
    LossData d = RandomLossData(37, rng);
    std::vector<float> dv(d.batch), dlp(d.batch), dent(d.batch);
    const PpoLossTerms t = PpoLoss(d.batch, d.Inputs(), s, dv.data(), dlp.data(), dent.data());
    std::vector<std::vector<double>> in = {ToDouble(d.values),        ToDouble(d.log_probs),
                                           ToDouble(d.entropy),       ToDouble(d.old_values),
                                           ToDouble(d.old_log_probs), ToDouble(d.advantages),
                                           ToDouble(d.returns)};
    auto loss = [&]() {
      return PpoLossReference(d.batch,
                              {in[0].data(), in[1].data(), in[2].data(), in[3].data(), in[4].data(),
                               in[5].data(), in[6].data()},
                              s);
    };
    const PpoLossTerms ref = loss();
    EXPECT_NEAR(t.loss, ref.loss, 1e-5 * std::fabs(ref.loss));
    EXPECT_NEAR(t.policy_loss, ref.policy_loss, 1e-5 * std::fabs(ref.policy_loss) + 1e-7);
    EXPECT_NEAR(t.value_loss, ref.value_loss, 1e-5 * std::fabs(ref.value_loss));
    EXPECT_NEAR(t.entropy_loss, ref.entropy_loss, 1e-5 * std::fabs(ref.entropy_loss) + 1e-7);
    EXPECT_NEAR(t.approx_kl, ref.approx_kl, 1e-5 * std::fabs(ref.approx_kl) + 1e-7);
    EXPECT_EQ(t.clip_fraction, ref.clip_fraction);
    EXPECT_GT(ref.clip_fraction, 0.0);  // the clipped branch is exercised
    const std::vector<std::pair<int, std::vector<float>*>> wrt = {{0, &dv}, {1, &dlp}, {2, &dent}};
    for (const auto& [which, grad] : wrt) {
      for (int i = 0; i < d.batch; ++i) {
        const double h = 1e-6, x0 = in[which][i];
        in[which][i] = x0 + h;
        const double up = loss().loss;
        in[which][i] = x0 - h;
        const double down = loss().loss;
        in[which][i] = x0;
        const double fd = (up - down) / (2 * h);
        EXPECT_NEAR((*grad)[i], fd, 2e-5 * std::fabs(fd) + 1e-6)
            << "input " << which << " sample " << i;
      }
    }
  }
}

TEST(PpoLoss, OneSampleSkipsAdvantageNormalisation) {
  Rng rng(5);
  LossData d = RandomLossData(1, rng);
  d.log_probs[0] = d.old_log_probs[0];  // ratio 1
  const PpoLossTerms t = PpoLoss(1, d.Inputs(), PpoLossSettings{}, nullptr, nullptr, nullptr);
  EXPECT_NEAR(t.policy_loss, -d.advantages[0], 1e-6 * std::fabs(d.advantages[0]));
}

}  // namespace
}  // namespace rlt::native
