// formats/result_json.h: how a cost is written (batch, plan --format json, costs).
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>

#include "formats/result_json.h"
#include "gtest/gtest.h"

namespace reshard {
namespace {

TEST(FormatCostTest, WritesPythonsReprOfTheDouble) {
  EXPECT_EQ(FormatCost(7.202718569887132), "7.202718569887132");
  EXPECT_EQ(FormatCost(0.0), "0.0");
  EXPECT_EQ(FormatCost(2.0), "2.0");
  EXPECT_EQ(FormatCost(1e-05), "1e-05");
  EXPECT_EQ(FormatCost(1e300), "1e+300");
}

TEST(FormatCostTest, AppendCostAppendsWhatFormatCostReturnsAndReadsBack) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> exponent(-8, 12);
  std::string out = "[";
  for (int i = 0; i < 1000; ++i) {
    const double cost = std::pow(10.0, exponent(rng));
    const size_t before = out.size();
    AppendCost(cost, &out);
    const std::string written = out.substr(before);
    EXPECT_EQ(written, FormatCost(cost));
    EXPECT_EQ(std::strtod(written.c_str(), nullptr), cost) << written;
    out += ',';
  }
  EXPECT_EQ(out[0], '[');
}

}  // namespace
}  // namespace reshard
