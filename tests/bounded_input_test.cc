// Bounded input (base/bounded_input.h) and typed limits (planner/steps/plan_limit.h),
// the repros of issue 19 / 20 at the library level: devices and oversized
// files are refused before or while reading, a named pipe without a writer is
// waited for with a word on stderr, long lines are skipped unkept,
// deep JSON is measured without a parser, a search over its edge budget
// ends with the limit as a payload, and a profile that would overflow a
// price is refused naming the field.
#include "base/bounded_input.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "absl/time/clock.h"
#include "formats/profile_json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "planner/costs/alpha_beta_cost_model.h"
#include "planner/layout/dist_spec.h"
#include "planner/planner.h"
#include "tests/util/spec_helpers.h"
#include "tests/util/test_util.h"

namespace reshard {
namespace {

using ::testing::HasSubstr;

TEST(BoundedInputTest, DevicesAreRefusedBeforeReading) {
  const absl::StatusOr<std::string> zero = ReadBoundedFile("/dev/zero", 1 << 20);
  EXPECT_THAT(zero.status().message(), HasSubstr("/dev/zero: not a regular file or a pipe"));
}

// Issue 44: a FIFO nobody writes to blocked without a word.
TEST(BoundedInputTest, ANamedPipeWithoutWriterIsWaitedForAndSaidSo) {
  const std::string path = test_util::WriteTempFile("fifo", "");
  ASSERT_EQ(unlink(path.c_str()), 0);
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  testing::internal::CaptureStderr();
  std::thread writer([&] {
    absl::SleepFor(absl::Milliseconds(1500));
    std::ofstream(path) << "{\"x\": 1}";
  });
  const absl::StatusOr<std::string> text = ReadBoundedFile(path, 100);
  writer.join();
  const std::string said = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "{\"x\": 1}");
  EXPECT_THAT(said, HasSubstr(": a named pipe with nothing written yet; waiting for its writer"));
}

TEST(BoundedInputTest, FilesOverTheLimitAreRefused) {
  const std::string path = test_util::WriteTempFile("big", std::string(2000, 'x'));
  EXPECT_TRUE(ReadBoundedFile(path, 2000).ok());
  EXPECT_THAT(ReadBoundedFile(path, 1999).status().message(), HasSubstr("over the limit of 1999"));
}

TEST(BoundedInputTest, LongLinesAreSkippedWithoutBeingKept) {
  std::istringstream in(absl::StrCat("ab\n", std::string(100, 'x'), "\ncd"));
  LineReader lines(in, 10);
  std::string line;
  EXPECT_EQ(lines.Next(&line), LineReader::kLine);
  EXPECT_EQ(line, "ab");
  EXPECT_EQ(lines.Next(&line), LineReader::kTooLong);
  EXPECT_EQ(line.size(), 10u);
  EXPECT_EQ(lines.Next(&line), LineReader::kLine);
  EXPECT_EQ(line, "cd");
  EXPECT_EQ(lines.number(), 3);
  EXPECT_EQ(lines.Next(&line), LineReader::kEnd);
}

// Lines longer than the reader's buffer (16 KiB) are read across refills:
// kept whole under the limit, cut at it above, and the next line intact.
TEST(BoundedInputTest, LinesLongerThanTheReadBufferStayWholeOrAreCutAtTheLimit) {
  const std::string kept(40000, 'k'), cut(70000, 'c');
  std::istringstream in(absl::StrCat(kept, "\n", cut, "\n\nlast"));
  LineReader lines(in, 50000);
  std::string line;
  EXPECT_EQ(lines.Next(&line), LineReader::kLine);
  EXPECT_EQ(line, kept);
  EXPECT_EQ(lines.Next(&line), LineReader::kTooLong);
  EXPECT_EQ(line, cut.substr(0, 50000));
  EXPECT_EQ(lines.Next(&line), LineReader::kLine);
  EXPECT_EQ(line, "");
  EXPECT_EQ(lines.Next(&line), LineReader::kLine);
  EXPECT_EQ(line, "last");
  EXPECT_EQ(lines.Next(&line), LineReader::kEnd);
  EXPECT_EQ(lines.number(), 4);
}

TEST(BoundedInputTest, NestingIsCountedOutsideStringsAndStopsEarly) {
  EXPECT_EQ(JsonNestingDepth(R"({"a": [1, {"b": "[[[["}]})", 100), 3);
  EXPECT_EQ(JsonNestingDepth(std::string(100000, '['), 32), 33);
  EXPECT_THAT(CheckJsonNesting("[[[", "p.json", 2).message(),
              HasSubstr("p.json: JSON nested deeper than 2 levels"));
}

// Issue 19: "[[[[..." crashed plan, batch and bench (SIGSEGV in the parser).
TEST(BoundedInputTest, ADeepProfileIsAnErrorNotACrash) {
  const std::string path = test_util::WriteTempFile("deep.json", std::string(200000, '['));
  EXPECT_THAT(ReadProfileFile(path).status().message(),
              HasSubstr("JSON nested deeper than 32 levels"));
  EXPECT_THAT(ReadProfileFile("/dev/zero").status().message(),
              HasSubstr("not a regular file or a pipe"));
}

// Issue 19: alpha 1e308 or beta 1e-300 printed "cost": inf; now refused,
// naming the field (spec §6.2's ranges).
TEST(ProfileRangeTest, PricesThatCouldOverflowAreRefusedNamingTheField) {
  CostProfile p = GlooLoopbackProfile();
  p.intra_host.alpha_us = 1e308;
  EXPECT_THAT(ValidateCostProfile(p).message(), HasSubstr("intra_host.alpha_us is 1e+308"));
  p = GlooLoopbackProfile();
  p.inter_host.beta_gbps = 1e-300;
  EXPECT_THAT(ValidateCostProfile(p).message(), HasSubstr("inter_host.beta_gbps is 1e-300"));
  p = GlooLoopbackProfile();
  p.memory_gbps = 1e-7;
  EXPECT_THAT(ValidateCostProfile(p).message(), HasSubstr("memory_gbps"));
}

// Issue 19: on a mesh of eight 2s, P(sum)x8 -> S(0)..S(7) ran for minutes and
// grew past 2.5 GB. Now the edge budget ends it; since issue 44 with the
// cheapest plan known (pytorch mode's at worst, spec §5.2 item 9), the limit
// named in Plan::not_optimal.
TEST(SearchBudgetTest, AnEightDimSearchEndsAtItsEdgeBudget) {
  const DeviceMesh mesh = test_util::Mesh({2, 2, 2, 2, 2, 2, 2, 2});
  const std::vector<int64_t> shape = {256, 256, 256, 256, 2, 2, 2, 2};
  PlanOptions options;
  options.max_search_edges = 1000;
  const absl::StatusOr<Plan> plan =
      PlanRedistribution(test_util::Spec(mesh, "PPPPPPPP", shape),
                         test_util::Spec(mesh, "S(0)S(1)S(2)S(3)S(4)S(5)S(6)S(7)", shape), options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->mode, PlanMode::kNative);
  EXPECT_THAT(plan->not_optimal, HasSubstr("max_search_edges (1000)"));
}

TEST(SearchBudgetTest, EveryLimitIsTyped) {
  const DeviceMesh mesh = test_util::Mesh({2, 2});
  PlanOptions options{PlanMode::kPyTorch};
  options.algorithm = Algorithm::kGraph;
  options.max_expanded_states = 1;
  absl::StatusOr<Plan> plan =
      PlanRedistribution(test_util::Spec(mesh, "S(0)S(1)", {8, 8}),
                         test_util::Spec(mesh, "S(1)S(0)", {8, 8}), options);
  EXPECT_EQ(PlanLimitOf(plan.status()), PlanLimit::kMaxExpandedStates) << plan.status();
  PlanOptions memory;
  memory.max_memory = 1;
  plan = PlanRedistribution(test_util::Spec(mesh, "S(0)S(1)", {8, 8}),
                            test_util::Spec(mesh, "S(1)S(0)", {8, 8}), memory);
  EXPECT_EQ(PlanLimitOf(plan.status()), PlanLimit::kMaxMemory) << plan.status();
  PlanOptions bad;
  bad.max_search_edges = 0;
  plan = PlanRedistribution(test_util::Spec(mesh, "RR", {8, 8}),
                            test_util::Spec(mesh, "RR", {8, 8}), bad);
  EXPECT_THAT(plan.status().message(),
              HasSubstr("max_search_edges: must be 1 to 1073741824, got 0"));
  EXPECT_FALSE(PlanLimitOf(plan.status()).has_value());
}

}  // namespace
}  // namespace reshard
