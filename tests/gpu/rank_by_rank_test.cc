// The one-GPU harness of tests/gpu (rank_by_rank.h), run on the host engine
// in the default build: the cases it selects need no communication, pass
// against the ground truth, and a plan that does communicate is refused
// rather than silently mis-executed.
#include "tests/gpu/rank_by_rank.h"

#include <cstring>
#include <set>
#include <utility>

#include "gtest/gtest.h"

namespace reshard {
namespace {

Transfer HostTransfer(HostCopyEngine& engine) {
  auto copy = [&engine](const LocalTensor& t) -> absl::StatusOr<LocalTensor> {
    absl::StatusOr<LocalTensor> out = engine.Allocate(t.dtype(), t.shape());
    if (!out.ok()) return out.status();
    if (t.nbytes() > 0) std::memcpy(out->data(), t.data(), static_cast<size_t>(t.nbytes()));
    return out;
  };
  return Transfer{copy, copy};
}

// The same cases as cuda_redistribute_test's (seeds from 1) and
// cuda_allocator_test's (seeds from 1000).
TEST(RankByRank, SelectedCasesNeedNoCommunicationAndMatchTheGroundTruth) {
  std::vector<PreparedCase> cases = LocalOnlyCases(200, 8, 1, 50000);
  ASSERT_EQ(cases.size(), 200u);
  std::set<DType> dtypes;
  for (const PreparedCase& p : cases) dtypes.insert(p.spec_case.dtype);
  // Every dtype RandomCase draws: all but bool (cuda_copy_engine_test has it).
  EXPECT_EQ(dtypes.size(), 9u);
  std::vector<PreparedCase> more = LocalOnlyCases(20, 8, 1000, 20000);
  ASSERT_EQ(more.size(), 20u);
  for (PreparedCase& p : more) cases.push_back(std::move(p));
  HostCopyEngine engine;
  int with_steps_on_large_dims = 0;
  for (const PreparedCase& p : cases) {
    EXPECT_TRUE(NeedsNoCommunication(p.plan, p.src.mesh()));
    for (const TransformInfo& info : p.plan.steps) {
      if (p.src.mesh().GroupSize(info.step.group) > 1) {
        ++with_steps_on_large_dims;
        break;
      }
    }
    const CaseReport r = VerifyRankByRank(p, engine, HostTransfer(engine));
    EXPECT_EQ(r.outcome, Outcome::kPassed) << p.spec_case.CommandLine() << "\n" << r.detail;
  }
  // The selection is not only plans on size-1 dims, which move nothing.
  EXPECT_GT(with_steps_on_large_dims, 10);
}

TEST(RankByRank, APlanThatCommunicatesIsRefused) {
  VerifyCase c;
  c.mesh = {4};
  c.shape = {13, 8};
  c.src = "S(0)";
  c.dst = "R";
  absl::StatusOr<PreparedCase> p = Prepare(c);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_FALSE(NeedsNoCommunication(p->plan, p->src.mesh()));
  HostCopyEngine engine;
  const CaseReport r = VerifyRankByRank(*p, engine, HostTransfer(engine));
  EXPECT_EQ(r.outcome, Outcome::kFailed);
  EXPECT_NE(r.detail.find("cannot communicate"), std::string::npos) << r.detail;
}

}  // namespace
}  // namespace reshard
