// harness/paired_rounds.h: bench's round-by-round comparison of two modes.
#include "harness/paired_rounds.h"

#include <vector>

#include "gtest/gtest.h"

namespace reshard {
namespace {

TEST(PairedRoundsTest, RatioIsTheMedianOfPerRoundRatiosNotOfMedians) {
  // Per round 10/5, 100/100, 30/10: ratios 2, 1, 3. The medians' ratio
  // would be 30 / 10 = 3.
  const PairedRounds p = ComparePaired({10, 100, 30}, {5, 100, 10});
  EXPECT_EQ(p.rounds, 3);
  EXPECT_DOUBLE_EQ(p.ratio_median, 2);
}

TEST(PairedRoundsTest, SecondFasterInEveryOneOfTwelveRoundsIsSignificant) {
  const PairedRounds p = ComparePaired(std::vector<double>(12, 2.0), std::vector<double>(12, 1.0));
  EXPECT_EQ(p.second_faster, 12);
  // Two-sided: 2 * (1/2)^12.
  EXPECT_NEAR(p.sign_test_p, 2.0 / 4096, 1e-12);
}

TEST(PairedRoundsTest, TwelveOfFifteenRoundsGiveTheBinomialTail) {
  std::vector<double> first(15, 2.0), second(15, 1.0);
  for (int r = 0; r < 3; ++r) second[r] = 3.0;  // first faster in 3 rounds
  const PairedRounds p = ComparePaired(first, second);
  EXPECT_EQ(p.second_faster, 12);
  // 2 * P(X <= 3), X ~ Binomial(15, 1/2) = 2 * (1 + 15 + 105 + 455) / 2^15.
  EXPECT_NEAR(p.sign_test_p, 2.0 * 576 / 32768, 1e-12);
}

TEST(PairedRoundsTest, EvenlySplitRoundsAreNotSignificant) {
  const PairedRounds p = ComparePaired({1, 2, 1, 2, 1, 2}, {2, 1, 2, 1, 2, 1});
  EXPECT_EQ(p.second_faster, 3);
  EXPECT_DOUBLE_EQ(p.sign_test_p, 1);
}

TEST(PairedRoundsTest, TiesAreLeftOutOfTheSignTest) {
  // 4 rounds where second is faster, 6 ties: as 4 of 4.
  std::vector<double> first = {2, 2, 2, 2, 1, 1, 1, 1, 1, 1};
  std::vector<double> second = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  const PairedRounds p = ComparePaired(first, second);
  EXPECT_EQ(p.ties, 6);
  EXPECT_NEAR(p.sign_test_p, 2.0 / 16, 1e-12);
}

TEST(PairedRoundsTest, AModeThatStoppedEarlyComparesOnlyTheRoundsBothRan) {
  const PairedRounds p = ComparePaired({3, 3, 3}, {1});
  EXPECT_EQ(p.rounds, 1);
  EXPECT_EQ(p.second_faster, 1);
  EXPECT_TRUE(PairedSummary("a", {}, "b", {1}).empty());
}

TEST(PairedRoundsTest, SummaryNamesBothModesAndTheCounts) {
  const std::string s = PairedSummary("pytorch", {2, 2, 2}, "native", {1, 1, 3});
  EXPECT_NE(s.find("pytorch median / native median: 2.000"), std::string::npos) << s;
  EXPECT_NE(s.find("native faster in 2 of 3 rounds"), std::string::npos) << s;
}

}  // namespace
}  // namespace reshard
