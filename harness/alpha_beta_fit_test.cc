// The least-squares fit behind `reshard calibrate` (harness/alpha_beta_fit.h), on
// synthetic timings made from known parameters with spec §6.2's formulas.
#include "harness/alpha_beta_fit.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace reshard {
namespace {

using ::testing::HasSubstr;

constexpr StepKind kKinds[] = {StepKind::kAllGather, StepKind::kReduceScatter, StepKind::kAllReduce,
                               StepKind::kAllToAll};

// Every kind on 2, 4 and 8 ranks at 4 KiB .. 4 MiB, timed exactly on `link`,
// each time scaled by `noise(i)`.
template <typename Noise>
std::vector<TimedCollective> Synthetic(const LinkProfile& link, Noise noise) {
  std::vector<TimedCollective> samples;
  for (StepKind kind : kKinds) {
    for (int64_t n : {2, 4, 8}) {
      for (double bytes = 4096; bytes <= 4 << 20; bytes *= 4) {
        TimedCollective s{kind, n, bytes, 0};
        s.time_us = ModeledTimeUs(s, link) * noise(samples.size());
        samples.push_back(s);
      }
    }
  }
  return samples;
}

TEST(AlphaBetaFitTest, RecoversExactParameters) {
  const LinkProfile truth{35, 1.5};
  const std::vector<TimedCollective> samples = Synthetic(truth, [](size_t) { return 1.0; });
  const LinkProfile fit = *FitLink(samples);
  EXPECT_NEAR(fit.alpha_us, 35, 1e-6);
  EXPECT_NEAR(fit.beta_gbps, 1.5, 1e-9);
  EXPECT_NEAR(RmsRelativeError(samples, fit), 0, 1e-9);
}

// +-10% alternating noise: the fit stays within a few percent of the truth,
// and its RMS error is about the noise.
TEST(AlphaBetaFitTest, NoisyTimingsFitCloseToTheTruth) {
  const LinkProfile truth{20, 4};
  const std::vector<TimedCollective> samples =
      Synthetic(truth, [](size_t i) { return i % 2 ? 1.1 : 0.9; });
  const LinkProfile fit = *FitLink(samples);
  EXPECT_NEAR(fit.alpha_us, 20, 20 * 0.05);
  EXPECT_NEAR(fit.beta_gbps, 4, 4 * 0.05);
  EXPECT_NEAR(RmsRelativeError(samples, fit), 0.1, 0.01);
}

// Timings that would need a negative latency: alpha is clamped at 0 and
// beta refitted alone, which pure bandwidth timings match exactly.
TEST(AlphaBetaFitTest, NegativeLatencyIsClampedToZero) {
  const std::vector<TimedCollective> samples =
      Synthetic(LinkProfile{0, 2}, [](size_t) { return 1.0; });
  const LinkProfile fit = *FitLink(samples);
  EXPECT_EQ(fit.alpha_us, 0);
  EXPECT_NEAR(fit.beta_gbps, 2, 1e-9);
}

TEST(AlphaBetaFitTest, TimesThatDoNotGrowWithSizeHaveNoBandwidth) {
  std::vector<TimedCollective> samples;
  for (double bytes : {4096.0, 65536.0, 1048576.0}) {
    samples.push_back({StepKind::kAllGather, 2, bytes, 1000.0 - bytes / 2048});
  }
  EXPECT_THAT(FitLink(samples).status().message(), HasSubstr("larger --sizes"));
}

TEST(AlphaBetaFitTest, RejectsNoSamplesAndNonPositiveTimes) {
  EXPECT_FALSE(FitLink({}).ok());
  const TimedCollective zero{StepKind::kAllGather, 2, 4096, 0};
  EXPECT_THAT(FitLink({zero}).status().message(), HasSubstr("need > 0 us"));
}

}  // namespace
}  // namespace reshard
